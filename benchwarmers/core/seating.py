"""Who sits on this panel: every able member, explore seats for the longest-waiting others, and extra seats."""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from itertools import chain

from ..askparts import ANYONE, Asker
from ..canonical import EXPLORE, MEMBER, WITH, Ask
from ..catalog import Catalog
from ..roster.limits.quota import FAILING, PROVIDER, utc
from ..roster.limits.resting import Resting
from ..roster.registry import Model, Registry
from .blind import Unnamed, blinding
from .callsizes import token_fact
from .collection import Collection


TYPICAL_TOKENS = 500   # an answer's length, for comparing speeds as seconds an answer takes
SLOWER = 4.0           # an explore candidate this many times slower than the slowest seated model (and slower
#                        than it by more than the explore grace) is passed over
LOOKS_MEMO = ("seating looks",)   # where a request's memo (Config.memo) keeps its Looks (not a file name)


def answer_seconds(pace: tuple | None) -> float | None:
    """About how long a model of measured `pace` (ttft, tokens per second) takes for a typical answer."""
    if not pace or not pace[1]:
        return None
    return (pace[0] or 0.0) + TYPICAL_TOKENS / pace[1]


@dataclass
class SeatPlan:
    number: int
    kind: str
    model: Model
    skip: str | None = None          # why it cannot take this ask (the seat comes back as skipped)


@dataclass
class Plan:
    seats: list = field(default_factory=list)
    passed_over: list = field(default_factory=list)    # explore candidates not seated, with the reason
    hidden: Unnamed | None = None      # blind: seats in a random order, no model named to the asker (core/blind.py)


class Looks:
    """What every seat's check reads alike, looked up once a request rather than at each of its seats: the registry's
    endpoints, and each endpoint's sign-in state (as first asked)."""
    __slots__ = ("endpoints", "again")

    def __init__(self, endpoints: dict):
        self.endpoints = endpoints
        self.again: dict[str, str | None] = {}   # endpoint -> registry.signin_again()'s answer, filled as asked


class Seating:
    def __init__(self, registry: Registry, last_asked: dict, resting: Resting, catalog: Catalog, dialer=None):
        self.registry = registry
        self.resting = resting
        self.catalog = catalog            # facts with every source merged, roles and holds
        self.dialer = dialer              # its rate limits, and how long each kind of call may wait for them
        self._last = dict(last_asked)     # model alias -> when it last got a seat
        self._order: dict = {}            # every model's alias, the longest-waiting first (see _queue)
        self._ordered_for: dict | None = None   # the registry's models dict that order was made for
        self._clock = 0.0
        self._lock = threading.Lock()

    def _queue(self, models: dict) -> dict:
        """Aliases in the order explore seats go (lock held): never seated first, in random order, then the longest
        since their last seat. Kept in that order as seats are given (_seated), and made again only when the
        models change: a panel looks at the first few, not at every model on the bench."""
        if models is not self._ordered_for:
            aliases = list(models)
            random.shuffle(aliases)
            aliases.sort(key=lambda a: self._last.get(a, 0.0))   # stable: ties keep their random order
            self._order, self._ordered_for = dict.fromkeys(aliases), models
        return self._order

    def _seated(self, alias: str) -> None:
        """The model got a seat now (lock held): it goes to the back of the explore order. Its stamp is a strictly
        increasing time: seats picked in one plan keep their order for the next, where equal stamps would leave it
        to chance and let a model be asked twice before another once."""
        self._last[alias] = self._clock = max(time.time(), self._clock + 1e-6)
        if alias in self._order:
            del self._order[alias]
            self._order[alias] = None

    def facts(self, model: Model) -> dict:
        """What seating and route mode check: the catalog's facts, every source merged."""
        return self.catalog.facts(model)

    def limited(self, model: Model, ask: Ask, kind: str, asker: Asker = ANYONE,
                tokens: int | None = None) -> str | None:
        """Why a limit keeps the model from this ask: a monthly budget has no room for what it could cost, it rests on a
        provider's limit, or one of the user's limits resets later than this kind of call may wait (an explore seat
        waits for none). `tokens`: the ask's prompt tokens, when counted already."""
        over = self.dialer.over_budget(model, ask, asker) if self.dialer is not None else None
        if over is not None:   # a budget waits for no one: it frees at the month's turn
            return over.text()
        if self.dialer is None or self.dialer.quota is None:
            until = self.resting.until(model.endpoint, model.served)
            return "resting until " + utc(until) if until else None
        quota = self.dialer.quota
        refusal = quota.blocked(model, ask.prompt_tokens() if tokens is None else tokens)
        if refusal is None or refusal.at - quota.clock.now() <= self.dialer.patience(kind, asker):
            return None
        return "resting until " + utc(refusal.at) if refusal.scope == PROVIDER else refusal.text()

    def looks(self, endpoints: dict | None = None) -> Looks:
        """The request's Looks, kept in its Config.steady() memo (its plan, its referee's pick, route mode's members
        share them; made afresh outside one); `endpoints`: the registry's, fetched by the caller."""
        looks = self.registry.config.kept(LOOKS_MEMO, self._looks)
        if endpoints is not None and endpoints is not looks.endpoints:   # (rare: the registry read again between)
            looks = Looks(endpoints)
        return looks

    def _looks(self) -> Looks:
        return Looks(self.registry.endpoints())

    def why_not(self, model: Model, ask: Ask, tokens: int, endpoints: dict | None = None,
                kind: str = MEMBER, asker: Asker = ANYONE, named: bool = False) -> str | None:
        """The reason a model cannot take this ask, or None (`endpoints`: the registry's, fetched once per plan;
        `kind`: the seat's, and `asker`, who asks: they say how long it may wait for a rate limit; `named`: the ask
        names the model itself, which tries it even while it rests on its failures)."""
        return self._why_not(model, ask, tokens, self.looks(endpoints), kind, asker, named)

    def _why_not(self, model: Model, ask: Ask, tokens: int, looks: Looks, kind: str, asker: Asker,
                 named: bool) -> str | None:
        """why_not() with the request's Looks."""
        if not model.active:
            return f"retired: {model.reason or 'no reason given'}"
        held = self.catalog.held(model.alias)
        if held:
            return f"held: {held['reason']}; `bench model confirm {model.alias}` accepts it"
        failing = None if named else self.resting.failing(model.endpoint, model.served)
        if failing:                    # not "resting until": a panel of such seats failed, it is not rate-limited
            return f"{FAILING} {utc(failing[0])}: {failing[1]}"
        limited = self.limited(model, ask, kind, asker, tokens)
        if limited:
            return limited
        facts = self.catalog.facts(model)   # (self.facts(), without the step)
        if facts.get("vision") is False and ask.has_images():   # the ask's images looked at for such a model alone
            return "no vision: this ask has an image"
        window = token_fact(facts, "context_window")
        if window and tokens >= window:   # the output budget is cut to fit (callsizes.budget); the prompt cannot be
            return f"context window too small for the prompt: about {tokens} prompt tokens, window {window}"
        if model.endpoint not in looks.endpoints:
            return f"its endpoint {model.endpoint!r} is gone"
        try:   # one look an endpoint a plan: a panel's seats mostly share a few
            again = looks.again[model.endpoint]
        except KeyError:
            again = looks.again[model.endpoint] = self.registry.signin_again(model.endpoint)
        if again:
            return f"its endpoint {model.endpoint!r} needs you to {again}"
        return None

    def plan(self, ask: Ask, collection: Collection | None, direct: Model | None = None,
             asker: Asker = ANYONE, kept: tuple | list = ()) -> Plan:
        """Who sits; `kept`: the explore seats of the conversation's turn before, given their places first."""
        models, looks = self.registry.models(), self.looks()
        tokens = ask.prompt_tokens()
        plan = Plan()
        taken: set[str] = set()

        def check(model: Model, kind: str = MEMBER, named: bool = False) -> str | None:
            return self._why_not(model, ask, tokens, looks, kind, asker, named)

        def seat(model: Model, kind: str, named: bool = False) -> None:
            taken.add(model.alias)
            plan.seats.append(SeatPlan(len(plan.seats) + 1, kind, model, check(model, kind, named)))

        if direct is not None:
            seat(direct, MEMBER, named=True)
        for alias in (collection.members if collection else []):
            if alias in models and alias not in taken:
                seat(models[alias], MEMBER)
        for alias in ask.with_models:
            if alias not in taken:
                seat(self.registry.model(alias), WITH, named=True)
        if collection and collection.explore:
            too_slow = self._too_slow(collection, [sp.model for sp in plan.seats])

            def fits(model: Model) -> str | None:
                return check(model, EXPLORE) or self.catalog.unfit(model, collection.purpose) or \
                    self.catalog.app_only_reason(model) or too_slow(model)
            self._explore(collection.explore, models, taken, plan, seat, fits, kept)
        with self._lock:
            for s in plan.seats:
                if s.skip is None:
                    self._seated(s.model.alias)
        plan.hidden = blinding(ask.blind if ask.blind is not None else bool(collection and collection.blind), plan)
        return plan

    def _too_slow(self, collection: Collection, seated: list):
        """A check of explore candidates against the seated models' measured speed: one far slower than the slowest
        of them (SLOWER times, and past the explore grace) would only run on after the panel answered. Models
        never measured pass; so does every model when no seated one was measured."""
        paces = self.dialer.paces if self.dialer is not None else None
        times = [t for t in (answer_seconds(paces(m.alias)) for m in seated) if t is not None] if paces else []
        if not times or paces is None:      # (no paces: no times)
            return lambda model: None
        slowest = max(times)
        grace = collection.explore_grace
        if grace is None:
            grace = self.dialer.settings()["explore_grace_seconds"]
        bar = max(slowest * SLOWER, slowest + grace)

        def check(model: Model) -> str | None:
            took = answer_seconds(paces(model.alias))
            if took is None or took <= bar:
                return None
            return (f"too slow for this collection: about {took:,.0f} s for an answer where its members take about "
                    f"{slowest:,.0f} s (ask for it by name with bench.with)")
        return check

    def _explore(self, count, models, taken, plan, seat, check, kept=()) -> None:
        """The active non-members that have waited longest since they were last asked; ties at random. `kept` (a
        conversation's explore seats) come first: the rotation moves on per conversation, not per ask."""
        with self._lock:
            chosen: list[str] = []
            looked: set[str] = set()
            for alias in chain(kept, self._queue(models)):   # lazily: a panel looks at the first few
                if len(chosen) == count:
                    break
                model = models.get(alias)
                if model is None or alias in taken or alias in looked or not model.active or model.ad_hoc:
                    continue
                looked.add(alias)
                reason = check(model)
                if reason:
                    plan.passed_over.append({"model": model.alias, "reason": reason})
                    continue
                seat(model, EXPLORE)
                chosen.append(alias)
            for alias in chosen:   # claimed now, so a concurrent panel picks the next one
                self._seated(alias)
