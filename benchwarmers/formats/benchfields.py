"""What the `bench` field of a request asks of a panel beyond the Ask itself: blind seats, and the panel a
follow-up continues (with the one seat it asks). Read the same way by the gateway's routes and the Ask page."""
from __future__ import annotations

import re

from ..canonical import Ask
from ..errors import BadRequest
from .base import get


def panel_options(body: dict, ask: Ask) -> None:
    """Set on `ask` what the body's `bench` field says of blindness and continuation (a 400 for a value out of
    shape). The field is read once for both: every gateway request comes through here."""
    bench = get(body, "bench", dict)
    if bench is None:   # nearly every request: neither asked for
        ask.blind, ask.continues, ask.only_seat = None, None, None
        return
    ask.blind = blind_wanted(bench)
    ask.continues, ask.only_seat = continuation(bench)


def blind_wanted(bench: dict) -> bool | None:
    """`"bench": {"blind": true}`: the panel names no model (Seat 1..N, in a random order) until it is judged. None:
    the collection's own choice."""
    return get(bench, "blind", bool, where="bench")


PANEL_ID = re.compile(r"^p_[A-Za-z0-9_-]{8,40}$")


def continuation(bench: dict) -> tuple[str | None, int | None]:
    """The panel a follow-up continues and the one seat it asks, when the request's `bench` field says: `{"continue":
    "<panel id>", "seat": N}` (each seat's thread is rebuilt from the record, so the client need not send it)."""
    panel = get(bench, "continue", str, where="bench")
    seat = get(bench, "seat", int, where="bench")
    if panel is not None and not PANEL_ID.match(panel):
        raise BadRequest(f"`bench.continue` must be a panel's id (p_...), not {panel[:80]!r}.",
                         "Send the id a panel's reply gave: its `bench.panel`, or its X-Bench-Panel header.")
    if seat is not None and panel is None:
        raise BadRequest("`bench.seat` needs `bench.continue`: the panel whose seat goes on.",
                         "Send both: {\"bench\": {\"continue\": \"p_...\", \"seat\": 2}}.")
    if seat is not None and seat < 1:
        raise BadRequest(f"`bench.seat` must be a seat's number (1 or more), not {seat}.",
                         "The seat numbers are the reply's `bench.seats[].seat`.")
    return panel, seat
