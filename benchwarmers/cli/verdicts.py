"""bench verdicts pending: the seats' answers that still wait for a verdict (a key's own asks, else every one); and
`verdicts stop-hook`, the Claude Code plugin's reminder to judge them."""
from __future__ import annotations

import argparse
import sys
from urllib.parse import urlencode

from ..words import plural
from . import terminal
from .output import json_asked, note, table, when
from .parsers import command, verbs


def register(sub, parent) -> None:
    v = command(sub, parent, "verdicts", "answers still waiting for a verdict",
                description="Verdicts decide who gets seated; these answers have none yet.",
                example=("bench verdicts pending", "bench verdicts pending --limit 5 --json"))
    under = verbs(v, dest="action")
    command(under, parent, "pending", "list the answers without a verdict, newest first", run_pending,
            description="The points nobody judged yet, then the seats' answers nobody judged yet, each newest first up "
                        "to --limit, with how many there are: with BENCHWARMERS_KEY the key's own asks, with the admin "
                        "token (or none needed) every one.",
            example=("bench verdicts pending", "bench verdicts pending --limit 5 --json"),
            after="\n\nthen judge one: bench verdict CALL --useful|--not-useful"
            ).add_argument("--limit", type=limit, default=20,
                           help="at most this many points and this many answers (1 to 200, default 20)")
    command(under, parent, "stop-hook", "Claude Code's Stop hook: name this turn's unjudged answers", run_stop_hook,
            needs_client=False,
            description="Reads a Claude Code Stop hook's input on stdin. When the turn asked a panel (the MCP `ask` "
                        "tool) and some of its seats' answers have no verdict yet, prints the decision that keeps the "
                        "agent going once to judge them. Prints nothing and exits 0 when nothing waits, on the turn's "
                        "second stop, and when the input, the transcript or the service (5 seconds) cannot be read. "
                        "The Claude Code plugin runs it; BENCHWARMERS_KEY limits it to that key's asks.",
            example=("benchwarmers verdicts stop-hook < stop-input.json",))


def limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 200:
        raise argparse.ArgumentTypeError("give 1 to 200")
    return value


def run_pending(args, client) -> int:
    data = client.get("/bench/pending?" + urlencode({"limit": args.limit}), gateway=True)
    if json_asked(args, data):
        return 0
    items, points = data.get("pending") or [], data.get("points") or []
    if points:    # first: one judgement of a point counts for every seat that took a side
        table(["point", "panel", "claim", "assert", "deny"],
              [[p.get("id"), p.get("panel"), p.get("claim"), ",".join(map(str, p.get("assert") or [])) or "-",
                ",".join(map(str, p.get("deny") or [])) or "-"] for p in points], fit=True)
        total = data.get("points_total", len(points))
        more = f"; the newest {len(points)} shown" if total > len(points) else ""
        note(f"Points nobody judged: {total}{more}. Judge one: bench verdict --point P --true|--false\n")
    if not items:
        note("No answer is waiting for a verdict.")
        return 0
    table(["asked", "call", "collection", "seat", "model", "answer"],
          [[when(p.get("created")), p.get("call"), p.get("collection") or "-", p.get("seat"), p.get("model"),
            p.get("excerpt")] for p in items], fit=True)
    more = f"; the newest {len(items)} shown" if data.get("total", 0) > len(items) else ""
    reach = f" in the latest {data['looked_through']:,} calls" if data.get("total_capped") else ""
    note(f"Waiting for a verdict: {plural(data.get('total', len(items)), 'answer')}{reach}{more}. "
         "Judge one: bench verdict CALL --useful|--not-useful [--real TEXT] [--false TEXT]")
    return 0


def run_stop_hook(args, client) -> int:
    from ..mcp.stophook import run
    if not terminal.piped():       # a person at a terminal: say so rather than wait for input
        sys.stderr.write("bench verdicts stop-hook reads a Claude Code Stop hook's input on stdin; pipe it in, "
                         "e.g. benchwarmers verdicts stop-hook < stop-input.json\n")
        return 2
    sys.stdout.write(run(terminal.read_all(), getattr(args, "url", None)))
    return 0
