"""Who sits on this panel: every able member, explore seats for the longest-waiting others, and extra seats."""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

from ..canonical import EXPLORE, MEMBER, WITH, Ask
from ..catalog import Catalog
from ..roster.registry import Model, Registry
from ..roster.resting import Resting
from .collections import Collection


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


class Seating:
    def __init__(self, registry: Registry, last_asked: dict, resting: Resting, catalog: Catalog):
        self.registry = registry
        self.resting = resting
        self.catalog = catalog            # facts with every source merged, roles and holds
        self._last = dict(last_asked)     # model alias -> when it last got a seat
        self._clock = 0.0
        self._lock = threading.Lock()

    def _stamp(self) -> float:
        """A strictly increasing time (lock held): seats picked in one plan keep their order for the next,
        where equal stamps would leave it to chance and let a model be asked twice before another once."""
        self._clock = max(time.time(), self._clock + 1e-6)
        return self._clock

    def facts(self, model: Model) -> dict:
        """What seating and route mode check: the catalog's facts, every source merged."""
        return self.catalog.facts(model)

    def why_not(self, model: Model, ask: Ask, tokens: int, endpoints: dict | None = None) -> str | None:
        """The reason a model cannot take this ask, or None (`endpoints`: the registry's, fetched once per plan)."""
        if not model.active:
            return f"retired: {model.reason or 'no reason given'}"
        held = self.catalog.held(model.alias)
        if held:
            return f"held: {held['reason']}; `bench model confirm {model.alias}` accepts it"
        until = self.resting.until(model.endpoint, model.served)
        if until:
            return "resting until " + time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(until))
        facts = self.facts(model)
        if ask.has_images() and facts.get("vision") is False:
            return "no vision: this ask has an image"
        window = facts.get("context_window")
        window = int(window) if isinstance(window, (int, float)) and window > 0 else None
        if window and tokens >= window:   # the output budget is cut to fit (calling.budget); the prompt cannot be
            return f"context window too small for the prompt: about {tokens} prompt tokens, window {window}"
        if model.endpoint not in (self.registry.endpoints() if endpoints is None else endpoints):
            return f"its endpoint {model.endpoint!r} is gone"
        return None

    def plan(self, ask: Ask, collection: Collection | None, direct: Model | None = None) -> Plan:
        models, endpoints = self.registry.models(), self.registry.endpoints()
        tokens = ask.prompt_tokens()
        plan = Plan()
        taken: set[str] = set()

        def check(model: Model) -> str | None:
            return self.why_not(model, ask, tokens, endpoints)

        def seat(model: Model, kind: str) -> None:
            taken.add(model.alias)
            plan.seats.append(SeatPlan(len(plan.seats) + 1, kind, model, check(model)))

        if direct is not None:
            seat(direct, MEMBER)
        for alias in (collection.members if collection else []):
            if alias in models and alias not in taken:
                seat(models[alias], MEMBER)
        for alias in ask.with_models:
            if alias not in taken:
                seat(self.registry.model(alias), WITH)
        if collection and collection.explore:
            def fits(model: Model) -> str | None:
                return check(model) or self.catalog.unfit(model, collection.purpose) or \
                    self.catalog.app_only_reason(model)
            self._explore(collection.explore, models, taken, plan, seat, fits)
        with self._lock:
            for s in plan.seats:
                if s.skip is None:
                    self._last[s.model.alias] = self._stamp()
        return plan

    def _explore(self, count, models, taken, plan, seat, check) -> None:
        """The active non-members that have waited longest since they were last asked; ties at random."""
        with self._lock:
            pool = [m for a, m in models.items() if a not in taken and m.active and not m.ad_hoc]
            pool.sort(key=lambda m: (self._last.get(m.alias, 0.0), random.random()))
            chosen = 0
            for model in pool:
                if chosen == count:
                    break
                reason = check(model)
                if reason:
                    plan.passed_over.append({"model": model.alias, "reason": reason})
                    continue
                seat(model, EXPLORE)
                self._last[model.alias] = self._stamp()   # claimed now, so a concurrent panel picks the next one
                chosen += 1
