"""Route mode for agents: one member per conversation (pinned), chosen by record, with failover and shadow seats."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..askparts import ANYONE, NO_PASSTHROUGH, Asker, PassThrough
from ..canonical import (FAILED, OK, ROUTE, SKIPPED, Answer, Ask, Collector, ErrorEvent, Finish, ReasoningDelta,
                         TextDelta, ToolCallDelta)
from ..errors import (AllMembersFailed, BenchError, FaultKind, NoMemberAvailable, QuotaRefused, RateLimited,
                      UpstreamFailed)
from ..roster.limits.quota import RESTS
from ..roster.registry import Model, Registry
from ..store.db import Written
from ..store.ids import record_id
from .calling import Dialer
from .choose import rank
from .collection import Collections
from .lanes import Lanes
from .pins import Pins, conversation_key
from .rankings import Rankings
from .recorder import Ended, not_kept
from .seating import Seating

log = logging.getLogger("benchwarmers.route")
CONTENT = (TextDelta, ToolCallDelta, ReasoningDelta)


@dataclass
class Turn:
    """One agent turn: the member answering it, and what we will record about it."""
    ask: Ask
    collection: str
    pin: str
    model: Model                     # the member asked now (the next one on a failover)
    call: str = ""
    started: float = field(default_factory=time.monotonic)
    ttft: float | None = None
    why: list = field(default_factory=list)
    failover_from: list = field(default_factory=list)
    kind: str = "route"              # or "shadow": the call's kind, for its rate limits and the ledger
    stream: bool = False             # the client reads the answer as it comes
    native: PassThrough = NO_PASSTHROUGH   # the client's own body, for a member of its API
    asker: Asker = ANYONE            # who asks, for the record
    failed_records: list = field(default_factory=list)   # the failed-over calls' writes: the reply names them too


@dataclass
class TurnReply:
    """What route mode hands back for the caller's format to render: the member, its call id, the `bench` data
    (the choice's collection, mode, model, call and failover), and either its events (a stream, already past its
    first content, the `bench` data on its Finish) or its whole answer. `call` None: its record could not be
    kept (the `bench` data says why)."""
    model: str
    call: str | None
    bench: dict
    events: Iterator | None = None
    answer: Answer | None = None


class Router:
    """Route mode: one member answers each agent turn; `lanes` run the shadow seats (the panel's seat workers, each
    endpoint within its share)."""

    def __init__(self, registry: Registry, collections: Collections, seating: Seating, dialer: Dialer,
                 rankings: Rankings, pins: Pins, lanes: Lanes, settings: Callable[[], dict]):
        self.registry, self.collections, self.seating, self.dialer = registry, collections, seating, dialer
        self.rankings, self.pins, self.lanes, self.settings = rankings, pins, lanes, settings
        self.pins.expire(self.settings()["pin_idle_minutes"] * 60)
        self._turns = 0

    # -- choosing ------------------------------------------------------------------------------
    def candidates(self, ask: Ask, collection, pinned: str | None) -> tuple[list[Model], list[str]]:
        """Able members, pinned first, then by record; plus why the others were passed over."""
        models = self.registry.models()
        tokens = ask.prompt_tokens()
        able, passed = [], []
        for alias in collection.members:
            model = models.get(alias)
            if model is None:
                continue
            reason = self.seating.why_not(model, ask, tokens, kind="route")
            if reason is None and ask.tools and self.seating.facts(model).get("tools") is False:
                reason = "no tool calling"
            if reason:
                passed.append(f"{alias}: {reason}")
            else:
                able.append(alias)
        ranked = rank(able, self.rankings.models(collection.name))
        order = [r.alias for r in ranked]
        if pinned in order:
            order.remove(pinned)
            order.insert(0, pinned)
        return [models[a] for a in order], [r.why for r in ranked] + passed

    # -- serving -------------------------------------------------------------------------------
    def take(self, ask: Ask, session: str | None, caller_secret: str | None, *, stream: bool = False,
             native: PassThrough = NO_PASSTHROUGH, asker: Asker = ANYONE) -> TurnReply:
        """One agent turn: the pinned or best able member answers; a failure before its first content fails over
        to the next. `session`: the client's own conversation id, if it sent one; `caller_secret` keeps callers'
        pins apart; `stream`: the client streams; `native`: the client's body for a member of its own API (what it
        could not carry is recorded); `asker`: who asks."""
        collection = self.collections.get(ask.aim.name)
        idle = self.settings()["pin_idle_minutes"] * 60
        pin = conversation_key(ask, collection.name, session, caller_secret)
        pinned = self.pins.get(pin, idle)
        self._turns += 1
        if self._turns % 500 == 0:   # now and then, forget conversations that went quiet
            self.pins.expire(idle)
        order, why = self.candidates(ask, collection, pinned)
        if not order and why and all(w.split(": ", 1)[-1].startswith(RESTS) for w in why):
            raise RateLimited(f"Every member of {collection.name!r} is resting on a rate limit: " + "; ".join(why)
                              + ".", "Wait for the reset, or add members.", retry_after=60)
        if not order:
            raise NoMemberAvailable(f"No member of {collection.name!r} can take this turn: " + "; ".join(why or
                                    ["the collection has no members"]) + ".",
                                    "Add members with tools to the collection, or wait for a rate limit to reset.")
        turn = Turn(ask, collection.name, pin, order[0],
                    why=(["pinned: " + pinned] if pinned == order[0].alias else []) + why,
                    stream=stream, native=native, asker=asker)
        failures = []
        for model in order:
            turn.model, turn.call, turn.started, turn.ttft = model, record_id(), time.monotonic(), None
            try:
                reply = self._answer(turn)
            except UpstreamFailed as e:
                # kept without its traceback: that would hold this frame, and so a stream's reply, in a cycle
                failures.append((model.alias, e.with_traceback(None)))
                self.dialer.failed(model, e)   # a rate limit: the next turns skip it until the reset
                refused = isinstance(e, QuotaRefused)   # one of our limits: nothing was sent
                turn.failed_records.append(self._record(turn, SKIPPED if refused else FAILED, None,
                                                        e.message if refused else str(e)))
                turn.failover_from.append({"model": model.alias, "call": turn.call, "error": str(e)})
                continue
            self.pins.set(pin, collection.name, model.alias)
            return reply
        raise self._all_failed(collection.name, failures)

    def _answer(self, turn: Turn) -> TurnReply:
        """The member's reply: its stream opened up to the first content, or its whole answer, recorded."""
        reply = TurnReply(turn.model.alias, turn.call, self._bench(turn))
        if turn.stream:
            head, rest = self._open(turn)
            reply.events = self._relay(turn, head, rest)
            return reply
        reply.answer = self._whole(turn)
        unkept = self._settle(turn, self._record(turn, OK, reply.answer, None))   # acknowledged once committed
        if unkept:
            reply.call, reply.bench = None, not_kept(reply.bench, unkept)
        self._shadow(turn)
        return reply

    def _open(self, turn: Turn) -> tuple[list, Iterator]:
        """Pull events until the first content arrives: a failure before it can still fail over."""
        it = self.dialer.stream(turn.model, turn.ask, turn.kind, turn.asker, turn.native)
        head = []
        for ev in it:
            head.append(ev)
            if isinstance(ev, CONTENT) or isinstance(ev, Finish):
                turn.ttft = time.monotonic() - turn.started
                break
        return head, it

    def _whole(self, turn: Turn):
        collector = Collector()
        for ev in self.dialer.stream(turn.model, turn.ask, turn.kind, turn.asker, turn.native):
            if turn.ttft is None and isinstance(ev, CONTENT):
                turn.ttft = time.monotonic() - turn.started
            collector.add(ev)
        return collector.result()

    def _relay(self, turn: Turn, head: list, rest: Iterator) -> Iterator:
        """Hand the member's events to the client's format; a failure after the first byte becomes the format's
        own stream error event, never a silently cut connection."""
        collector, status, error, finished = Collector(), OK, None, False
        try:
            for source in (head, rest):
                for ev in source:
                    collector.add(ev)
                    if isinstance(ev, Finish):
                        finished = True   # the answer is whole: a format that stops reading here is done with it
                        # recorded, and committed, before the final event reaches the client
                        unkept = self._settle(turn, self._record(turn, OK, collector.result(), None))
                        bench = self._bench(turn)
                        ev = Finish(ev.reason, ev.usage, not_kept(bench, unkept) if unkept else bench)
                    yield ev
        except UpstreamFailed as e:
            status, error = FAILED, str(e)
            yield ErrorEvent(e)
        except GeneratorExit:
            if not finished:
                status, error = FAILED, "the client went away mid-answer"
            raise
        finally:
            close = getattr(rest, "close", None)
            if close:
                close()   # releases the upstream connection when the client left early
            if not finished:   # a whole answer was recorded at its Finish
                self._record(turn, status, collector.result(), error)
            if status == OK:
                self._shadow(turn)

    def _settle(self, turn: Turn, written: Written) -> str | None:
        """The turn's records committed (its answer's and its failed-over calls'); None, or why they were not."""
        return self.dialer.settle(turn.failed_records + [written])

    def _bench(self, turn: Turn) -> dict:
        return {"collection": turn.collection, "mode": ROUTE, "model": turn.model.alias, "call": turn.call,
                "failover_from": turn.failover_from}

    def _record(self, turn: Turn, status: str, answer, error: str | None, kind: str = "route",
                extra: dict | None = None, of: str | None = None) -> Written:
        ask = turn.ask
        return self.dialer.record(Ended(
            turn.call, turn.model, ask, status, kind, ROUTE, time.monotonic() - turn.started, answer, error,
            turn.ttft, turn.collection, turn=of, asker=turn.asker,
            extra=extra or {"pin": turn.pin.rsplit("|", 1)[-1][:12], "choice": turn.why[:8],
                            "failover_from": turn.failover_from, "dropped": list(turn.native.dropped),
                            "tools_offered": [t.name for t in ask.tools],
                            "tools_called": [c.name for c in (answer.tool_calls if answer else [])]}))

    # -- shadow seats --------------------------------------------------------------------------
    def _shadow(self, turn: Turn) -> None:
        """N other members answer the same turn off the agent's path; recorded as shadow calls of the turn."""
        collection = self.collections.all().get(turn.collection)
        if not collection or not collection.shadow:
            return
        order, _ = self.candidates(turn.ask, collection, None)
        others = [m for m in order if m.alias != turn.model.alias][:collection.shadow]
        for model in others:
            self.lanes.submit(model.endpoint, self._run_shadow, turn, model)

    def _run_shadow(self, turn: Turn, model: Model) -> None:
        shadow = Turn(turn.ask, turn.collection, turn.pin, model, call=record_id(), kind="shadow", native=turn.native,
                      asker=turn.asker)
        answer, status, error = None, OK, None
        try:
            answer = self._whole(shadow)
        except QuotaRefused as e:
            status, error = SKIPPED, e.message
        except BenchError as e:
            status, error = FAILED, str(e)
            self.dialer.failed(model, e)
        except Exception as e:   # a shadow must never disturb anything
            log.exception("shadow seat %s failed", model.alias)
            status, error = FAILED, f"internal error: {type(e).__name__}"
        self._record(shadow, status, answer, error, kind="shadow", extra={"turn": turn.call}, of=turn.call)

    def _all_failed(self, collection: str, failures: list) -> BenchError:
        lines = "; ".join(f"{alias}: {err}" for alias, err in failures).rstrip(".")   # its own full stop below
        if failures and all(err.kind is FaultKind.RATE_LIMITED for _, err in failures):
            waits = [err.retry_after for _, err in failures if err.retry_after]
            return RateLimited(f"Every member of {collection!r} is rate limited: {lines}.",
                               "Wait for the reset, or add members.", retry_after=min(waits) if waits else 30)
        return AllMembersFailed(f"Every member of {collection!r} failed this turn: {lines}.",
                                "Check the members with bench models.")
