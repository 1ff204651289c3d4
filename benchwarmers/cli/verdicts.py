"""bench verdicts pending: the seats' answers that still wait for a verdict (a key's own asks, else every one); and
`verdicts stop-hook`, the Claude Code plugin's reminder to judge them."""
from __future__ import annotations

import argparse
import sys
from urllib.parse import urlencode

from ..servicelink import CommandError
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
    aside = command(under, parent, "set-aside", "set the backlog aside as only tests", run_set_aside,
                    description="Sets aside, as only tests, the asks whose answers still wait for a verdict: every "
                                "one (--all), those asked before --older-than, or one --collection's (with "
                                "--older-than, that collection's older ones). Their answers and points stop waiting; "
                                "an ask's own page brings one back.",
                    example=("bench verdicts set-aside --all", "bench verdicts set-aside --older-than 7d",
                             "bench verdicts set-aside --collection core --older-than 2w"))
    aside.add_argument("--all", action="store_true", help="every answer waiting for a verdict")
    aside.add_argument("--older-than", type=span, metavar="SPAN", help="asked longer ago than this (30m, 12h, 7d, 2w)")
    aside.add_argument("--collection", metavar="NAME", help="only this collection's")
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


def span(text: str) -> float:
    """The moment SPAN ago (7d, 12h, ...)."""
    from .export import SPAN, moment
    if not SPAN.match(text.strip().lower()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a span such as 30m, 12h, 7d or 2w")
    return moment(text)


def run_set_aside(args, client) -> int:
    if args.all == bool(args.older_than is not None or args.collection):
        raise CommandError("Say which: --all, or --older-than SPAN and/or --collection NAME.", 2)
    body = {"all": True} if args.all else {k: v for k, v in (("before", args.older_than),
                                                             ("collection", args.collection)) if v is not None}
    data = client.post("/bench/pending/set-aside", body)
    if json_asked(args, data):
        return 0
    note(f"Set aside {plural(data.get('set_aside', 0), 'ask')} as only tests: their answers no longer wait for a "
         "verdict.")
    return 0


def run_stop_hook(args, client) -> int:
    from ..mcp.stophook import run
    if not terminal.piped():       # a person at a terminal: say so rather than wait for input
        sys.stderr.write("bench verdicts stop-hook reads a Claude Code Stop hook's input on stdin; pipe it in, "
                         "e.g. benchwarmers verdicts stop-hook < stop-input.json\n")
        return 2
    sys.stdout.write(run(terminal.read_all(), getattr(args, "url", None)))
    return 0
