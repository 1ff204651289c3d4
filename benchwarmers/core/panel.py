"""The panel: seats an ask, fans it out on a bounded pool, gathers answers in completion order, merges on request."""
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Callable, Iterator

from ..askparts import ANYONE, Asker
from ..canonical import (CANCELLED, EXPLORE, FAILED, LENGTH, MERGED, OK, RUNNING, SKIPPED, STOP, TIMEOUT, Answer, Ask,
                         ErrorEvent, Finish, KeepAlive, Seat, TextDelta)
from ..errors import BenchError, EmptyCollection, FaultKind, QuotaRefused, ToolsNeedRouteMode, UpstreamFailed
from ..providers.dispatch import Call, SeatTap
from ..providers.hangup import Hangup
from ..roster.registry import Registry
from ..store.conversations import Conversations
from ..store.ids import record_id
from ..store.pointstore import PointStore
from . import merging
from .again import Recent
from .calling import Dialer
from .collection import Collections
from .conversation import Threads, links_for
from .lanes import Lanes
from .live import WAKE, LiveText, Reads, deltas
from .panelrun import PanelRun
from .panelwords import ANSWERED_LATE, CLIENT_LEFT, STOPPING, no_able_seat, none_answered, seat_block, unkept_note
from .pump import pump
from .rankings import Rankings
from .recorder import seat_ended
from .refereeing import KIND as REFEREE, Refereeing
from .refereepick import Picker
from .seating import SeatPlan, Seating

log = logging.getLogger("benchwarmers.panel")
GONE_EVERY = 1.0    # seconds between looks at whether a waiting client is still there


class Panel:
    """Runs panels; its pool of seat workers (`panel_workers`, read at start-up) also runs route mode's shadows."""

    def __init__(self, registry: Registry, collections: Collections, seating: Seating, dialer: Dialer,
                 rankings: Rankings, settings: Callable[[], dict], point_store: PointStore, workers: int = 32):
        self.registry, self.collections, self.seating = registry, collections, seating
        self.dialer, self.rankings, self.settings = dialer, rankings, settings
        self.pool = ThreadPoolExecutor(workers, thread_name_prefix="seat")
        self.lanes = Lanes(self.pool, workers, lambda: self.settings()["endpoint_share"])
        self.picker = Picker(registry, rankings, settings, dialer.paces, lambda model, run: seating.why_not(
            model, run.ask, run.ask.prompt_tokens(), run.endpoints, REFEREE, run.asker))   # a judge as a seat is
        self.referee = Refereeing(registry, dialer, self.picker, settings, point_store, self.lanes)
        self.threads = Threads(Conversations(dialer.calls.db))   # follow-ups: each seat's own thread
        self._live: set = set()            # runs with seats out, for stopping()
        self.recent = Recent()             # the newest asks, for their seats to be stopped or retried (core/again.py)
        self._live_lock = threading.Lock()

    def close(self) -> None:
        self.stopping()
        self.referee.close()      # its referees hung up are recorded before the store closes
        self.dialer.dispatch.close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    # -- starting ------------------------------------------------------------------------------
    def start(self, ask: Ask, asker: Asker = ANYONE, live: bool = False) -> PanelRun:
        """Seat `ask` and send its seats; `asker` (who asks) goes to its records and its rate limits' patience.
        `live`: its seats (a merged panel's not) are asked streamed and read as they write (the Ask page, a stream)."""
        if ask.tools:
            raise ToolsNeedRouteMode("A panel answers with text, so requests with tools are refused.",
                                     f"Use bench/{ask.aim.name}:route for an agent with tools (one member answers).")
        with self.registry.config.steady() as memo:
            return self._start(ask, asker, memo, live and ask.aim.mode != MERGED)

    def stopping(self) -> None:
        """The service is stopping: every seat still out is hung up, so its panel answers now with what it has."""
        with self._live_lock:
            runs = list(self._live)
        for run in runs:
            run.hang_up(STOPPING, CANCELLED)
        self.referee.stopping()

    def _start(self, ask: Ask, asker: Asker, memo: dict, live: bool) -> PanelRun:
        collection, direct = self.collections.target(ask)
        plan, thread, task, seen = self.threads.open(self.seating, ask, collection, direct, asker)   # a follow-up?
        if not plan.seats:
            raise EmptyCollection(f"The collection {collection.name!r} has no one to seat.",
                                  "Add members: bench collection save NAME --add MODEL, or onboard models to explore.")
        if all(sp.skip for sp in plan.seats):   # nobody can be asked: the ask, not an upstream, is at fault
            raise no_able_seat(plan, self.dialer.free_at, self.dialer.now(), self.dialer.month_end())
        settings = self.settings()
        hard = time.monotonic() + settings["seat_timeout"]
        grace = collection.explore_grace if collection and collection.explore_grace is not None else \
            settings["explore_grace_seconds"]
        # the record keeps what the client sent; the referee and the merge read the conversation as `seen`
        request = self.dialer.summary(ask)
        run = PanelRun(record_id("p_"), seen, collection, plan, hard, hard, grace, request=request,
                       endpoints=self.registry.endpoints(), memo=memo, asker=asker, thread=thread, task=task,
                       hidden=plan.hidden)
        run.seats = [Seat(sp.number, sp.kind, sp.model.alias, call=record_id()) for sp in plan.seats]
        run.live = LiveText(partial(run.done.put, WAKE)) if live and not task else None
        run.left = len(run.seats)
        run.members_left = sum([sp.kind != EXPLORE for sp in plan.seats])   # (a list: a generator is a call a seat)
        run.hangups = {seat.call: Hangup() for sp, seat in zip(plan.seats, run.seats) if not sp.skip}
        self.recent.add(run)
        if run.hangups:
            with self._live_lock:
                self._live.add(run)
        pending = self.referee.plan(run)     # who will referee it: its row says so until the points are in
        run.records.append(self.dialer.calls.add_panel(run.id, run.reply().collection, ask.aim.mode,
                                                       len(run.seats), asker.caller, plan.passed_over, request[0],
                                                       json.dumps(pending) if pending else None,
                                                       links_for(thread, task), bool(plan.hidden)))
        for sp, seat in zip(plan.seats, run.seats):
            if sp.skip:
                self._done(run, sp, seat, SKIPPED, sp.skip, 0.0, None)
            else:
                self._send(run, sp, seat)
        return run

    # -- one seat ------------------------------------------------------------------------------
    def again(self, run: PanelRun, sp: SeatPlan, seat: Seat) -> None:
        """Send the one seat of a retried seat's run (core/again.py's retry made it)."""
        with self._live_lock:
            self._live.add(run)
        self._send(run, sp, seat)

    def _send(self, run: PanelRun, sp: SeatPlan, seat: Seat) -> None:
        """Send the seat's call the dispatcher's way; what may block runs on a worker, within the endpoint's share."""
        endpoint = run.endpoints.get(sp.model.endpoint)   # looked up once per panel, not once per seat
        ask = run.thread.ask_for(run.ask, sp.model.alias) if run.thread else run.ask   # its own thread
        self.dialer.seat(sp.model, ask, endpoint, seat.kind, run.hangups[seat.call],
                         partial(self._worker, run, sp, seat), partial(self._over, run, sp, seat), run.asker,
                         tap=SeatTap(seat.call, partial(run.live.heard, seat.call) if run.live and seat.call else None))

    def _worker(self, run: PanelRun, sp: SeatPlan, seat: Seat, fn: Callable[[], None], starting: bool) -> None:
        self.lanes.submit(sp.model.endpoint, self._on_worker, run, sp, seat, fn, starting)

    def _on_worker(self, run: PanelRun, sp: SeatPlan, seat: Seat, fn: Callable[[], None], starting: bool) -> None:
        with self.registry.config.steady(run.memo):   # the config as the ask read it: no stat per seat
            if starting and time.monotonic() > run.deadline:   # it waited for its endpoint's share until too late
                self._done(run, sp, seat, TIMEOUT, f"not started: its endpoint {sp.model.endpoint!r} was busy with "
                           "other seats until the panel stopped waiting", 0.0, None, sent=False)
                return
            fn()

    def _over(self, run: PanelRun, sp: SeatPlan, seat: Seat, call: Call, answer: Answer | None,
              fault: BaseException | None) -> None:
        """The seat's call is over (`answer`, or the `fault` that ended it): its status from what went wrong."""
        status, error, sent = OK, None, None
        if fault is None:   # answered: most seats, so no isinstance() of each kind of fault
            pass
        elif isinstance(fault, QuotaRefused):       # nothing was sent: the seat says when the limit resets
            status, error = SKIPPED, fault.message
            run.limited[seat.call] = fault.reset_at
        elif isinstance(fault, UpstreamFailed):
            hangup = run.hangups.get(seat.call)
            if hangup is not None and hangup.reason is not None:   # we stopped it: the upstream is not at fault
                status, error, sent = hangup.tag, hangup.reason, hangup.sent
                if hangup.refused and not hangup.sent:
                    self.dialer.unsent(sp.model, run.ask)
            else:
                status, error = (TIMEOUT if fault.kind is FaultKind.TIMEOUT else FAILED), str(fault)
                self.dialer.failed(sp.model, fault)
                if fault.kind is FaultKind.RATE_LIMITED:   # the provider's 429: its reset, when it said
                    wait = fault.retry_after
                    run.limited[seat.call] = fault.reset_at or (wait and self.dialer.now() + wait)
        elif isinstance(fault, BenchError):
            status, error = FAILED, str(fault)
        else:   # a bug of ours must cost one seat, never the panel
            log.error("seat %s (%s) failed", seat.seat, seat.model, exc_info=fault)
            status, error = FAILED, f"internal error: {type(fault).__name__}"
        now = time.monotonic()
        if now > run.hard and status == OK:
            status, error = TIMEOUT, ANSWERED_LATE
        with self.registry.config.steady(run.memo):
            self._done(run, sp, seat, status, error, now - call.started, answer, sent)

    def _done(self, run: PanelRun, sp: SeatPlan, seat: Seat, status: str, error: str | None, seconds: float,
              answer: Answer | None, sent: bool | None = None) -> None:
        """A seat is done: its Seat filled in, its record made, into the queue (completion order), and the last one
        in says so. Unless the panel stopped waiting first and recorded it as timed out: then that record is amended.
        The run's lock makes it one or the other, so the call is recorded once and its reply's Seat stays as told."""
        with run.lock:
            run.hangups.pop(seat.call, None)
            idle = not run.hangups
            late = run.gave_up is not None
            if not late:
                seat.status, seat.error, seat.seconds = status, error, seconds
                if answer is not None:
                    seat.answer, seat.usage = answer.text, answer.usage
                    seat.finish_reason = answer.finish_reason
                    if answer.finish_reason == LENGTH:   # its label says where it was cut
                        seat.max_tokens = self.dialer.tokens(sp.model, run.ask)
                written, seat.cost = self.dialer.recorded(seat_ended(run, sp.model, seat, answer, sent))
                run.records.append(written)   # its cost: its usage as recorded
                run.left -= 1
                last = run.left == 0
                grace = run.count_in(seat) and not last
                run.done.put(seat)     # after the deadline moved: the gatherer reads it on waking
        if idle:
            with self._live_lock:
                self._live.discard(run)
            if run.timer is not None:
                run.timer.cancel()
        if late:
            self._amend(run, sp, seat, status, error, seconds, answer, sent)
        elif last or grace:
            run.ready.set()

    def _amend(self, run: PanelRun, sp: SeatPlan, seat: Seat, status: str, error: str | None, seconds: float,
               answer: Answer | None, sent: bool | None) -> None:
        """A seat back after the panel stopped waiting for it: its record gets what it learned (the answer, its
        tokens, its error, whether it was sent at all). One the client was told is still running gets its own
        status (answered, it can be given a verdict like any other); one it was told timed out keeps that."""
        sent = status != SKIPPED if sent is None else sent
        if seat.status == RUNNING:
            told = replace(seat, status=status, error=error, seconds=seconds)
            self.dialer.record(seat_ended(run, sp.model, told, answer, sent, {"late": True}), run.gave_up)
            return
        told = replace(seat, status=TIMEOUT, error=error or ANSWERED_LATE, seconds=seconds)
        self.dialer.record(seat_ended(run, sp.model, told, answer, sent), run.gave_up)

    def _give_up(self, run: PanelRun, pending: dict) -> list:
        """The deadline: the seats in by now, then every other one recorded (sent: it may well be out), so its call
        id is in the record before the reply names it: at the explore grace's end as running (it goes on, and its
        record gets its answer), at seat_timeout as timed out (it is hung up). Under the run's lock: a worker
        returning this very moment is either in first or finds the panel stopped and amends this record."""
        timeout = self.settings()["seat_timeout"]
        now = time.monotonic()
        running = run.graced and now < run.hard
        given_up = f"no answer within {timeout:g} s"
        if running:
            status, error = RUNNING, (f"still running {run.grace:g} s after the other seats were in; its answer goes "
                                      "to the record when it comes")
        else:
            status, error = TIMEOUT, given_up
        closed = f"{given_up}: the panel stopped waiting and closed its call"
        seats = []
        with run.lock:
            while True:
                try:
                    seat = run.done.get_nowait()
                except queue.Empty:
                    break
                if seat is not WAKE and pending.pop(seat.call, None) is not None:
                    seats.append(seat)
            run.gave_up = self.dialer.now()
            for sp, seat in zip(run.plan.seats, run.seats):
                if seat.call in pending:
                    seat.status, seat.error = status, error
                    seat.seconds = timeout if status == TIMEOUT else now - (run.hard - timeout)
                    # counted=0: nothing to correct in the limits' counts yet; its worker does when it returns
                    run.records.append(self.dialer.record(seat_ended(run, sp.model, seat, None, True, counted=0)))
        if running:   # nobody waits for them now, but their answers do: given up at seat_timeout all the same
            run.timer = threading.Timer(run.hard - now, run.hang_up, (closed, TIMEOUT))
            run.timer.daemon = True
            run.timer.start()
        else:
            run.hang_up(closed, TIMEOUT)
        return seats + list(pending.values())

    # -- gathering -----------------------------------------------------------------------------
    def finished(self, run: PanelRun, keepalive: float | None = None, gather: bool = False,
                 gone: Callable[[], bool] | None = None) -> Iterator:
        """Seats as they finish (completion order); KeepAlive while waiting; at the deadline the seats still out
        (recorded then, so settle() waits for their records too).
        `gather`: nobody hears of a seat before the last (a whole answer): wait for the last seat (or the grace, or
        the deadline) first, one wake-up rather than one a seat. `gone`: says when the client has gone away; its
        seats still out are hung up then, as when this generator is closed before the end (a stream's client left).
        A live run (start's `live`) gives its seats' new text too, as Heard (live.Reads says when it is read)."""
        pending = {s.call: s for s in run.seats}
        reads = Reads(run.live)   # a live run's new text: read at once, then at most once every live.EVERY seconds
        try:
            if gather:
                self._gather(run, gone)
            ping = time.monotonic() + keepalive if keepalive else None
            while pending:
                try:
                    seat = run.done.get_nowait()     # what is in counts, even once the deadline has passed
                except queue.Empty:
                    now = time.monotonic()
                    wait = run.deadline - now
                    if wait <= 0:
                        yield from self._give_up(run, pending)
                        return
                    step = min(wait, ping - now) if ping else wait
                    try:
                        seat = run.done.get(timeout=max(reads.within(now, min(step, GONE_EVERY) if gone else step), 0))
                    except queue.Empty:
                        yield from reads.due(time.monotonic(), pending)
                        if gone is not None and gone():
                            run.hang_up(CLIENT_LEFT, CANCELLED)
                        if ping and keepalive and time.monotonic() >= ping:
                            ping = time.monotonic() + keepalive
                            yield KeepAlive()
                        continue
                if seat is WAKE:
                    yield from reads.woken(time.monotonic(), pending)
                elif pending.pop(seat.call, None) is not None:
                    yield seat
        finally:
            if pending and run.gave_up is None:   # closed early: nobody hears of these seats
                run.hang_up(CLIENT_LEFT, CANCELLED)

    def _gather(self, run: PanelRun, gone: Callable[[], bool] | None) -> None:
        """Wait until every seat is in, the explore grace began or the deadline came; hang up if the client went."""
        while True:
            wait = run.deadline - time.monotonic()
            if wait <= 0 or run.ready.wait(min(wait, GONE_EVERY) if gone else wait):
                return
            if gone is not None and gone():
                run.hang_up(CLIENT_LEFT, CANCELLED)

    def whole(self, run: PanelRun, on_seat: Callable[[Seat], None] | None = None,
              gone: Callable[[], bool] | None = None) -> Answer:
        """The finished panel as one Answer; 502 when every seat failed. `on_seat` hears of each seat as it finishes
        (MCP's progress notifications); `gone` says when the client went away (see finished)."""
        try:
            for seat in self.finished(run, gather=on_seat is None, gone=gone):
                if on_seat:
                    on_seat(seat)
        finally:
            self.referee.begin(run)   # in the background: the answers go out without waiting for it
        self._check_any(run)
        if run.task:
            text = next(s.answer for s in run.seats if s.status == OK)
        elif run.ask.aim.mode == MERGED:
            text = "".join(ev.text for ev in self.merge_events(run) if isinstance(ev, TextDelta))
        else:
            text = "".join([seat_block(s, run.hidden) for s in run.seats]).rstrip() + "\n"
        block = self.referee.told(run, self.referee.wait(run, streamed=False))   # its points, or where they will be
        self.settle(run)   # acknowledged only once its records are committed
        said = text.rstrip("\n") + block if block and not run.unkept else text   # not kept: no panel id to give
        self._keep_reply(run, said)
        return Answer(text=said + unkept_note(run.unkept), usage=run.usage(), finish_reason=STOP)

    def _keep_reply(self, run: PanelRun, said: str) -> None:
        """The reply as the client got it, kept as its hash: a follow-up sending it back is found by it."""
        if not run.task and not run.unkept:
            self.threads.store.keep_reply(run.id, said)

    def events(self, run: PanelRun, gone: Callable[[], bool] | None = None) -> Iterator:
        """The panel as a stream of Events: each seat's block as it finishes, or the merged text as it is written."""
        keepalive = self.settings()["keepalive_seconds"]
        merged = run.ask.aim.mode == MERGED and not run.task
        said: list[str] = []      # the text as it went out, kept as the reply's hash
        try:   # each seat's block a delta (clients read them so); a live run's first seat to write as it writes
            yield from deltas(self.finished(run, keepalive, gone=gone), run, merged, said)
        finally:
            self.referee.begin(run)   # the referee reads the seats while the merge is written
        try:
            self._check_any(run)
        except BenchError as e:
            yield ErrorEvent(e)
            return
        if merged:
            model, notes = self.picker.merger(run)
            lane = self.lanes.executor(model.endpoint if model else "")
            for event in pump(merging.stream(self.dialer, run, model, notes), lane, keepalive):
                if isinstance(event, TextDelta):
                    said.append(event.text)
                yield event
        # the points last: the block when the referee answers within the wait, else where they will be
        block = None
        for item in self.referee.told_events(run, self.referee.wait(run, streamed=True), keepalive):
            if isinstance(item, KeepAlive):
                yield item
            else:
                block = item
        self.settle(run)   # the final event (the call ids) only once the records are committed
        self._keep_reply(run, "".join(said) + (block.text if isinstance(block, TextDelta) else ""))
        if run.unkept:
            yield TextDelta(unkept_note(run.unkept))
        elif block is not None:
            yield block
        yield Finish(STOP, run.usage(), run.bench())

    def merge_events(self, run: PanelRun) -> Iterator:
        """After finished() gave every seat: the merge model's answer as events (every seat's block if it fails)."""
        self._check_any(run)
        yield from merging.stream(self.dialer, run, *self.picker.merger(run))

    def settle(self, run: PanelRun) -> None:
        """Wait until the panel's call records are committed: every way of answering a panel (a format's reply, the
        dashboard's stream, MCP) calls this before its last word, which carries the call ids; or, when they could
        not be kept (a full disk), says why (run.unkept) and names none of them."""
        run.unkept = self.dialer.settle(list(run.records))

    def _check_any(self, run: PanelRun) -> None:
        if not any(s.status == OK for s in run.seats):
            self.settle(run)   # the refusal too goes out once its records (and a 429's rest) are committed
            raise none_answered(run, self.dialer.free_at, self.dialer.now(), self.dialer.month_end())
