"""Route mode for agents: one member per conversation (pinned), chosen by record, with failover and shadow seats."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Iterator

from ..canonical import (FAILED, OK, ROUTE, Ask, Collector, ErrorEvent, Finish, ReasoningDelta, TextDelta,
                         ToolCallDelta, estimate_tokens)
from ..errors import BenchError, RateLimited, UpstreamFailed
from ..formats.base import ReplyInfo, RequestInfo
from ..providers.base import Timeouts
from ..registry import Model
from ..server.guard import presented_key
from ..server.messages import Request, Response
from ..store.calls import CallRecord, new_id, prompt_hash, summarise_request
from .choose import rank
from .pins import Pins, conversation_key

log = logging.getLogger("benchwarmers.route")
CONTENT = (TextDelta, ToolCallDelta, ReasoningDelta)


@dataclass
class Turn:
    """One agent turn: the member answering it, and what we will record about it."""
    ask: Ask
    collection: str
    pin: str
    model: Model | None = None
    call: str = ""
    started: float = field(default_factory=time.monotonic)
    ttft: float | None = None
    why: list = field(default_factory=list)
    failover_from: list = field(default_factory=list)


class Router:
    def __init__(self, parts):
        self.p = parts
        self.pins = Pins(parts.ctx.db)
        self.pins.expire(self.p.settings()["pin_idle_minutes"] * 60)
        self._turns = 0

    # -- choosing ------------------------------------------------------------------------------
    def candidates(self, ask: Ask, collection, pinned: str | None) -> tuple[list[Model], list[str]]:
        """Able members, pinned first, then by record; plus why the others were passed over."""
        models = self.p.registry.models()
        tokens = estimate_tokens(ask.prompt_text())
        able, passed = [], []
        for alias in collection.members:
            model = models.get(alias)
            if model is None:
                continue
            reason = self.p.seating.why_not(model, ask, tokens)
            if reason is None and ask.tools and self.p.seating.facts(model).get("tools") is False:
                reason = "no tool calling"
            if reason:
                passed.append(f"{alias}: {reason}")
            else:
                able.append(alias)
        ranked = rank(able, self.p.record.models(collection.name))
        order = [r.alias for r in ranked]
        if pinned in order:
            order.remove(pinned)
            order.insert(0, pinned)
        return [models[a] for a in order], [r.why for r in ranked] + passed

    # -- serving -------------------------------------------------------------------------------
    def serve(self, fmt, ask: Ask, info: RequestInfo, req: Request) -> Response:
        collection = self.p.collections.get(ask.target.name)
        idle = self.p.settings()["pin_idle_minutes"] * 60
        pin = conversation_key(ask, collection.name, info.headers, presented_key(req))
        pinned = self.pins.get(pin, idle)
        self._turns += 1
        if self._turns % 500 == 0:   # now and then, forget conversations that went quiet
            self.pins.expire(idle)
        order, why = self.candidates(ask, collection, pinned)
        if not order:
            raise BenchError(f"No member of {collection.name!r} can take this turn: " + "; ".join(why or
                             ["the collection has no members"]) + ".",
                             "Add members with tools to the collection, or wait for a rate limit to reset.",
                             status=503, code="no_member_available")
        turn = Turn(ask, collection.name, pin, why=(["pinned: " + pinned] if pinned == order[0].alias else []) + why)
        failures = []
        for model in order:
            turn.model, turn.call, turn.started, turn.ttft = model, new_id(), time.monotonic(), None
            try:
                if ask.stream:
                    head, rest = self._open(turn)
                else:
                    answer = self._whole(turn)
            except UpstreamFailed as e:
                failures.append((model.alias, e))
                if e.kind == "rate_limited" and e.reset_at:   # the next turns skip it until the reset
                    self.p.resting.mark(model.endpoint, e.reset_at)
                self._record(turn, FAILED, None, str(e))
                turn.failover_from.append({"model": model.alias, "call": turn.call, "error": str(e)})
                continue
            self.pins.set(pin, collection.name, model.alias)
            reply = ReplyInfo.for_ask(ask, info)
            headers = {"x-bench-call": turn.call, "x-bench-model": model.alias}
            if ask.stream:
                stream = fmt.stream(self._relay(turn, head, rest), reply)
                from .. import formats
                return Response.streaming(stream, formats.stream_content_type(fmt, reply), headers)
            reply.extra = self._bench(turn)
            self._record(turn, OK, answer, None)
            self._shadow(turn)
            return Response.json(fmt.render(answer, reply), headers=headers)
        raise self._all_failed(collection.name, failures)

    def _timeouts(self) -> Timeouts:
        t = self.p.settings()["seat_timeout"]
        return Timeouts(connect=min(10.0, t), first_byte=t, idle=t)

    def _events(self, turn: Turn) -> Iterator:
        provider = self.p.registry.provider_for(turn.model)
        if same_api(turn.ask, provider.api):
            return provider.stream_native(turn.ask, turn.model.served, timeouts=self._timeouts())
        return provider.stream(turn.ask, turn.model.served, timeouts=self._timeouts())

    def _open(self, turn: Turn) -> tuple[list, Iterator]:
        """Pull events until the first content arrives: a failure before it can still fail over."""
        it = self._events(turn)
        head = []
        for ev in it:
            head.append(ev)
            if isinstance(ev, CONTENT) or isinstance(ev, Finish):
                turn.ttft = time.monotonic() - turn.started
                break
        return head, it

    def _whole(self, turn: Turn):
        collector = Collector()
        for ev in self._events(turn):
            if turn.ttft is None and isinstance(ev, CONTENT):
                turn.ttft = time.monotonic() - turn.started
            collector.add(ev)
        return collector.result()

    def _relay(self, turn: Turn, head: list, rest: Iterator) -> Iterator:
        """Hand the member's events to the client's format; a failure after the first byte becomes the format's
        own stream error event, never a silently cut connection."""
        collector, status, error = Collector(), OK, None
        try:
            for source in (head, rest):
                for ev in source:
                    collector.add(ev)
                    if isinstance(ev, Finish):
                        ev = Finish(ev.reason, ev.usage, self._bench(turn))
                    yield ev
        except UpstreamFailed as e:
            status, error = FAILED, str(e)
            yield ErrorEvent(e)
        except GeneratorExit:
            status, error = FAILED, "the client went away mid-answer"
            raise
        finally:
            close = getattr(rest, "close", None)
            if close:
                close()   # releases the upstream connection when the client left early
            self._record(turn, status, collector.result(), error)
            if status == OK:
                self._shadow(turn)

    def _bench(self, turn: Turn) -> dict:
        return {"collection": turn.collection, "mode": ROUTE, "model": turn.model.alias, "call": turn.call,
                "failover_from": turn.failover_from}

    def _record(self, turn: Turn, status: str, answer, error: str | None, kind: str = "route",
                extra: dict | None = None) -> None:
        ask = turn.ask
        usage = answer.usage if answer else None
        self.p.calls.add(CallRecord(
            id=turn.call, model=turn.model.alias, status=status,
            collection=turn.collection, endpoint=turn.model.endpoint, served=turn.model.served, kind=kind,
            mode=ROUTE, error=error, request=summarise_request(ask), prompt_hash=prompt_hash(ask),
            answer=(answer.text or None) if answer else None, ttft=turn.ttft,
            seconds=round(time.monotonic() - turn.started, 4), input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0, caller=ask.caller,
            extra=extra or {"pin": turn.pin.rsplit("|", 1)[-1][:12], "choice": turn.why[:8],
                            "failover_from": turn.failover_from, "dropped": ask.dropped,
                            "tools_offered": [t.name for t in ask.tools],
                            "tools_called": [c.name for c in (answer.tool_calls if answer else [])]}))

    # -- shadow seats --------------------------------------------------------------------------
    def _shadow(self, turn: Turn) -> None:
        """N other members answer the same turn off the agent's path; recorded as shadow calls of the turn."""
        collection = self.p.collections.all().get(turn.collection)
        if not collection or not collection.shadow:
            return
        order, _ = self.candidates(turn.ask, collection, None)
        others = [m for m in order if m.alias != turn.model.alias][:collection.shadow]
        for model in others:
            self.p.panel.pool.submit(self._run_shadow, turn, model)

    def _run_shadow(self, turn: Turn, model: Model) -> None:
        shadow = Turn(turn.ask, turn.collection, turn.pin, model, call=new_id())
        answer, status, error = None, OK, None
        try:
            answer = self._whole(shadow)
        except BenchError as e:
            status, error = FAILED, str(e)
            if isinstance(e, UpstreamFailed) and e.kind == "rate_limited" and e.reset_at:
                self.p.resting.mark(model.endpoint, e.reset_at)
        except Exception as e:   # a shadow must never disturb anything
            log.exception("shadow seat %s failed", model.alias)
            status, error = FAILED, f"internal error: {type(e).__name__}"
        self._record(shadow, status, answer, error, kind="shadow", extra={"turn": turn.call})

    def _all_failed(self, collection: str, failures: list) -> BenchError:
        lines = "; ".join(f"{alias}: {err}" for alias, err in failures)
        if failures and all(err.kind == "rate_limited" for _, err in failures):
            waits = [err.retry_after for _, err in failures if err.retry_after]
            return RateLimited(f"Every member of {collection!r} is rate limited: {lines}",
                               "Wait for the reset, or add members.", retry_after=min(waits) if waits else 30)
        return BenchError(f"Every member of {collection!r} failed this turn: {lines}",
                          "Check the members with bench models.", status=502, code="all_members_failed")


NATIVE_API = {"openai_chat": "openai", "anthropic": "anthropic", "gemini": "gemini", "ollama": "ollama"}


def same_api(ask: Ask, api: str) -> bool:
    """Client and member speak the same API: pass the client's own body through so nothing is lost."""
    if ask.native is None or NATIVE_API.get(ask.format) != api:
        return False
    return ask.format != "ollama" or "messages" in ask.native   # /api/generate is not /api/chat


def serve_route(parts, fmt, ask: Ask, info: RequestInfo, req: Request) -> Response:
    return parts.ctx.service("router", lambda ctx: Router(parts)).serve(fmt, ask, info, req)
