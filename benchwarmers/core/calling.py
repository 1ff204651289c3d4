"""Calling one member for a panel seat, a merge or a route turn: its timeouts, its stream, and its call record."""
from __future__ import annotations

from concurrent.futures import Future, wait
from typing import Callable, Iterator

from ..canonical import Answer, Ask
from ..providers import Timeouts
from ..roster.registry import Endpoint, Model, Registry
from ..roster.resting import Resting
from ..store.calls import CallRecord, Calls, clip_stored, prompt_hash, summarise_request

SETTLE_SECONDS = 10.0   # the longest a reply waits for its records' commit (a commit normally takes milliseconds)


def seat_timeouts(seconds: float) -> Timeouts:
    """The one place a seat's timeouts come from: `seat_timeout` for the first byte and between chunks,
    at most 10 s to connect."""
    return Timeouts(connect=min(10.0, seconds), first_byte=seconds, idle=seconds)


def same_api(ask: Ask, api: str) -> bool:
    """Client and member speak the same API (the client's format declared which): the client's own body can go
    through, so nothing is lost."""
    return ask.native is not None and ask.native_api == api


class Caller:
    """Asks one member and records the call; panel seats, merges and route turns all go through it."""

    def __init__(self, registry: Registry, calls: Calls, resting: Resting, settings: Callable[[], dict]):
        self.registry = registry
        self.calls = calls
        self.resting = resting
        self.settings = settings

    def stored_chars(self) -> int:
        return int(self.settings()["record_max_kb"] * 1024)

    def summary(self, ask: Ask) -> tuple[str, str]:
        """(what was asked, as stored: at most `record_max_kb`; the prompt's hash, over all of it)."""
        return summarise_request(ask, self.stored_chars()), prompt_hash(ask)

    def timeouts(self) -> Timeouts:
        return seat_timeouts(self.settings()["seat_timeout"])

    def stream(self, model: Model, ask: Ask) -> Iterator:
        """The member's events; the client's own body when both speak the same API."""
        provider = self.registry.provider_for(model)
        if same_api(ask, provider.api):
            return provider.stream_native(ask, model.served, timeouts=self.timeouts())
        return provider.stream(ask, model.served, timeouts=self.timeouts())

    def complete(self, model: Model, ask: Ask, endpoint: Endpoint | None = None) -> Answer:
        """The member's whole answer (`endpoint`: already looked up, e.g. once per panel)."""
        provider = self.registry.provider(endpoint) if endpoint else self.registry.provider_for(model)
        return provider.complete(ask, model.served, timeouts=self.timeouts())

    def failed(self, model: Model, error: BaseException) -> None:
        """A call failed: a rate limit rests what it names (this model, or its whole connection) until its reset."""
        self.resting.observe(model.endpoint, model.served, error)

    def record(self, call_id: str, model: Model, ask: Ask, status: str, *, kind: str, mode: str, seconds: float,
               answer: Answer | None = None, ttft: float | None = None, error: str | None = None,
               collection: str | None = None, panel: str | None = None, seat: int | None = None,
               request: tuple[str, str] | None = None, extra: dict | None = None) -> Future:
        """The one way a call record is made. `request`: (summary, prompt hash) when already computed for the ask.
        The record is queued for the writer's next batch; the Future is done once it is committed (see settle)."""
        summary, digest = request or self.summary(ask)
        usage = answer.usage if answer else None
        said = clip_stored(answer.text or None, self.stored_chars()) if answer else None
        return self.calls.add(CallRecord(
            id=call_id, model=model.alias, status=status, panel=panel, collection=collection,
            endpoint=model.endpoint, served=model.served, kind=kind, mode=mode, seat=seat, error=error,
            request=summary, prompt_hash=digest, answer=said,
            ttft=ttft if ttft is not None or answer is None else answer.ttft, seconds=round(seconds, 4),
            input_tokens=usage.input_tokens if usage else 0, output_tokens=usage.output_tokens if usage else 0,
            caller=ask.caller, extra=extra))

    @staticmethod
    def settle(records: list[Future], timeout: float = SETTLE_SECONDS) -> None:
        """Wait until these call records are committed, so what a client is told about (its call ids) survives a
        crash of the service from then on. A store that cannot write fails the futures at once (its health says
        why): the answer still goes out, its record does not."""
        pending = [f for f in records if not f.done()]
        if pending:
            wait(pending, timeout)
