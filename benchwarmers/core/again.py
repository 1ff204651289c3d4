"""One seat of a panel stopped, or asked again (the Ask page's column controls; POST /bench/panels/{id}/stop and
/retry). The service holds its newest asks (`Recent`) for this: a stopped seat's call is hung up upstream and
recorded as stopped; a retried seat is one more call of the same model with the same ask, in a run of its own
under the same panel and seat number, its record naming the call it replaces (`retry_of`), and from then on it is
that seat's answer (the panel's page shows it in the seat's place). The panel's points and merge are not made
again."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from functools import partial

from ..canonical import EXPLORE, STOPPED, Seat
from ..errors import Conflict, NotFound
from ..providers.hangup import Hangup
from ..store.ids import record_id
from .live import WAKE, LiveText
from .panelrun import PanelRun
from .seating import Plan, SeatPlan

STOPPED_WHY = "stopped by the user before it answered"
HELD = 64                            # the newest asks the service holds for their seats to be stopped or retried
HELD_MB = 64                         # and at most this many MB of their text and images (the newest always)


class Recent:
    """The newest HELD panels by id (and HELD_MB of their asks at most), in memory: a panel's ask is not kept whole in
    the record (its images are not, nor a prompt past record_max_kb)."""

    def __init__(self, most: int = HELD, most_bytes: int = HELD_MB << 20):
        self.most, self.most_bytes, self.size = most, most_bytes, 0
        self._runs: OrderedDict[str, tuple[PanelRun, int]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, run: PanelRun) -> None:
        size = ask_size(run.ask)
        with self._lock:
            self._runs[run.id] = (run, size)
            self.size += size
            while len(self._runs) > 1 and (len(self._runs) > self.most or self.size > self.most_bytes):
                self.size -= self._runs.popitem(last=False)[1][1]

    def get(self, panel: str) -> PanelRun | None:
        with self._lock:
            held = self._runs.get(panel)
        return held[0] if held else None


def ask_size(ask) -> int:
    """About what an ask holds in memory: its texts' and inline images' characters."""
    return len(ask.system or "") + sum(len(getattr(part, "text", None) or "") + len(getattr(part, "data", None) or "")
                                       for message in ask.messages for part in message.parts)


def held(recent: Recent, panel: str, known: bool) -> PanelRun:
    """The run of panel `panel`; 404 for an id that is no panel, 409 for one asked before the service's newest
    HELD asks (or before it started): `known` says whether the record has it."""
    run = recent.get(panel) if isinstance(panel, str) else None
    if run is not None:
        return run
    if known:
        raise Conflict(f"Panel {panel!r} is no longer held by the service (it holds its newest {HELD} asks, up to "
                       f"{HELD_MB} MB of them, and none from before it started), so its seats cannot be stopped or "
                       "asked again.",
                       "Ask again: the Ask page, or POST /v1/chat/completions.")
    raise NotFound(f"No panel {panel!r}.", "GET /bench/history lists the asks; a panel's id starts with p_.")


def current(run: PanelRun, number) -> tuple[PanelRun, SeatPlan, Seat]:
    """(the run that holds seat `number` now: the panel's, or its latest retry's; its SeatPlan; its Seat)."""
    numbers = [s.seat for s in run.seats]
    if isinstance(number, bool) or not isinstance(number, int) or number not in numbers:
        raise NotFound(f"Panel {run.id!r} has no seat {number!r}: its seats are {', '.join(map(str, numbers))}.",
                       "Send seat: the seat's number, as its heading and the reply's bench.seats give it.")
    holder = run.again.get(number, run)
    sp, seat = next((sp, s) for sp, s in zip(holder.plan.seats, holder.seats) if s.seat == number)
    return holder, sp, seat


def stop(run: PanelRun, number) -> Seat:
    """Hang up seat `number` of `run` (its retry's call, when it was retried); 409 when it is not out."""
    holder, _, seat = current(run, number)
    with holder.lock:
        hangup = holder.hangups.get(seat.call)
    if hangup is None or not hangup.hang_up(STOPPED_WHY, STOPPED):
        raise Conflict(f"Seat {number} of panel {run.id!r} is not running: it ended {seat.status}.",
                       "Retry it to ask its model again.")
    return seat


def retry(run: PanelRun, number, seconds: float, endpoints: dict, live: bool) -> tuple[PanelRun, SeatPlan, Seat]:
    """A run of its own for seat `number`, ready to send (Panel.again sends it): a new call of the seat's model with
    the panel's ask, its deadline `seconds` from now; `live`: read as it writes. 409 while the seat is out."""
    holder, sp, seat = current(run, number)
    with holder.lock:
        out = seat.call in holder.hangups
    if out:
        raise Conflict(f"Seat {number} of panel {run.id!r} is still running.", "Stop it first, then retry it.")
    hard = time.monotonic() + seconds
    again = PanelRun(run.id, run.ask, run.collection, Plan([sp]), hard, hard, 0.0, request=run.request,
                     endpoints=endpoints, asker=run.asker, retried=seat.call, thread=run.thread, task=run.task)
    new = Seat(seat.seat, seat.kind, seat.model, call=record_id())
    again.seats, again.left, again.members_left = [new], 1, int(seat.kind != EXPLORE)
    again.hangups = {new.call: Hangup()}
    if live:
        again.live = LiveText(partial(again.done.put, WAKE))
    with run.lock:
        run.again[number] = again
    return again, sp, new
