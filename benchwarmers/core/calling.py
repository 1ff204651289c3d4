"""Calling one member for a panel seat, a merge or a route turn: its timeouts, its stream, and its call record."""
from __future__ import annotations

import copy
import time
from functools import partial
from typing import Callable, Iterator

from ..askparts import ANYONE, NO_PASSTHROUGH, Asker, PassThrough
from ..baseurls import local_server
from ..canonical import EXPLORE, MEMBER, OK, ROUTE, Answer, Ask, estimate_usage
from ..errors import BudgetRefused, QuotaRefused
from ..providers import Provider, Timeouts
from ..providers.hangup import Hangup
from ..providers.dispatch import NO_TAP, Call, Dispatch, Done, SeatTap, Worker
from ..providers.llmcalls import LlmCalls
from ..roster.limits.budgets import BudgetRefusal, Budgets, Charge
from ..roster.limits.quota import PROVIDER, Quota, Refusal
from ..roster.limits.resting import Resting
from ..roster.registry import Endpoint, Model, Registry
from ..store.calls import Calls
from ..store.ids import new_id
from ..store.batches import first_error
from ..store.db import Written
from ..store.ledger import Ledger, Line, cost_of
from .callsizes import LLM, budget, client_in_use, fitted, seat_timeouts
from .pricing import Pricing, charge
from .recorder import Ended, request_summary, write

SETTLE_SECONDS = 10.0   # the longest a reply waits for its records' commit (a commit normally takes milliseconds)

CLIENT_MEMO = ("client",)   # where a Config.steady() memo keeps via_llm()'s answer (not a file name)
TOKENS_MEMO = "output tokens"   # the first part of the memo's key for a tokens() answer
NO_PACE = object()   # a tokens() answer that read no pace (route mode, or the client's own max_tokens)
OWN_LINE = ("probe", "speed")      # calls with no call record: complete() writes their ledger line itself
BACKGROUND = ("probe", "speed", "suite")   # work nobody waits on: it may wait longer for a rate limit


class Dialer:
    """Asks one member and records the call; panel seats, merges and route turns all go through it."""

    def __init__(self, registry: Registry, calls: Calls, resting: Resting, settings: Callable[[], dict],
                 facts: Callable[[Model], dict] | None = None, *, quota: Quota | None = None,
                 price: Callable[[Model], tuple] | None = None, paces: Callable[[str], tuple | None] | None = None,
                 budgets: Budgets | None = None):
        self.registry = registry
        self.calls = calls
        self.resting = resting
        self.settings = settings
        self.facts = facts or (lambda model: model.facts)   # the catalog's merged facts, in the service
        self.quota = quota                 # the rate limits checked before each call (None: none)
        self.price = price or (lambda model: (model.facts.get("price_in"), model.facts.get("price_out"), None))
        self.paces = paces or (lambda alias: None)   # a model's measured (ttft, tokens per second), if any
        self.budgets = budgets             # the monthly budgets in dollars checked before each call (None: none)
        self.pricing = Pricing(self.price, self.facts, self.tokens)   # what a call may cost, and did
        self.ledger = Ledger(calls.db)
        self.scheduled = False             # the scheduler's copy (see over) marks its calls so
        self.dispatch = Dispatch()         # how the bytes move: shared with over()'s copies

    def stored_chars(self) -> int:
        return int(self.settings()["record_max_kb"] * 1024)

    def summary(self, ask: Ask) -> tuple[str, str]:
        """(what was asked, as stored: at most `record_max_kb`; the prompt's hash, over all of it)."""
        return request_summary(ask, self.stored_chars())

    def timeouts(self, hangup: Hangup | None = None) -> Timeouts:
        return seat_timeouts(self.settings()["seat_timeout"], hangup)

    def tokens(self, model: Model, ask: Ask, settings: dict | None = None) -> int | None:
        """This member's output budget for the ask: the client's own max_tokens, else the `default_max_tokens`
        setting, which applies to panels, not to route mode (an agent that sends no limit sizes its own turns: a
        file written by a tool call may be long); the default is cut to what the model writes in `panel_seconds`
        when its speed was measured, else to UNMEASURED. Either way cut to the model's window and output limit.
        `settings`: the caller's self.settings(). Kept in the request's memo for the model's latest ask (a seat's
        record asks what its send did), worked out again only when what it came from changed: the model's facts, or
        its pace (a speed measured meanwhile: the record then says what today's value is, as it always did)."""
        memo = self.registry.config.memo()
        key = (TOKENS_MEMO, model.alias)   # one answer kept a model (a model and an ask are not hashable)
        try:
            hit = memo[key] if memo is not None else None
        except KeyError:
            hit = None
        facts = self.facts(model)
        if hit is not None and hit[0] is model and hit[1] is ask and hit[2] == (ask.max_tokens, ask.target) and \
                hit[3] is facts and (hit[4] is NO_PACE or hit[4] == self.paces(model.alias)):
            return hit[5]   # the settings are the request's too: Bench.settings keeps them in this same memo
        pace = NO_PACE
        if ask.target and ask.target.mode == ROUTE:
            default = None
        else:
            settings = self.settings() if settings is None else settings
            default = settings["default_max_tokens"] or None
            if default and ask.max_tokens is None:
                default = fitted(default, pace := self.paces(model.alias), settings["panel_seconds"])
        tokens = budget(facts, ask, default)
        if memo is not None:
            memo[key] = (model, ask, (ask.max_tokens, ask.target), facts, pace, tokens)
        return tokens

    def budgeted(self, model: Model, ask: Ask, settings: dict | None = None) -> Ask:
        """The ask with this member's output budget (a shallow copy when it differs: the parts are shared)."""
        tokens = self.tokens(model, ask, settings)
        if tokens == ask.max_tokens:
            return ask
        return ask.with_max_tokens(tokens)

    def via_llm(self) -> bool:
        """Whether llm makes the member calls; worked out once a request (Config.steady), not once a seat."""
        return self.registry.config.kept(CLIENT_MEMO, self._via_llm)

    def _via_llm(self) -> bool:
        return client_in_use(self.settings())[0] == LLM

    # ---- rate limits, before anything is sent --------------------------------------------------------
    def patience(self, kind: str, asker: Asker = ANYONE) -> float:
        """The longest a call may wait for a rate limit: none for an explore seat (another model takes it), the
        longer `limit_wait_scheduled_seconds` for the scheduler's and the suite's calls (`asker`'s origin),
        probes and speed tests, `limit_wait_seconds` for everything an ask waits on."""
        settings = self.settings()
        if kind == EXPLORE:
            return 0.0
        if self.scheduled or kind in BACKGROUND or asker.origin in BACKGROUND:
            return settings["limit_wait_scheduled_seconds"]
        return settings["limit_wait_seconds"]

    def refuse_early(self, model: Model, ask: Ask, kind: str) -> None:
        """Raise QuotaRefused now when one of the user's rate limits would keep this call waiting longer than it
        may (the scheduler asks before it takes an endpoint's turn, which checks the provider's rests itself);
        nothing is counted."""
        refusal = self.quota.blocked(model, ask.prompt_tokens(), provider=False) if self.quota else None
        now = self.quota.clock.now() if self.quota else 0.0
        if refusal and refusal.at - now > self.patience(kind):
            raise QuotaRefused(refusal.text(), refusal.at, now)

    def admit(self, model: Model, ask: Ask, kind: str, wait: bool = True, asker: Asker = ANYONE,
              call: str | None = None) -> bool:
        """Hold the call's estimate on its budgets (`call`: its id, which its record books against; BudgetRefused when
        one has no room), then count it against its connection's and model's rate limits, waiting for them when the
        wait is within its patience; otherwise raise QuotaRefused, and nothing is sent (its hold let go). `wait`
        False: False rather than a wait (nothing is counted or held then)."""
        if call is not None:
            self.reserve(model, ask, asker, call)
        try:
            admitted = self._take(model, ask, kind, wait, asker)
        except QuotaRefused:
            self._let_go(model, ask, asker, call)
            raise
        if not admitted:
            self._let_go(model, ask, asker, call)
        return admitted

    def _take(self, model: Model, ask: Ask, kind: str, wait: bool, asker: Asker) -> bool:
        if self.quota is None:
            return True
        clock = self.quota.clock
        start, deadline = clock.now(), None   # its patience is looked up at the first refusal (most calls have none)
        tokens, resting = ask.prompt_tokens(), self.quota.resting
        while True:
            rest = resting.until(model.endpoint, model.served)   # quota.rested(), one step less
            refusal = Refusal(rest, PROVIDER, model.endpoint, "rest") if rest else \
                self.quota.take(model, tokens, start if deadline is None else None)   # a first try: now is start
            if refusal is None:
                return True
            now = clock.now()
            deadline = start + self.patience(kind, asker) if deadline is None else deadline
            if refusal.at > deadline:
                raise QuotaRefused(refusal.text(), refusal.at, now)
            if not wait:
                return False
            clock.sleep(max(refusal.at - now, 0.001))

    # ---- budgets in dollars, before anything is sent ---------------------------------------------------
    def estimate(self, model: Model, ask: Ask) -> float | None:
        """The most this call can cost (pricing.Pricing.estimate); None when no price is known."""
        return self.pricing.estimate(model, ask)

    def over_budget(self, model: Model, ask: Ask, asker: Asker = ANYONE) -> BudgetRefusal | None:
        """The budget this call would pass now (nothing held: seating's look before it seats a model)."""
        budgets = self.budgets   # none set (most benches): no charge made; none applies: no estimate worked out
        if budgets is None or not budgets.set() or not budgets.applying(bill := charge(model, ask, asker)):
            return None
        return budgets.check(bill, self.estimate(model, ask))

    def reserve(self, model: Model, ask: Ask, asker: Asker, call: str) -> None:
        """Hold the call's estimate on every budget it counts against, or raise BudgetRefused (nothing is held)."""
        budgets = self.budgets
        if budgets is None or not budgets.set() or not budgets.applying(bill := charge(model, ask, asker, call)):
            return
        refusal = budgets.reserve(bill, self.estimate(model, ask))
        if refusal is not None:
            raise BudgetRefused(refusal.text(), refusal.at, self.now())

    def _let_go(self, model: Model, ask: Ask, asker: Asker, call: str | None) -> None:
        """A held call that will not go after all: nothing is booked, the hold is let go."""
        if call is not None and self.budgets is not None:
            self.budgets.book(charge(model, ask, asker, call), 0.0)

    def month_end(self) -> float | None:
        """When this month's budgets reset (the user's time zone); None without budgets."""
        return self.budgets.month()[2] if self.budgets is not None else None

    # ---- calls ---------------------------------------------------------------------------------------
    def client(self, model: Model, endpoint: Endpoint | None = None) -> Provider | LlmCalls:
        """What sends this member's calls: the llm client when it makes them, else the endpoint's provider."""
        if self.via_llm():
            return LlmCalls(model.endpoint)
        return self.registry.provider(endpoint) if endpoint else self.registry.provider_for(model)

    def stream(self, model: Model, ask: Ask, kind: str = MEMBER, asker: Asker = ANYONE,
               native: PassThrough = NO_PASSTHROUGH, call: str | None = None) -> Iterator:
        """The member's events (the dispatcher picks the request's shape: `native`, the client's own body, goes to
        a member of its API). The budgets and rate limits are checked (and the call held and counted) now:
        QuotaRefused (BudgetRefused) means nothing was sent. `call`: the id its record will have."""
        ask = self.budgeted(model, ask)
        self.admit(model, ask, kind, asker=asker, call=call)
        return self.dispatch.stream(self.client(model), ask, model.served, self.timeouts(), native)

    def complete(self, model: Model, ask: Ask, *, timeouts: Timeouts | None = None, kind: str = MEMBER,
                 asker: Asker = ANYONE) -> Answer:
        """The member's whole answer, streamed (`timeouts`: a probe's or a speed test's own, else a seat's). A probe
        or a speed test (`kind`) has no call record: its ledger line is written here (and its cost booked)."""
        hold = new_id("h_")
        self.admit(model, ask, kind, asker=asker, call=hold)
        answer = None
        try:
            answer = self.client(model).complete(self.budgeted(model, ask), model.served,
                                                 timeouts=timeouts or self.timeouts())
            estimate_usage(answer, ask)
            self.resting.answered(model.endpoint, model.served)    # a probe that answers ends a rest on failures
            return answer
        finally:
            line = self.line(model, ask, kind, answer)
            if kind in OWN_LINE:
                self.recount(model, ask, answer)
                self.ledger.add(line)
            if self.budgets is not None:
                self.budgets.book(charge(model, ask, asker, hold), line.cost)

    def seat(self, model: Model, ask: Ask, endpoint: Endpoint | None, kind: str, hangup: Hangup | None,
             worker: Worker, done: Done, asker: Asker = ANYONE, timeouts: Timeouts | None = None,
             tap: SeatTap = NO_TAP) -> None:
        """A panel seat's call (or its referee's: `timeouts` its own), asked for whole or streamed (streamed_seat) and
        sent the way the dispatcher chooses (`worker` runs what may block); `done(call, answer, error)` is told once it
        is over. `hangup` lets the panel stop it; `tap`: its record's id (its budgets' hold's), and who hears its text
        as it comes (so it is asked streamed)."""
        client, settings = self.client(model, endpoint), self.settings()   # one look at the settings a seat
        call = Call(client, self.budgeted(model, ask, settings), model.served,
                    timeouts or seat_timeouts(settings["seat_timeout"], hangup),
                    partial(self.admit, model, ask, kind, asker=asker, call=tap.record), reported=ask, heard=tap.heard)
        call.streamed, call.local = (True, None) if tap.heard is not None else self.streamed_seat(client, settings)
        self.dispatch.submit(call, worker, done)

    def streamed_seat(self, client, settings: dict | None = None) -> tuple[bool | None,
                                                                          Callable[[], bool | None] | None]:
        """(whether a seat asks `client` streamed, or None when that waits for a DNS answer; what a worker then asks
        to decide). Whole is cheaper, but a server asked for a whole answer may go on writing it for nobody once the
        seat is given up (llama.cpp's does: it notices a client gone only while it streams), which keeps a one-slot
        local server from the next ask; so by `stream_seats`, seats on a local server are asked streamed."""
        how = (self.settings() if settings is None else settings)["stream_seats"]
        if how == "none" or not isinstance(client, Provider):   # llm streams every call anyway
            return False, None
        if how == "all":
            return True, None
        return local_server(client.base, look_up=False), partial(local_server, client.base)

    def list_models(self, endpoint: Endpoint, timeouts: Timeouts | None = None) -> list[dict]:
        """What an endpoint serves now (health checks read it before retiring a model): the endpoint's own list,
        always through the built-in client."""
        models = self.registry.provider(endpoint).list_models(timeouts=timeouts)
        self.registry.note_listing(endpoint, models)
        return models

    def over(self, registry: Registry, scheduled: bool = False) -> "Dialer":
        """This dialer on another registry (the scheduler's, with a connection pool of its own): the same
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

    def free_at(self, model: Model) -> float | None:
        """When a rate limit (a provider's rest, or one of the user's limits) lets `model` be called again, on the
        clock of now(); None when nothing is known to hold it."""
        if self.quota is not None:
            return self.quota.until(model)
        return self.resting.until(model.endpoint, model.served)

    def failed(self, model: Model, error: BaseException) -> None:
        """A call failed: a rate limit rests what it names (this model, or its whole connection) until its reset, and
        a model whose calls keep failing rests a while (Resting.observe); one of our own limits, that refused a call
        before it was sent, rests nothing: it is counted here already."""
        if not isinstance(error, QuotaRefused):
            self.resting.observe(model.endpoint, model.served, error)

    def recount(self, model: Model, ask: Ask, answer: Answer | None, counted: int | None = None,
                now: float | None = None) -> None:
        """A sent call is over: the limits' counts of its tokens corrected to what it used (`counted`: the prompt
        tokens counted when it went, else the ask's; `answer` None: it used none; `now`: the limits' clock's)."""
        if self.quota is None:
            return
        usage = answer.usage if answer else None
        used = usage.input_tokens + usage.output_tokens if usage else 0
        self.quota.spent(model, used - (ask.prompt_tokens() if counted is None else counted), now)

    def line(self, model: Model, ask: Ask, kind: str, answer: Answer | None, collection: str | None = None,
             call: str | None = None, origin: str | None = None, now: float | None = None) -> Line:
        """The ledger line of a call that was sent, priced at what is known now (`origin`: the asker's, the line's
        kind when it names one; `now`: the ledger's time, else read here)."""
        usage = answer.usage if answer else None
        tokens_in, tokens_out = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
        price_in, price_out, _ = self.price(model)
        return Line(model.endpoint, model.alias, origin or kind, tokens_in, tokens_out,
                    usage.cache_read_tokens if usage else 0, cost_of(price_in, price_out, tokens_in, tokens_out),
                    collection, call, bool(usage and usage.estimated), self.scheduled,
                    now if now is not None else self.now())

    def now(self) -> float:
        """The ledger's time: its lines are stamped with the limits' clock (the scheduler's; tests hold it); as
        recorded() reads it."""
        return self.quota.clock.now() if self.quota else time.time()

    def record(self, ended: Ended, amend: float | None = None) -> Written:
        """A call ended, and this is the one way its record is made: an answer ends its model's count of failures; a
        sent call's tokens correct the limits' counts and are priced in its ledger line; recorder.write queues both."""
        return self.recorded(ended, amend)[0]

    def recorded(self, ended: Ended, amend: float | None = None) -> tuple[Written, float | None]:
        """record(), and what its answer cost (None without one): its ledger line's, not priced once more."""
        model, ask, answer = ended.model, ended.ask, ended.answer
        if ended.status == OK:
            self.resting.answered(model.endpoint, model.served)
        if answer is not None:
            estimate_usage(answer, ask)   # before the counts and the line read its usage
        line = None
        if ended.went:
            now = self.now()   # one look for the counts and the line
            self.recount(model, ask, answer, ended.counted, now)
            line = self.line(model, ask, ended.kind, answer, ended.collection, ended.call, ended.asker.origin, now)
        # a seat given up while still out (no answer, counted=0: see panel._give_up) keeps its hold till it returns
        if self.budgets is not None and not (answer is None and ended.counted == 0 and ended.went and amend is None):
            self.budgets.book(Charge(ended.call, model.alias, model.endpoint, ended.collection, ended.asker.caller),
                              line.cost if line else 0.0)
        tokens = self.tokens(model, ask) if answer is not None else ask.max_tokens
        cost = None if answer is None else line.cost if line else self.pricing.cost(model, answer)   # Pricing.cost's
        return write(self.calls, ended, line, tokens, self.stored_chars(), amend), cost

    @staticmethod
    def settle(records: list[Written], timeout: float = SETTLE_SECONDS) -> str | None:
        """Wait until these call records are committed, so what a client is told about (its call ids) survives a
        crash of the service from then on. None when every one is kept; else why not, for the reply to say so and
        name none of its ids: a store that cannot write fails the writes at once (its health says why), and the
        answer still goes out without its record."""
        try:
            error = first_error(records, time.monotonic() + timeout)
        except TimeoutError:
            return f"the record store did not write it within {timeout:g} s (it may still)"
        if error is not None:
            return f"the record store cannot write ({str(error).rstrip('.') or type(error).__name__})"
        return None
