"""bench points PANEL: a panel's points (where its seats disagree), each with its verdict, and what they propose; the
referee reads the answers after the reply, so `--wait` waits for them."""
from __future__ import annotations

import time

from ..servicelink import q
from .ask import show_passed_over, show_proposals
from .output import json_asked, note, say, table
from .parsers import command

WORD = {True: "true", False: "false", None: "can't tell"}


def register(sub, parent) -> None:
    p = command(sub, parent, "points", "a panel's points: where its seats disagree", run_points,
                description="The points the referee found in a panel's answers: each claim, the seats that assert it, "
                            "deny it or are silent, and its verdict. Judging one (bench verdict --point P "
                            "--true|--false) gives every seat that took a side a real or false claim.",
                example=("bench points p_0OaKq3x7Xy3k9aQ2Lw4p", "bench points p_0OaKq3x7Xy3k9aQ2Lw4p --wait 60",
                         "bench points p_0OaKq3x7Xy3k9aQ2Lw4p --json"))
    p.add_argument("panel", help="the panel's id (the reply's bench.panel, or X-Bench-Panel)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="while the referee is still reading the answers, wait up to this long for its points")


def sides(seats: list) -> str:
    return ",".join(str(s) for s in seats) or "-"


def fetched(args, client) -> dict:
    """The panel's points; with --wait, read again every second while the referee is still reading."""
    path = f"/bench/panels/{q(args.panel)}/points"
    end = time.monotonic() + max(args.wait, 0.0)
    data = client.get(path, gateway=True)
    while (data.get("info") or {}).get("pending") and time.monotonic() < end:
        time.sleep(min(1.0, max(end - time.monotonic(), 0.0)))
        data = client.get(path, gateway=True)
    return data


def run_points(args, client) -> int:
    data = fetched(args, client)
    if json_asked(args, data):
        return 0
    info = data.get("info")
    if info is None:
        note(f"Panel {args.panel} asked no referee (its collection's points are off): ask with bench/<c>:points.")
        return 0
    show_passed_over(info)
    if info.get("pending"):
        note(f"The referee {info.get('referee')} is still reading the answers of panel {args.panel}: ask again in a "
             f"moment, or wait for its points: bench points {args.panel} --wait 60")
        return 0
    if info.get("unavailable"):
        note(f"points: unavailable, {info['unavailable']}")
    points = data.get("points") or []
    if points:
        table(["point", "claim", "assert", "deny", "silent", "shown", "verdict"],
              [[p["id"], p["claim"], sides(p["assert"]), sides(p["deny"]), sides(p["silent"]),
                "yes" if p.get("shown") else "no",
                WORD[p["verdict"]["true"]] if p.get("verdict") else "-"] for p in points], fit=True)
        for p in points:
            for seat, quote in sorted(p.get("quotes", {}).items(), key=lambda kv: int(kv[0])):
                say(f"{p['id']} seat {seat}: \u201c{quote}\u201d")
    elif not info.get("unavailable"):
        note("The referee found no checkable point in the answers.")
    note(f"referee {info.get('referee')} (call {info.get('call')}); points shown: {info.get('mode')}")
    show_proposals(data.get("proposals") or [])
    if any(not p.get("verdict") for p in points):
        note("Judge a point: bench verdict --point P --true|--false [--note TEXT]")
    return 0
