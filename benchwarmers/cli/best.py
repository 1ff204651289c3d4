"""bench best PANEL SEAT: a panel's best answer in one judgement (`none`: no answer was good; --withdraw takes the
pick back); the chosen seat beat each other seat that answered, and the ratings read those comparisons."""
from __future__ import annotations

import argparse

from ..servicelink import q
from .output import note, say, shown
from .parsers import command


def register(sub, parent) -> None:
    p = command(sub, parent, "best", "pick a panel's best answer (the ratings' comparisons)", run_best,
                description="The best answer of a panel, in one judgement: the chosen seat beat each other seat that "
                            "answered (GET /bench/rankings rates the models from these comparisons). `none` says no "
                            "answer was any good. A pick replaces the one before; on a blind panel it shows who sat "
                            "where.",
                example=("bench best p_0OaKq3x7Xy3k9aQ2Lw4p 2", "bench best p_0OaKq3x7Xy3k9aQ2Lw4p none",
                         "bench best p_0OaKq3x7Xy3k9aQ2Lw4p --withdraw"))
    p.add_argument("panel", help="the panel's id (bench ask's first line, the reply's bench.panel, X-Bench-Panel)")
    p.add_argument("seat", nargs="?", type=seat_number, default=MISSING,
                   help="the best answer's seat number, or none")
    p.add_argument("--withdraw", action="store_true", help="take the panel's pick back")


MISSING = object()      # no seat given (None is `none`: no answer was good)


def seat_number(text: str):
    if text.lower() == "none":
        return None
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seat number (1, 2, ...) or none")
    return int(text)


def run_best(args, client) -> int:
    path = f"/bench/panels/{q(args.panel)}/best"
    if args.withdraw:
        return shown(args, client.delete(path, gateway=True), lambda d: say(
            f"Panel {args.panel}: pick withdrawn." if d.get("withdrawn") else f"Panel {args.panel} had no pick."))
    if args.seat is MISSING:
        note("Give the best answer's seat (or none), or --withdraw: bench best PANEL SEAT")
        return 2
    return shown(args, client.post(path, {"seat": args.seat}, gateway=True), show_pick)


def show_pick(d: dict) -> None:
    if d.get("seat") is None:
        say(f"Panel {d.get('panel')}: no answer was good (no comparison made).")
    else:
        beat = ", ".join(c["loser"] for c in d.get("comparisons") or []) or "no other seat that answered"
        winner = (d.get("comparisons") or [{}])[0].get("winner", f"seat {d.get('seat')}")
        say(f"Panel {d.get('panel')}: seat {d.get('seat')} ({winner}) best; it beat {beat}.")
    for p in d.get("proposals") or []:
        flag = "--useful" if p.get("useful") else "--not-useful"
        note(f"seat {p.get('seat')} {p.get('model')}: {p.get('why')}; to confirm: bench verdict {p.get('call')} {flag}")
