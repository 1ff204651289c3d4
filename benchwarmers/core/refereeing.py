"""The referee's call after a panel's seats, in the background: which points a reply shows (off, contested, all),
who referees (refereepick.py), the call on the panel's pool (limits, ledger kind `referee`, `referee_timeout`, hung
up when given up), what is kept of it, and what a reply says: the points when they are in, else where they will be."""
from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import Callable, Iterator

from ..canonical import CANCELLED, FAILED, OK, ROUTE, SKIPPED, TIMEOUT, Answer, KeepAlive, TextDelta, Usage
from ..errors import BenchError, FaultKind, QuotaRefused, UpstreamFailed
from ..providers.dispatch import Call
from ..roster.registry import Registry
from ..store.ids import record_id
from ..store.pointstore import PointStore
from . import blind, points, referee
from ..providers.dispatch import SeatTap
from .calling import Dialer, seat_timeouts
from .judging import Judging
from .lanes import Lanes
from .points import Points
from .recorder import Ended
from .refereepick import Picker, fix

log = logging.getLogger("benchwarmers.referee")
KIND = "referee"
STOPPED = "the service stopped before the referee answered"
READ_HERE = 16 * 1024     # an answer longer than this is read on a worker, not on the thread that heard it
WAIT_PAST = 5.0           # a reply that asked for its points waits this much past referee_timeout at most
SWEEP_EVERY = 1.0         # seconds between looks for referees past referee_timeout (the transport's own timeouts
#                           end most calls at it; this hangs up one still streaming, or still waiting for a worker)


def points_mode(run) -> str:
    """What the reply shows: the request's word (`bench.points`, or `:points` for all of them), else the collection's
    (`--points`; a collection that never said is off), never anything for route mode's turns."""
    ask = run.ask
    if ask.target.mode == ROUTE:
        return points.OFF
    if ask.points in points.MODES:
        return ask.points
    if ask.target.points:
        return points.ALL
    return run.collection.points if run.collection else points.OFF


def asked(run) -> bool:
    """The request itself asked for points (`:points`, `bench.points`): its reply waits for them."""
    return bool(run.ask.target.points or run.ask.points in (points.CONTESTED, points.ALL))


class Refereeing:
    """Chooses a panel's referee at its start, asks it once the seats are in (on the pool, never holding the reply),
    records the call and keeps the points; a reply takes them when they are in, or says where they will be."""

    def __init__(self, registry: Registry, dialer: Dialer, picker: Picker, settings: Callable[[], dict],
                 store: PointStore, lanes: Lanes):
        self.registry, self.dialer, self.picker, self.settings = registry, dialer, picker, settings
        self.store, self.lanes = store, lanes
        self._live: set[Judging] = set()
        self._mutex = threading.Lock()     # _live's own: a panel's add and discard take it bare (no Condition calls)
        self._lock = threading.Condition(self._mutex)    # ...and the sweeper waits on it for a first referee
        self._sweeper: threading.Thread | None = None
        self._closed = False

    # ---- at the start, and once the seats are in ---------------------------------------------
    def plan(self, run) -> dict | None:
        """Who will referee the panel (kept in `run.judging`), as the points' info its row starts with; None: the
        reply shows no points."""
        mode = points_mode(run)
        if mode == points.OFF:
            return None
        model, notes, why = self.picker.referee(run)
        run.judging = Judging(run, mode, model, notes, why)
        return run.judging.pending()

    def begin(self, run) -> None:
        """The seats are in (or the panel stopped waiting): the referee is asked in the background."""
        j = run.judging
        if j is None or j.started:
            return
        with self.registry.config.steady(run.memo):   # the config as the ask read it: no file looked at again
            self._begin(j)

    def _begin(self, j: Judging) -> None:
        run = j.run
        j.started = time.monotonic()
        shown = referee.answered(run.seats)
        if len(shown) < 2:
            self._end(j, Points.failed("fewer than two seats answered, so there is nothing to compare"))
            return
        if j.model is None:
            assert j.why is not None      # no referee: `why` says why
            self._end(j, Points.failed(j.why))
            return
        j.shown = blind.shuffled(shown)
        j.ask = referee.referee_ask(run.ask, j.shown, referee.MAX_TOKENS,
                                    blind.panel_names(run.seats, self.registry.models()), checked=True)
        seconds = self.settings()["referee_timeout"]
        j.deadline = (j.started + seconds, f"the referee {j.model.alias} gave no answer within {seconds:g} s")
        with self._mutex:
            self._live.add(j)
            if self._sweeper is None:
                self._sweeper = threading.Thread(target=self._sweep, name="referees", daemon=True)
                self._sweeper.start()
            if len(self._live) == 1:   # the sweeper waits for a first one; else it looks on its own, every second
                self._lock.notify()
        self.dialer.seat(j.model, j.ask, run.endpoints.get(j.model.endpoint), KIND, j.hangup,
                         partial(self._worker, j), partial(self._over, j), run.asker,
                         timeouts=seat_timeouts(seconds, j.hangup), tap=SeatTap(j.call))

    def _worker(self, j: Judging, fn: Callable[[], None], starting: bool) -> None:
        assert j.model is not None       # asked: it has its referee
        self.lanes.submit(j.model.endpoint, fn)

    def _over(self, j: Judging, call: Call, answer: Answer | None, fault: BaseException | None) -> None:
        """The referee's call is over: its status from what ended it, then its answer read (a long one on a worker)."""
        run = j.run     # None once the refereeing is over (the service stopped first: close())
        with self.registry.config.steady(run.memo if run is not None else None):
            self._ended(j, answer, fault)

    def _ended(self, j: Judging, answer: Answer | None, fault: BaseException | None) -> None:
        status, error, sent = OK, None, True
        model, hangup = j.model, j.hangup
        assert model is not None and j.ask is not None    # a call was made: its referee and its ask
        if fault is None:    # answered: none of the looks below
            pass
        elif isinstance(fault, QuotaRefused):
            status, error, sent = SKIPPED, fault.message, False
        elif isinstance(fault, UpstreamFailed):
            if hangup.reason is not None:      # given up at referee_timeout, or the service is stopping
                status, error, sent = hangup.tag or CANCELLED, hangup.reason, hangup.sent
                if hangup.refused and not hangup.sent:
                    self.dialer.unsent(model, j.ask)
            else:
                timed_out = fault.kind is FaultKind.TIMEOUT
                status = TIMEOUT if timed_out else FAILED
                error = f"the referee {model.alias} gave no answer within " \
                        f"{self.settings()['referee_timeout']:g} s" if timed_out else str(fault)
                self.dialer.failed(model, fault)
        elif isinstance(fault, BenchError):
            status, error = FAILED, str(fault)
        else:    # a bug of ours costs the points, never the panel's answers
            log.error("the referee %s failed", model.alias, exc_info=fault)
            status, error = FAILED, f"internal error: {type(fault).__name__}"
        if j.over:         # recorded as cancelled when the service stopped (close()): nothing more to read
            return
        j.call_over = (status, error, sent, answer, time.monotonic() - j.started)
        if answer is not None and len(answer.text) > READ_HERE:
            self.lanes.submit("", self._read_steady, j)
        else:
            self._read(j)

    def _read_steady(self, j: Judging) -> None:
        run = j.run
        if run is None:    # over meanwhile (the service stopped)
            return
        with self.registry.config.steady(run.memo):
            self._read(j)

    def _read(self, j: Judging) -> None:
        assert j.call_over is not None   # read once the call is over
        status, error, _, answer, _ = j.call_over
        if error:
            found = Points.failed(self._unavailable(j, status, error))
        else:
            found = referee.read((answer or Answer("")).text, j.shown, ids=lambda k: record_id("pt_"),
                                 checked=True)
            if found.unavailable:
                found.unavailable = self._unavailable(j, status, found.unavailable)
        self._end(j, found)

    def _unavailable(self, j: Judging, status: str, reason: str) -> str:
        """Why there are no points, naming the referee and what to do about it."""
        assert j.model is not None
        alias, collection = j.model.alias, j.collection_name
        if status in (CANCELLED, SKIPPED):
            return reason.rstrip(".")
        if status == TIMEOUT:
            return f"{reason.rstrip('.')}; raise referee_timeout, or {fix(collection)}"
        named = reason if alias in reason else f"{reason.rstrip('.')} (the referee was {alias})"
        return f"{named}; {fix(collection)}"

    # ---- over: recorded, kept, told ----------------------------------------------------------
    def _end(self, j: Judging, found: Points) -> None:
        """The refereeing is over (once): the call's record, the points kept with the panel, the block a reply
        shows, the referee's failures counted."""
        if not j.once.acquire(False):    # taken by the first end, never let go
            return
        j.over = True
        run = j.run
        info = j.info()
        if j.call_over is not None:
            info.update(self._record(j))
            status = j.call_over[0]
            if status not in (SKIPPED, CANCELLED) and j.model is not None:   # a call made had its referee
                self.picker.faults.note(j.model.alias, found.unavailable)
        purpose = run.collection.purpose if run.collection else ""
        bench = found.bench(j.mode, purpose)
        bench["points_info"].update(info)
        shown = {d["id"]: d for d in bench["points"]}    # as the reply gives them: not worked out again to keep
        j.records.append(self.store.save(run.id, bench["points_info"],
                                         [dict(shown.get(p.id) or p.to_dict(), shown=p.id in shown)
                                          for p in found.points]))
        j.bench, j.found = bench, found
        with self._mutex:
            self._live.discard(j)
        j.run = None       # the cycle between the run and its judging broken: see Judging
        j.done.set()

    def _record(self, j: Judging) -> dict:
        """The referee's call recorded with the panel (seat none, kind referee); what the points' info says of it."""
        assert j.call_over is not None and j.model is not None and j.ask is not None
        status, error, sent, answer, took = j.call_over
        run = j.run
        if answer is not None:
            j.usage = answer.usage
        # Its own ask (the prompt its tokens are estimated from when the upstream tells none, the cap it was sent
        # with), under the panel's request (its record is kept with the panel's summary: the cap goes in its extra)
        written, cost = self.dialer.recorded(Ended(   # its cost as its ledger line priced it, not priced again
            j.call, j.model, j.ask, status if sent else SKIPPED, KIND, run.ask.target.mode, took, answer, error,
            collection=run.collection_name, panel=run.id, request=run.seat_request,
            extra={"max_tokens": j.ask.max_tokens}, sent=sent, asker=run.asker))
        j.records.append(written)
        return {"call": j.call, "seconds": round(took, 3),
                "usage": (answer.usage if answer is not None else Usage()).to_dict(), "cost": cost}

    def told(self, run, wait: float = 0.0) -> str:
        """What the reply says of its points, after waiting up to `wait` seconds for them: the block when they are in
        (their records then go with the reply's), else one line saying where they will be; "" when it shows none.
        `run.points` is set to what the reply tells (its `bench` fields)."""
        j = run.judging
        if j is None:
            return ""
        if wait > 0:
            j.done.wait(wait)
        if j.done.is_set():
            run.points, run.referee_usage = j.bench, j.usage
            run.records.extend(j.records)
            purpose = run.collection.purpose if run.collection else ""
            if run.hidden:   # blind: the seats by number alone, and no model named in their quotes
                return "\n\n" + run.hidden.text(points.render(j.found, j.mode, purpose) + j.notes_line())
            return "\n\n" + points.render(j.found, j.mode, purpose, {s.seat: s.model for s in run.seats}) + \
                j.notes_line()
        run.points = {"points_info": j.pending()}
        notes = run.hidden.text(j.notes_line()) if run.hidden else j.notes_line()   # a seat passed over, unnamed
        return "\n\n" + j.pending_line() + notes

    def told_events(self, run, wait: float, keepalive: float) -> Iterator:
        """told() for a stream: KeepAlive while it waits, then the text as one event."""
        j = run.judging
        if j is None:
            return
        end = time.monotonic() + wait
        while not j.done.is_set() and time.monotonic() < end:
            if not j.done.wait(min(keepalive, max(end - time.monotonic(), 0.0))):
                yield KeepAlive()
        yield TextDelta(self.told(run))

    def wait(self, run, streamed: bool) -> float:
        """How long a reply waits for its points: a request that asked for them, until the referee is over; a stream,
        the collection's points_wait (else the points_wait_seconds setting); any other whole reply, not at all."""
        if run.judging is None:
            return 0.0
        if asked(run):
            return self.settings()["referee_timeout"] + WAIT_PAST
        if not streamed:
            return 0.0
        col = run.collection
        if col is not None and col.points_wait is not None:
            return col.points_wait
        return self.settings()["points_wait_seconds"]      # read only when it is the answer

    def _sweep(self) -> None:
        """Hang up every referee past its deadline, looking every SWEEP_EVERY seconds while any is out: one thread
        for all of them, rather than a timer each."""
        while True:
            with self._lock:
                while not self._live and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                self._lock.wait(SWEEP_EVERY)
                live = list(self._live)
            now = time.monotonic()
            for j in live:
                if now >= j.deadline[0]:
                    j.hangup.hang_up(j.deadline[1], TIMEOUT)

    # ---- stopping ----------------------------------------------------------------------------
    def stopping(self) -> None:
        """The service is stopping: every referee still out is hung up (its call ends now, its record says why)."""
        with self._lock:
            live = list(self._live)
        for j in live:
            j.hangup.hang_up(STOPPED, CANCELLED)

    def close(self, timeout: float = 5.0) -> None:
        """After stopping(): wait a little for the referees hung up to be recorded, then record those still not
        over (their call never went, or never came back) as cancelled, so none is lost when the store closes."""
        self.stopping()
        end = time.monotonic() + timeout
        with self._lock:
            live = list(self._live)
        for j in live:
            j.done.wait(max(end - time.monotonic(), 0.0))
            if not j.done.is_set():
                j.call_over = (CANCELLED, STOPPED, j.hangup.sent, None, time.monotonic() - j.started)
                self._end(j, Points.failed(STOPPED))
        with self._lock:
            self._closed = True
            self._lock.notify()
