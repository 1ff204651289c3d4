"""The one way the suite calls a model: a direct ask through the bench's own panel, in this process, recorded as a call.

Every suite model call goes through `TaskAsker.ask`, so pacing and limits have one place to act. The ask never leaves
the process, so it needs no gateway key: `require_keys` guards the gateway's clients, not the bench's own work.
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable, ContextManager

from ..askparts import Asker
from ..canonical import DIRECT, OK, Ask, Message, Seat, Target, Text
from ..errors import BenchError, RateLimited

MAX_TOKENS = 2000
SUITE = Asker(origin="suite")              # who asks: the ledger's kind for its calls, a scheduled call's wait
Pace = Callable[[str], ContextManager]      # alias -> held around one call (the scheduler's pacing)


class NotAsked(Exception):
    """A call held back before it went out (a scheduled round's pacing): nothing was asked, the item stays owed."""


@dataclass
class Answered:
    status: str                      # ok | failed
    text: str = ""
    call: str | None = None          # the call id the panel recorded
    error: str | None = None
    seconds: float = 0.0
    rate_limited: bool = False


class TaskAsker:
    """`model: <alias>` asked of the bench's Panel, as a client's direct ask through the gateway would be: the
    same seating checks (retired, held, resting, context window), output budget and call record."""

    def __init__(self, panel):
        self.panel = panel

    def ask(self, alias: str, system: str, prompt: str, pace: Pace | None = None) -> Answered:
        """`pace(alias)` is held around the call; NotAsked from it passes on (nothing was sent)."""
        ask = Ask(messages=[Message("user", [Text(prompt)])], system=system, max_tokens=MAX_TOKENS, temperature=0,
                  target=Target(alias, DIRECT, alias))
        started = time.monotonic()
        try:
            with pace(alias) if pace else nullcontext():
                run = self.panel.start(ask, SUITE)
                for _ in self.panel.finished(run):      # the one seat, within the seat timeout
                    pass
                self.panel.settle(run)                  # its call record committed before its id is kept
        except BenchError as e:          # refused before a seat was asked: the alias is gone, or it cannot sit
            return Answered("failed", error=str(e), seconds=time.monotonic() - started,
                            rate_limited=isinstance(e, RateLimited))
        answered = from_seat(run.seats[0], time.monotonic() - started)
        if run.unkept:                   # not in the record (a full disk): its result names no call
            answered.call = None
        return answered


def from_seat(seat: Seat, seconds: float) -> Answered:
    if seat.status != OK:
        error = seat.error or seat.status
        return Answered("failed", call=seat.call, error=error, seconds=seconds,
                        rate_limited="rate" in error.lower() and "limit" in error.lower())
    return Answered("ok", seat.answer or "", seat.call, seconds=seconds)
