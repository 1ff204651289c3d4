"""Calling one member for a panel seat, a merge or a route turn: its timeouts, its stream, and its call record."""
from __future__ import annotations

import copy
import os
import time
from typing import Callable, Iterator

from ..canonical import EXPLORE, MEMBER, ROUTE, SKIPPED, Answer, Ask, estimate_usage
from ..errors import QuotaRefused
from ..providers import Timeouts
from ..providers.hangup import Hangup
from ..providers.llmclient import LlmClient
from ..providers.transport import Sent
from ..roster.quota import PROVIDER, Quota, Refusal
from ..roster.registry import Endpoint, Model, Registry
from ..roster.resting import Resting
from ..settings import CLIENTS
from ..store.calls import CallRecord, Calls, clip_stored, prompt_hash, summarise_request
from ..store.db import Written
from ..store.ledger import Ledger, Line, cost_of

SETTLE_SECONDS = 10.0   # the longest a reply waits for its records' commit (a commit normally takes milliseconds)

BUILTIN, LLM = CLIENTS
CLIENT_ENV = "BENCH_CLIENT"
CLIENT_MEMO = ("client",)   # where a Config.steady() memo keeps via_llm()'s answer (not a file name)
OWN_LINE = ("probe", "speed")      # calls with no call record: complete() writes their ledger line itself
BACKGROUND = ("probe", "speed", "suite")   # work nobody waits on: it may wait longer for a rate limit


FEWEST_FIT = 256   # the fewest output tokens a speed-fitted cap asks for: fewer is rarely an answer


def seat_timeouts(seconds: float, hangup: Hangup | None = None) -> Timeouts:
    """The one place a seat's timeouts come from: `seat_timeout` for the first byte and between chunks,
    at most 10 s to connect; `hangup` lets the panel stop the call."""
    return Timeouts(connect=min(10.0, seconds), first_byte=seconds, idle=seconds, hangup=hangup)


def fitted(default: int, pace: tuple | None, seconds: float) -> int:
    """`default` cut to what a model of measured `pace` (ttft, tokens per second) writes in `seconds`: a slow local
    model asked for 4,096 tokens would hold its seat for minutes. Unmeasured, or too fast to matter: `default`."""
    tps = pace[1] if pace else None
    if not tps:
        return default
    room = max(seconds - (pace[0] or 0.0), 1.0)
    return max(min(default, int(tps * room)), min(default, FEWEST_FIT))


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
                 facts: Callable[[Model], dict] | None = None, *, quota: Quota | None = None,
                 price: Callable[[Model], tuple] | None = None, paces: Callable[[str], tuple | None] | None = None):
        self.registry = registry
        self.calls = calls
        self.resting = resting
        self.settings = settings
        self.facts = facts or (lambda model: model.facts)   # the catalog's merged facts, in the service
        self.quota = quota                 # the rate limits checked before each call (None: none)
        self.price = price or (lambda model: (model.facts.get("price_in"), model.facts.get("price_out"), None))
        self.paces = paces or (lambda alias: None)   # a model's measured (ttft, tokens per second), if any
        self.ledger = Ledger(calls.db)
        self.scheduled = False             # the scheduler's copy (see over) marks its calls so

    def stored_chars(self) -> int:
        return int(self.settings()["record_max_kb"] * 1024)

    def summary(self, ask: Ask) -> tuple[str, str]:
        """(what was asked, as stored: at most `record_max_kb`; the prompt's hash, over all of it)."""
        return summarise_request(ask, self.stored_chars()), prompt_hash(ask)

    def timeouts(self, hangup: Hangup | None = None) -> Timeouts:
        return seat_timeouts(self.settings()["seat_timeout"], hangup)

    def tokens(self, model: Model, ask: Ask) -> int | None:
        """This member's output budget for the ask. The `default_max_tokens` setting applies to panels, not to
        route mode: an agent that sends no limit sizes its own turns (a file written by a tool call may be long);
        for a model whose speed was measured it is cut to what the model writes in `panel_seconds`."""
        if ask.target and ask.target.mode == ROUTE:
            default = None
        else:
            settings = self.settings()
            default = settings["default_max_tokens"] or None
            if default and ask.max_tokens is None:
                default = fitted(default, self.paces(model.alias), settings["panel_seconds"])
        return budget(self.facts(model), ask, default)

    def budgeted(self, model: Model, ask: Ask) -> Ask:
        """The ask with this member's output budget (a shallow copy when it differs: the parts are shared)."""
        tokens = self.tokens(model, ask)
        if tokens == ask.max_tokens:
            return ask
        return ask.with_max_tokens(tokens)

    def via_llm(self) -> bool:
        """Whether llm makes the member calls; worked out once a request (Config.steady), not once a seat."""
        memo = self.registry.config.memo()
        hit = memo.get(CLIENT_MEMO) if memo is not None else None
        if hit is None:
            hit = client_in_use(self.settings())[0] == LLM
            if memo is not None:
                memo[CLIENT_MEMO] = hit
        return hit

    # ---- rate limits, before anything is sent --------------------------------------------------------
    def patience(self, kind: str, ask: Ask) -> float:
        """The longest a call may wait for a rate limit: none for an explore seat (another model takes it), the
        longer `limit_wait_scheduled_seconds` for the scheduler's and the suite's calls, probes and speed tests,
        `limit_wait_seconds` for everything an ask waits on."""
        settings = self.settings()
        if kind == EXPLORE:
            return 0.0
        if self.scheduled or kind in BACKGROUND or ask.origin in BACKGROUND:
            return settings["limit_wait_scheduled_seconds"]
        return settings["limit_wait_seconds"]

    def refuse_early(self, model: Model, ask: Ask, kind: str) -> None:
        """Raise QuotaRefused now when one of the user's rate limits would keep this call waiting longer than it
        may (the scheduler asks before it takes an endpoint's turn, which checks the provider's rests itself);
        nothing is counted."""
        refusal = self.quota.blocked(model, ask.prompt_tokens(), provider=False) if self.quota else None
        now = self.quota.clock.now() if self.quota else 0.0
        if refusal and refusal.at - now > self.patience(kind, ask):
            raise QuotaRefused(refusal.text(), refusal.at, now)

    def admit(self, model: Model, ask: Ask, kind: str, wait: bool = True) -> bool:
        """Count this call against its connection's and model's limits, waiting for them when the wait is within
        its patience; otherwise raise QuotaRefused, and nothing is sent. `wait` False: False rather than a wait
        (nothing is counted then)."""
        if self.quota is None:
            return True
        clock = self.quota.clock
        deadline = clock.now() + self.patience(kind, ask)
        tokens = ask.prompt_tokens()
        while True:
            rest = self.quota.rested(model)
            refusal = Refusal(rest, PROVIDER, model.endpoint, "rest") if rest else self.quota.take(model, tokens)
            if refusal is None:
                return True
            now = clock.now()
            if refusal.at > deadline:
                raise QuotaRefused(refusal.text(), refusal.at, now)
            if not wait:
                return False
            clock.sleep(max(refusal.at - now, 0.001))

    # ---- calls ---------------------------------------------------------------------------------------
    def stream(self, model: Model, ask: Ask, kind: str = MEMBER) -> Iterator:
        """The member's events; the client's own body when both speak the same API (never through llm). The rate
        limits are checked (and the call counted) now: QuotaRefused means nothing was sent."""
        ask = self.budgeted(model, ask)
        self.admit(model, ask, kind)
        if self.via_llm():
            return LlmClient(model.endpoint).stream(ask, model.served, timeouts=self.timeouts())
        provider = self.registry.provider_for(model)
        if same_api(ask, provider.api):
            return provider.stream_native(ask, model.served, timeouts=self.timeouts())
        return provider.stream(ask, model.served, timeouts=self.timeouts())

    def complete(self, model: Model, ask: Ask, endpoint: Endpoint | None = None, *,
                 timeouts: Timeouts | None = None, kind: str = MEMBER, whole: bool = False,
                 admitted: bool = False, hangup: Hangup | None = None) -> Answer:
        """The member's whole answer (`endpoint`: already looked up, e.g. once per panel; `timeouts`: a probe's or
        a speed test's own, else a seat's). A probe or a speed test (`kind`) has no call record: its ledger line
        is written here. `whole`: asked of the upstream in one piece, not streamed (a panel seat: less to read, and
        no time to first token to measure); the llm client always streams. `admitted`: the limits counted this
        call already (send_seat did). `hangup`: lets the panel stop a seat's call (the built-in client only)."""
        if self.via_llm():
            provider, how = LlmClient(model.endpoint), {}
        else:
            provider, how = self._provider(model, endpoint), {"whole": whole}
        if not admitted:
            self.admit(model, ask, kind)
        answer = None
        try:
            answer = provider.complete(self.budgeted(model, ask), model.served,
                                       timeouts=timeouts or self.timeouts(hangup), **how)
            estimate_usage(answer, ask)
            return answer
        finally:
            if kind in OWN_LINE:
                self.ledger.add(self.line(model, ask, kind, answer))

    def send_seat(self, model: Model, ask: Ask, endpoint: Endpoint | None, kind: str,
                  hangup: Hangup | None = None) -> tuple[Sent | None, bool]:
        """A panel seat's request written now on a kept-alive connection, its answer to be read by answer() once it
        is in (no thread waits for it meanwhile): (the request, True). (None, whether the limits counted the call)
        when it must go the blocking way, complete(): through llm, a limit to wait for, or no connection free.
        QuotaRefused when a limit refuses it."""
        if self.via_llm() or not self.admit(model, ask, kind, wait=False):
            return None, False
        sent = self._provider(model, endpoint).send_whole(self.budgeted(model, ask), model.served,
                                                           timeouts=self.timeouts(hangup))
        return sent, True

    def answer(self, model: Model, ask: Ask, sent: Sent, endpoint: Endpoint | None = None) -> Answer:
        """The answer to a seat's request that send_seat() wrote; blocks only when it is not all in yet."""
        answer = self._provider(model, endpoint).complete(ask, model.served, timeouts=sent.t, sent=sent)
        estimate_usage(answer, ask)
        return answer

    def _provider(self, model: Model, endpoint: Endpoint | None):
        return self.registry.provider(endpoint) if endpoint else self.registry.provider_for(model)

    def list_models(self, endpoint: Endpoint, timeouts: Timeouts | None = None) -> list[dict]:
        """What an endpoint serves now (health checks read it before retiring a model): the endpoint's own list,
        always through the built-in client."""
        models = self.registry.provider(endpoint).list_models(timeouts=timeouts)
        self.registry.note_listing(endpoint, models)
        return models

    def over(self, registry: Registry, scheduled: bool = False) -> "Caller":
        """This caller on another registry (the scheduler's, with a connection pool of its own): the same
        record, resting, limits and settings, so whatever hooks into calls here holds for both. `scheduled`: its
        calls are the scheduler's (they wait longer for a rate limit, and the ledger says so)."""
        other = copy.copy(self)
        other.registry = registry
        other.scheduled = scheduled
        return other

    def unsent(self, model: Model, ask: Ask) -> None:
        """A call the limits counted that was then never written (a panel seat hung up first): its prompt tokens are
        taken back from the counts (its request stays counted: it took its turn)."""
        if self.quota is not None:
            self.quota.spent(model, -ask.prompt_tokens())

    def failed(self, model: Model, error: BaseException) -> None:
        """A call failed: a rate limit rests what it names (this model, or its whole connection) until its reset (one
        of our own limits, that refused a call before it was sent, rests nothing: it is counted here already)."""
        if not isinstance(error, QuotaRefused):
            self.resting.observe(model.endpoint, model.served, error)

    def line(self, model: Model, ask: Ask, kind: str, answer: Answer | None, collection: str | None = None,
             call: str | None = None, counted: int | None = None) -> Line:
        """The ledger line of a call that was sent, priced at what is known now; its tokens also go to the limits'
        counts (`counted`: the prompt tokens counted when it went, else the ask's)."""
        usage = answer.usage if answer else None
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        price_in, price_out, _ = self.price(model)
        if self.quota is not None:
            self.quota.spent(model, tokens_in + tokens_out - (ask.prompt_tokens() if counted is None else counted))
        return Line(model.endpoint, model.alias, ask.origin or kind, tokens_in, tokens_out,
                    usage.cache_read_tokens if usage else 0, cost_of(price_in, price_out, tokens_in, tokens_out),
                    collection, call, bool(usage and usage.estimated), self.scheduled,
                    self.now())

    def now(self) -> float:
        """The ledger's time: its lines are stamped with the limits' clock (the scheduler's; tests hold it)."""
        return self.quota.clock.now() if self.quota else time.time()

    def record(self, call_id: str, model: Model, ask: Ask, status: str, *, kind: str, mode: str, seconds: float,
               answer: Answer | None = None, ttft: float | None = None, error: str | None = None,
               collection: str | None = None, panel: str | None = None, seat: int | None = None,
               request: tuple[str, str] | None = None, extra: dict | None = None,
               counted: int | None = None, sent: bool | None = None, amend: float | None = None,
               turn: str | None = None) -> Written:
        """The one way a call record is made. `request`: (summary, prompt hash) when already computed for the ask
        (summary None: it is kept in the call's panel's row).
        A call that was sent (`sent`; by default, any status but skipped) gets its ledger line with it; `counted`:
        the prompt tokens its limits counted when it went, when it was sent with another ask than `ask` (a merge).
        `amend`: this call's record was made already (a seat the panel stopped waiting for), its ledger line at or
        after this moment (now()'s clock): it is brought up to date, its line corrected, not added. `turn`: a shadow
        seat's route turn. The record is
        queued for the writer's next batch; it is done once it is committed (see settle)."""
        summary, digest = request or self.summary(ask)
        if answer is not None:
            estimate_usage(answer, ask)
        usage = answer.usage if answer else None
        said = clip_stored(answer.text or None, self.stored_chars()) if answer else None
        tokens = self.tokens(model, ask) if answer is not None else ask.max_tokens
        if tokens != ask.max_tokens:   # what this member was really asked for: the client's cut, or the default
            extra = {**(extra or {}), "max_tokens": tokens}
        sent = status != SKIPPED if sent is None else sent
        line = self.line(model, ask, kind, answer, collection, call_id, counted) if sent else None
        return self.calls.add(CallRecord(
            id=call_id, model=model.alias, status=status, panel=panel, collection=collection,
            endpoint=model.endpoint, served=model.served, kind=kind, mode=mode, seat=seat, error=error,
            request=summary, prompt_hash=digest, answer=said,
            ttft=ttft if ttft is not None or answer is None else answer.ttft, seconds=round(seconds, 4),
            input_tokens=usage.input_tokens if usage else 0, output_tokens=usage.output_tokens if usage else 0,
            tokens_estimated=bool(usage and usage.estimated), caller=ask.caller, session=ask.session, extra=extra,
            turn=turn, finish_reason=answer.finish_reason if answer is not None else None), line, amend)

    @staticmethod
    def settle(records: list[Written], timeout: float = SETTLE_SECONDS) -> None:
        """Wait until these call records are committed, so what a client is told about (its call ids) survives a
        crash of the service from then on. A store that cannot write fails the writes at once (its health says
        why): the answer still goes out, its record does not."""
        deadline = time.monotonic() + timeout
        for record in records:   # they commit in batches, in order: one wait usually does it
            if not record.done():
                try:
                    record.exception(max(0.0, deadline - time.monotonic()))
                except TimeoutError:
                    return
