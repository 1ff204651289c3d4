"""The best answer on the Ask and call pages: a "best" button on each column, "none was good" and withdrawing the
pick above them, and the form action that posts the pick (POST /bench/panels/{id}/best)."""
from __future__ import annotations

from urllib.parse import quote

from ..errors import BadRequest
from .apicall import call, post
from .markup import Html, html
from .web import Done, safe_local
from .widgets import post_button


def best_button(frame, panel: str, seat: dict, best: dict | None, back: str) -> Html:
    """The column's "best" button; the picked column says so (pressing another seat's moves the pick)."""
    if seat["status"] != "ok":
        return Html("")
    if best and best.get("seat") == seat.get("seat"):
        return html('<p class="best-picked"><strong>\u2713 Picked as the best answer</strong></p>')
    return html('<div class="best-pick">$button</div>', button=post_button(
        frame, "/calls/best", "Best answer", {"panel": panel, "seat": seat["seat"]}, back=back))


def pick_bar(frame, panel: str, best: dict | None, back: str) -> Html:
    """Above the columns: no answer was good, or the pick withdrawn."""
    none = post_button(frame, "/calls/best", "None was good", {"panel": panel, "seat": "none"}, back=back)
    if best is None:
        return none
    said = "no answer was good" if best.get("seat") is None else f"seat {best['seat']} is the best answer"
    return html('<span class="muted">Best pick: $said.</span> $other$withdraw', said=said,
                other=none if best.get("seat") is not None else "",
                withdraw=post_button(frame, "/calls/best", "Withdraw the pick", {"panel": panel, "seat": "withdraw"},
                                     back=back))


def pick(req, bench: object, form) -> Done:
    """A panel's best answer (a seat number, `none`: no answer was good, or `withdraw`)."""
    panel, seat = form.get("panel").strip(), form.get("seat").strip()
    if not panel:
        raise BadRequest("Say which ask's best answer this is.")
    path = f"/bench/panels/{quote(panel, safe='')}/best"
    back = safe_local(form.get("back")) or f"/calls/{quote(panel, safe='')}"
    if seat == "withdraw":
        call(req, "DELETE", path)
        return Done("Best pick withdrawn: its comparisons are gone.", back)
    if seat != "none" and not seat.isdigit():
        raise BadRequest("Choose a seat's answer as the best, or none.")
    done = post(req, path, {"seat": None if seat == "none" else int(seat)})
    said = "No answer was good: noted." if done["seat"] is None else \
        f"Seat {done['seat']} picked as the best answer."
    return Done(said, back, {"best": done})
