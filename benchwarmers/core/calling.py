"""Calling one member for a panel seat, a merge or a route turn: its timeouts, its stream, and its call record."""
from __future__ import annotations

import copy
import os
from concurrent.futures import Future, wait
from dataclasses import replace
from typing import Callable, Iterator

from ..canonical import ROUTE, Answer, Ask, estimate_usage
from ..providers import Timeouts
from ..providers.llmclient import LlmClient
from ..roster.registry import Endpoint, Model, Registry
from ..roster.resting import Resting
from ..settings import CLIENTS
from ..store.calls import CallRecord, Calls, clip_stored, prompt_hash, summarise_request

SETTLE_SECONDS = 10.0   # the longest a reply waits for its records' commit (a commit normally takes milliseconds)

BUILTIN, LLM = CLIENTS
CLIENT_ENV = "BENCH_CLIENT"


def seat_timeouts(seconds: float) -> Timeouts:
    """The one place a seat's timeouts come from: `seat_timeout` for the first byte and between chunks,
    at most 10 s to connect."""
    return Timeouts(connect=min(10.0, seconds), first_byte=seconds, idle=seconds)


def budget(facts: dict, ask: Ask, default: int | None) -> int | None:
    """The output tokens to ask a member for: what the client asked (else `default`, when given), cut to what the
    model's context window leaves after the prompt and to its known output limit (`facts`: the model's, merged by
    the catalog). None leaves it to the upstream."""
    want = ask.max_tokens if ask.max_tokens is not None else default
    if want is None:
        return None
    window, limit = token_fact(facts, "context_window"), token_fact(facts, "max_output")
    if window:
        want = min(want, max(window - ask.prompt_tokens(), 1))   # a prompt that cannot fit is skipped before this
    return min(want, limit) if limit else want


def token_fact(facts: dict, name: str) -> int | None:
    value = facts.get(name)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def client_in_use(settings: dict, environ=None) -> tuple[str, str]:
    """(the client that makes member calls, what chose it): BENCH_CLIENT in the environment wins over the `client`
    setting. `bench serve` refuses a BENCH_CLIENT it does not know, so the fallback here is for embedders."""
    chosen = (os.environ if environ is None else environ).get(CLIENT_ENV, "").strip().lower()
    if not chosen:
        return settings["client"], "the client setting"
    return (chosen, CLIENT_ENV) if chosen in CLIENTS else (BUILTIN, f"{CLIENT_ENV}={chosen!r} is not a client")


def same_api(ask: Ask, api: str) -> bool:
    """Client and member speak the same API (the client's format declared which): the client's own body can go
    through, so nothing is lost."""
    return ask.native is not None and ask.native_api == api


class Caller:
    """Asks one member and records the call; panel seats, merges and route turns all go through it."""

    def __init__(self, registry: Registry, calls: Calls, resting: Resting, settings: Callable[[], dict],
                 facts: Callable[[Model], dict] | None = None):
        self.registry = registry
        self.calls = calls
        self.resting = resting
        self.settings = settings
        self.facts = facts or (lambda model: model.facts)   # the catalog's merged facts, in the service

    def stored_chars(self) -> int:
        return int(self.settings()["record_max_kb"] * 1024)

    def summary(self, ask: Ask) -> tuple[str, str]:
        """(what was asked, as stored: at most `record_max_kb`; the prompt's hash, over all of it)."""
        return summarise_request(ask, self.stored_chars()), prompt_hash(ask)

    def timeouts(self) -> Timeouts:
        return seat_timeouts(self.settings()["seat_timeout"])

    def budgeted(self, model: Model, ask: Ask) -> Ask:
        """The ask with this member's output budget. The `default_max_tokens` setting applies to panels, not to
        route mode: an agent that sends no limit sizes its own turns (a file written by a tool call may be long)."""
        default = None if ask.target and ask.target.mode == ROUTE else self.settings()["default_max_tokens"] or None
        tokens = budget(self.facts(model), ask, default)
        if tokens == ask.max_tokens:
            return ask
        seat_ask = replace(ask, max_tokens=tokens)
        seat_ask._tokens = ask._tokens
        return seat_ask

    def via_llm(self) -> bool:
        return client_in_use(self.settings())[0] == LLM

    def stream(self, model: Model, ask: Ask) -> Iterator:
        """The member's events; the client's own body when both speak the same API (never through llm)."""
        ask = self.budgeted(model, ask)
        if self.via_llm():
            return LlmClient(model.endpoint).stream(ask, model.served, timeouts=self.timeouts())
        provider = self.registry.provider_for(model)
        if same_api(ask, provider.api):
            return provider.stream_native(ask, model.served, timeouts=self.timeouts())
        return provider.stream(ask, model.served, timeouts=self.timeouts())

    def complete(self, model: Model, ask: Ask, endpoint: Endpoint | None = None, *,
                 timeouts: Timeouts | None = None) -> Answer:
        """The member's whole answer (`endpoint`: already looked up, e.g. once per panel; `timeouts`: a probe's or
        a speed test's own, else a seat's)."""
        if self.via_llm():
            provider = LlmClient(model.endpoint)
        else:
            provider = self.registry.provider(endpoint) if endpoint else self.registry.provider_for(model)
        answer = provider.complete(self.budgeted(model, ask), model.served, timeouts=timeouts or self.timeouts())
        estimate_usage(answer, ask)
        return answer

    def list_models(self, endpoint: Endpoint, timeouts: Timeouts | None = None) -> list[dict]:
        """What an endpoint serves now (health checks read it before retiring a model): the endpoint's own list,
        always through the built-in client."""
        models = self.registry.provider(endpoint).list_models(timeouts=timeouts)
        self.registry.note_listing(endpoint, models)
        return models

    def over(self, registry: Registry) -> "Caller":
        """This caller on another registry (the scheduler's, with a connection pool of its own): the same
        record, resting and settings, so whatever hooks into calls here holds for both."""
        other = copy.copy(self)
        other.registry = registry
        return other

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
        if answer is not None:
            estimate_usage(answer, ask)
        usage = answer.usage if answer else None
        said = clip_stored(answer.text or None, self.stored_chars()) if answer else None
        tokens = self.budgeted(model, ask).max_tokens if answer is not None else ask.max_tokens
        if tokens != ask.max_tokens:   # what this member was really asked for: the client's cut, or the default
            extra = {**(extra or {}), "max_tokens": tokens}
        return self.calls.add(CallRecord(
            id=call_id, model=model.alias, status=status, panel=panel, collection=collection,
            endpoint=model.endpoint, served=model.served, kind=kind, mode=mode, seat=seat, error=error,
            request=summary, prompt_hash=digest, answer=said,
            ttft=ttft if ttft is not None or answer is None else answer.ttft, seconds=round(seconds, 4),
            input_tokens=usage.input_tokens if usage else 0, output_tokens=usage.output_tokens if usage else 0,
            tokens_estimated=bool(usage and usage.estimated), caller=ask.caller, session=ask.session, extra=extra))

    @staticmethod
    def settle(records: list[Future], timeout: float = SETTLE_SECONDS) -> None:
        """Wait until these call records are committed, so what a client is told about (its call ids) survives a
        crash of the service from then on. A store that cannot write fails the futures at once (its health says
        why): the answer still goes out, its record does not."""
        pending = [f for f in records if not f.done()]
        if pending:
            wait(pending, timeout)
