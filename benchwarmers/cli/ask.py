"""bench ask / bench verdict: ask a panel (answers to stdout, the seat table to stderr) and judge its seats."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..servicelink import CommandError
from ..words import plural
from . import terminal
from .attach import BodyLimit, check_size, read_bounded, read_file, refused_mid_send
from .output import emit_json, note, table
from .progress import TICK, PanelView, planned_seats, ticking

FMT = argparse.RawDescriptionHelpFormatter


def register(sub, parent) -> None:
    p = sub.add_parser("ask", parents=[parent], help="ask a collection's panel", formatter_class=FMT,
                       description="Ask every seat of a collection. Answers go to stdout under their headings; the "
                                   "table of seats with call ids goes to stderr, with the models passed over for "
                                   "an explore seat and why.",
                       epilog="examples:\n  bench ask core \"Where can this return a stale value?\" -f cache.py\n"
                              "  git diff | bench ask core \"Review this diff\" > review.md\n"
                              "  bench ask core \"Design a schema for ...\" --merged --with mercury\n"
                              "  bench ask core \"And the error handling?\" --continue last")
    p.add_argument("collection", help="the collection (or a model alias for a one-seat panel)")
    p.add_argument("prompt", nargs="?", default="", help="what to ask (piped stdin is the prompt, or added to it)")
    p.add_argument("-f", "--file", action="append", default=[], metavar="FILE", help="attach a file (repeatable)")
    p.add_argument("--merged", action="store_true", help="one merged answer (the seats stay in --json)")
    p.add_argument("--system", help="a system prompt for every seat")
    p.add_argument("--with", dest="with_models", type=names, action="extend", default=[], metavar="A,B",
                   help="extra models for this ask: a,b (repeatable)")
    p.add_argument("--continue", dest="follow", metavar="PANEL",
                   help="follow up a panel (its id, from the seat table; or last: the newest panel): each seat "
                        "continues its own thread")
    p.add_argument("--max-tokens", type=positive, metavar="N",
                   help=f"output tokens per seat, 1 to {MAX_TOKENS:,} (default: the service's default_max_tokens "
                        "setting)")
    p.set_defaults(func=run_ask)

    v = sub.add_parser("verdict", parents=[parent], help="judge one seat's answer, or one point", formatter_class=FMT,
                       description="Record whether a seat's answer was useful, and which of its claims were real "
                                   "or false; or judge one of a panel's points (--point): every seat that asserted "
                                   "or denied it gains a real or a false claim. A later verdict on the same call "
                                   "or point replaces this one.",
                       epilog="examples:\n  bench verdict 0OaKq3x7Xy3k9aQ2Lw4p --useful "
                              "--real \"the race in refresh()\" --false \"the SQL injection\"\n"
                              "  bench verdict --point pt_0OaKq3x7Xy3k9aQ2Lw4p --true --note \"checked cache.py\"\n"
                              "  bench verdict --point pt_0OaKq3x7Xy3k9aQ2Lw4p --withdraw\n"
                              "an id that begins with '-' (older records) goes after --:\n"
                              "  bench verdict --useful -- -Xy3k9aQ2Lw4p")
    v.add_argument("call", nargs="?", help="the call id from the seat table")
    v.add_argument("--point", metavar="P", help="a point's id (bench points PANEL lists them) instead of a call")
    group = v.add_mutually_exclusive_group()
    group.add_argument("--useful", dest="useful", action="store_true", default=None)
    group.add_argument("--not-useful", dest="useful", action="store_false")
    group.add_argument("--true", dest="holds", action="store_true", default=None,
                       help="with --point: the point's claim holds")
    group.add_argument("--cant-tell", action="store_true", help="with --point: it cannot be told (no claims)")
    group.add_argument("--withdraw", action="store_true", help="with --point: withdraw its verdict (its claims go)")
    v.add_argument("--real", action="append", default=[], metavar="TEXT", help="a claim that checked out")
    v.add_argument("--false", action="append", nargs="?", const=NO_TEXT, default=[], metavar="TEXT",
                   help="a claim that was wrong (repeatable); with --point and no TEXT: the point's claim is false")
    v.add_argument("--note", help="a note")
    v.add_argument("--from-points", action="store_true",
                   help="with a call: the verdict is what its judged points proposed (the record says so)")
    v.set_defaults(func=run_verdict)


MAX_TOKENS = 10 ** 7      # far past any model's output; a bigger number is a typo, not a budget
NO_TEXT = ""              # a bare --false: with --point, the point's claim is false


def positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:       # also a number of thousands of digits, which int() refuses
        number = 0
    if not 1 <= number <= MAX_TOKENS:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1 and at most {MAX_TOKENS:,}, "
                                         f"not {value!r}")
    return number


def names(value: str) -> list[str]:
    """--with's models: a,b. An empty name (--with '', --with a,,b) would be dropped unseen; it is refused."""
    parts = [part.strip() for part in value.split(",")]
    if not all(parts):
        raise argparse.ArgumentTypeError(f"needs model names, comma-separated (a,b), not {value!r}")
    return parts


def build_prompt(args, limit: BodyLimit) -> str:
    prompt = args.prompt or ""
    used = len(prompt.encode("utf-8")) + len((args.system or "").encode("utf-8"))
    piped = ""
    if terminal.piped():
        raw = read_bounded(terminal.read_bytes, "The text piped in", limit, used)
        used += len(raw)
        piped = raw.decode("utf-8-sig", "replace")
    if piped.strip():
        prompt = f"{prompt}\n\n<stdin>\n{piped.rstrip()}\n</stdin>" if prompt else piped
    for name in args.file:
        text = read_file(name, limit, used)
        used += len(text.encode("utf-8"))
        prompt += f"\n\n<file name=\"{Path(name).name}\">\n{text.rstrip()}\n</file>"
    if not prompt.strip():
        raise CommandError("Nothing to ask: give a prompt, pipe one in, or attach files with -f.", 2)
    return prompt


def run_ask(args, client) -> int:
    limit = BodyLimit(client)
    messages = ([{"role": "system", "content": args.system}] if args.system else [])
    messages.append({"role": "user", "content": build_prompt(args, limit)})
    body: dict[str, Any] = {"messages": messages}
    if args.with_models:
        body["bench"] = {"with": args.with_models}
    if args.follow:
        body.setdefault("bench", {})["continue"] = continued_panel(client, args.follow)
    if args.max_tokens:
        body["max_tokens"] = args.max_tokens
    size = check_size(body, limit)
    try:
        reply = post_ask(client, args.collection, args.merged, body if args.json else {**body, "stream": True})
    except CommandError as e:
        raise refused_mid_send(client, e, size) from None
    if args.json:
        emit_json(reply)
        return 0
    bench = stream_ask(reply, args)
    seats = bench.get("seats") or []
    note()
    table(["seat", "kind", "model", "status", "seconds", "call"],
          [[s.get("seat"), s.get("kind"), s.get("model"), s.get("status"), s.get("seconds"), s.get("call")]
           for s in seats], out=sys.stderr)
    if bench.get("merge"):
        m = bench["merge"]
        note(f"merged by {m.get('model')} (call {m.get('call')}, {m.get('status')})")
    if bench.get("panel"):
        note(f"panel {bench['panel']}" + (f" (continues {bench['previous']})" if bench.get("previous") else "") +
             f"; follow up: bench ask {args.collection} \"...\" --continue {bench['panel']}")
    for passed in bench.get("passed_over") or []:
        note(f"passed over for an explore seat: {passed.get('model')} ({passed.get('reason')})")
    show_points(bench)
    unkept = bench.get("record")   # its records could not be kept: no call id to judge
    note(f"Not recorded: {unkept.get('why')}; nothing here can be judged." if unkept else
         "Judge a seat: bench verdict CALL --useful|--not-useful [--real TEXT] [--false TEXT]")
    return 0 if any(s.get("status") == "ok" for s in seats) else 1


def continued_panel(client, given: str) -> str:
    """The panel --continue names: its id, or `last`, the newest panel in the record (the admin API's history)."""
    if given != "last":
        return given
    try:
        items = client.get("/bench/history?per_page=20").get("items") or []
    except CommandError as e:
        raise CommandError(f"--continue last reads the history, which needs the admin API: {e}. "
                           "Give the panel's id instead (the seat table names it).", 2) from None
    panel = next((i.get("id") for i in items if i.get("kind") == "panel"), None)
    if not panel:
        raise CommandError("--continue last: no panel in the record yet; ask one first.", 2)
    return panel


def stream_ask(reply, args) -> dict:
    """Show the streamed panel so each seat's answer shows as soon as it finishes (in seat order when stdout is a
    file or a pipe), with a line on a terminal's stderr naming the seats still awaited; the `bench` data at the end."""
    view = PanelView(planned_seats(reply.headers.get("x-bench-seats")), args.merged, sys.stdout, sys.stderr,
                     ticks=sys.stderr.isatty(), in_order=not sys.stdout.isatty())
    chunks = ticking(reply, TICK, view.tick) if view.ticks else reply
    bench: dict = {}
    try:
        for chunk in chunks:
            choice = (chunk.get("choices") or [{}])[0]
            text = (choice.get("delta") or {}).get("content") or ""
            if text:
                view.text(text)
            bench = chunk.get("bench") or bench
    except CommandError:          # cut short (BENCHWARMERS_TIMEOUT, a dropped connection): what came, then why
        view.finish()
        note()
        table(["seat", "kind", "model", "status"], [[n, k, m, st] for n, m, k, st in view.so_far()], out=sys.stderr)
        raise
    finally:
        view.finish()
    return bench


def post_ask(client, name: str, merged: bool, body: dict):
    """Ask `name` as a collection; when the service has no such collection, as a model alias (one seat).
    The fallback costs requests only on the failure path, so a key's rate is spent once per ask.
    A streamed body gives a client.Stream of chunks (the request already accepted), else the reply."""
    def send(payload: dict):
        if payload.get("stream"):
            return client.stream("/v1/chat/completions", payload, gateway=True)
        return client.post("/v1/chat/completions", payload, gateway=True)

    if name.startswith("bench/") or "/" in name:
        model = name + (":merged" if merged and name.startswith("bench/") and not name.endswith(":merged") else "")
        return send({"model": model, **body})
    try:
        return send({"model": f"bench/{name}" + (":merged" if merged else ""), **body})
    except CommandError:
        listed = {m.get("id") for m in client.get("/v1/models", gateway=True).get("data") or []}
        if name not in listed or f"bench/{name}" in listed:
            raise
    return send({"model": name, **body})


def run_verdict(args, client) -> int:
    if args.point:
        return run_point_verdict(args, client)
    if args.call is None or args.useful is None or args.holds or args.cant_tell or args.withdraw \
            or NO_TEXT in args.false:
        raise CommandError("Give a call id and --useful or --not-useful (or --point P with --true, --false, "
                         "--cant-tell or --withdraw).", 2)
    body = {"call": args.call, "useful": args.useful, "real": args.real, "false": args.false}
    if args.note:
        body["note"] = args.note
    if args.from_points:
        body["from_points"] = True
    reply = client.post("/bench/verdict", body, gateway=True)
    if args.json:
        emit_json(reply)
    else:
        revised = " (revised)" if reply.get("revisions", 1) > 1 else ""
        note(f"Verdict recorded for {args.call}: {'useful' if args.useful else 'not useful'}{revised}.")
    return 0


def run_point_verdict(args, client) -> int:
    """--point P with --true, --false, --cant-tell or --withdraw."""
    said = [bool(args.holds), args.false == [NO_TEXT], args.cant_tell, args.withdraw]
    if args.call or args.useful is not None or args.real or args.from_points or sum(said) != 1 \
            or any(f != NO_TEXT for f in args.false):
        raise CommandError("A point's verdict is --point P and one of --true, --false, --cant-tell or --withdraw "
                         "(and --note); a call's is CALL --useful|--not-useful.", 2)
    path = f"/bench/points/{quote(args.point, safe='')}/verdict"
    if args.withdraw:
        reply = client.delete(path, gateway=True)
    else:
        holds = True if args.holds else None if args.cant_tell else False
        reply = client.post(path, {"true": holds, **({"note": args.note} if args.note else {})}, gateway=True)
    if args.json:
        emit_json(reply)
        return 0
    if args.withdraw:
        note(f"Verdict on point {args.point} withdrawn." if reply.get("withdrawn") else
             f"Point {args.point} had no verdict to withdraw.")
    else:
        word = {True: "true", False: "false", None: "can't tell"}[reply.get("true")]
        note(f"Point {args.point} judged {word}: {plural(len(reply.get('claims') or []), 'claim')} for the seats "
             "that took a side.")
    show_proposals(reply.get("proposals") or [])
    return 0


def show_points(bench: dict) -> None:
    """After the seat table: the points shown above (their ids) and how to judge one, or why there are none."""
    info = bench.get("points_info")
    if not info:
        return
    show_passed_over(info)
    if info.get("pending"):
        note(f"points: the referee {info.get('referee')} is still reading the answers; to see them: "
             f"bench points {bench.get('panel')} --wait 60")
        return
    if info.get("unavailable"):
        note(f"points: unavailable, {info['unavailable']}")
        return
    shown = bench.get("points") or []
    note(f"points: {len(shown)} shown of {info.get('found', len(shown))} the referee {info.get('referee')} found "
         f"(call {info.get('call')})")
    for n, p in enumerate(shown, 1):
        note(f"  {n}. {p.get('id')}  {p.get('claim')}")
    if shown:
        note("Judge a point once, for every seat that took a side: bench verdict --point P --true|--false")


def show_passed_over(info: dict) -> None:
    """The referees a collection or the settings name that this panel could not have, and why."""
    for n in info.get("passed_over") or []:
        note(f"passed over as referee: {n.get('model')} ({n.get('reason')})")


def show_proposals(proposals: list) -> None:
    """What the seats' judged points propose, and the one command that confirms each."""
    for p in proposals:
        flag = "--useful" if p.get("useful") else "--not-useful"
        note(f"seat {p.get('seat')} {p.get('model')}: {p.get('why')}; to confirm: bench verdict {p.get('call')} "
             f"{flag} --from-points")
