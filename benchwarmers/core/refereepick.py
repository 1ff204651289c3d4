"""Who judges a panel: its referee and its merge model. Never one of its own seats when another model can do it (a
referee never), a named one first, else the best-recorded active model outside the panel that is fast enough; and a
referee that keeps giving no valid points is passed over for a while (kept here, never read from the history)."""
from __future__ import annotations

import threading
import time
from collections.abc import Set
from dataclasses import dataclass
from typing import Callable

from ..roster.limits.quota import utc
from ..roster.registry import Model, Registry
from .collection import Collection
from .panelrun import PanelRun
from .rankings import Rankings, Standing
from .referee import MAX_TOKENS

SEAT = "a seat of this panel: a judge never reads its own answer"
FAILS = 3                  # no valid points this many times running: the referee is passed over...
REST_SECONDS = 1800.0      # ...for this long, then tried again (one more failure rests it again)
RANK_SECONDS = 30.0        # how long the models' order by record is kept: a verdict counts within this
PICK_SECONDS = 2.0         # how long a panel's choice is kept for the next panel of the same seats
NONE = Standing()          # the standing of a model with no record yet


def fix(collection: str | None) -> str:
    """How a user names another referee, for this collection or for every one."""
    where = f"bench collection save {collection} --referee MODEL, or the Collections page" if collection else \
        "a collection's referee on the Collections page"
    return f"choose another referee ({where}), or set referee_model"


@dataclass
class RefereeRest:
    model: str
    failures: int
    last: str
    until: float

    def reason(self, collection: str | None = None) -> str:
        return (f"passed over until {utc(self.until)}: it gave no valid points in its last {self.failures} calls "
                f"(the last: {self.last}); {fix(collection)}")

    def to_dict(self, collection: str | None = None) -> dict:
        return {"model": self.model, "failures": self.failures, "last": self.last, "until": self.until,
                "reason": self.reason(collection)}


class Faults:
    """Referees' failures to give valid points, in a row, per model (in memory: a restart tries them again)."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.version = 0                   # changes when a referee starts or stops being passed over
        self._runs: dict[str, RefereeRest] = {}
        self._lock = threading.Lock()

    def note(self, alias: str, failure: str | None) -> None:
        """The referee `alias` gave valid points (`failure` None), or did not, saying why."""
        with self._lock:
            if failure is None:
                if self._runs.pop(alias, None) is not None:
                    self.version += 1
                return
            run = self._runs.get(alias) or RefereeRest(alias, 0, failure, 0.0)
            run.failures, run.last = run.failures + 1, failure
            if run.failures >= FAILS:
                run.until = self.clock() + REST_SECONDS
                self.version += 1
            self._runs[alias] = run

    def resting(self, alias: str) -> RefereeRest | None:
        """Why `alias` is passed over now, or None."""
        with self._lock:
            run = self._runs.get(alias)
            return run if run is not None and run.until > self.clock() else None

    def all(self) -> list[RefereeRest]:
        now = self.clock()
        with self._lock:
            return [r for r in self._runs.values() if r.until > now]


class Picker:
    """Chooses a panel's referee and merge model. `able(model, run)`: why the model cannot take this panel's call
    now (retired, held, resting on a limit, its endpoint gone), or None."""

    def __init__(self, registry: Registry, rankings: Rankings, settings: Callable[[], dict],
                 paces: Callable[[str], tuple | None], able: Callable[[Model, PanelRun], str | None]):
        self.registry, self.rankings, self.settings, self.paces, self.able = registry, rankings, settings, paces, able
        self.faults = Faults()
        self._ranked: tuple = (None, 0.0, [])     # (the models dict, when, aliases best-recorded first)
        self._picks: dict = {}                     # what made a choice -> (when, the choice)
        self._lock = threading.Lock()

    # ---- the referee -------------------------------------------------------------------------
    def referee(self, run) -> tuple[Model | None, list[dict], str | None]:
        """(the referee, the named models passed over with why, why there is none); the same seats of the same
        collection get the same answer for PICK_SECONDS (a referee resting on a limit since is refused its call)."""
        seats = frozenset([sp.model.alias for sp in run.plan.seats])
        settings = self.settings()
        key = (run.collection_name, run.collection.referee if run.collection else None, seats, self.faults.version,
               settings["referee_model"], settings["referee_timeout"], id(self.registry.models()))
        now = time.monotonic()
        with self._lock:
            hit = self._picks.get(key)
        if hit is not None and now - hit[0] < PICK_SECONDS:
            return hit[1]
        choice = self._referee(run.collection, seats, lambda model: self.able(model, run))
        with self._lock:
            if len(self._picks) > 256:    # collections and seatings seen lately: a handful
                self._picks.clear()
            self._picks[key] = (now, choice)
        return choice

    def preview(self, col: Collection) -> dict:
        """Who would referee a panel of this collection's members now (its explore seats aside), for its page."""
        model, notes, why = self._referee(col, set(col.members), lambda model: None)
        return {"points": col.points, "named": col.referee, "setting": self.settings()["referee_model"],
                "model": model.alias if model else None, "passed_over": notes, "why": why,
                "resting": [r.to_dict(col.name) for r in self.faults.all()]}

    def _referee(self, col: Collection | None, seats: Set[str], able: Callable[[Model], str | None]) -> tuple:
        settings, models = self.settings(), self.registry.models()
        name = col.name if col else None
        notes: list[dict] = []
        for named in dict.fromkeys(n for n in ((col.referee if col else None), settings["referee_model"]) if n):
            model = self._named(models.get(named), named, seats, name, able, notes, resting=True)
            if model is not None:
                return model, notes, None
        for alias in self._ranking(models):
            if alias not in seats:
                rest = self.faults.resting(alias)
                if rest is not None:       # the reply names a referee passed over for its failures, and the fix
                    notes.append({"model": alias, "reason": rest.reason(name)})
                    continue
                model = self._default(models[alias], able, settings["referee_timeout"])
                if model is not None:
                    return model, notes, None
        return None, notes, self._none(name, seats)

    def _named(self, model: Model | None, name: str, seats: Set[str], collection: str | None,
               able: Callable[[Model], str | None], notes: list, resting: bool) -> Model | None:
        if model is None or not model.active:
            notes.append({"model": name, "reason": "not on the bench" if model is None else "retired"})
            return None
        why = SEAT if name in seats else None
        rest = self.faults.resting(name) if resting and why is None else None
        why = why or (rest.reason(collection) if rest else None) or able(model)
        if why:
            notes.append({"model": name, "reason": why})
            return None
        return model

    def _default(self, model: Model, able: Callable[[Model], str | None], bound: float) -> Model | None:
        """`model`, unless its measured speed cannot write the points within `bound` or it cannot take the call."""
        took = self.seconds(model.alias)
        if took is not None and took > bound:
            return None
        return model if able(model) is None else None

    def seconds(self, alias: str) -> float | None:
        """About how long `alias` takes to write a referee's whole answer (MAX_TOKENS), from its measured speed."""
        pace = self.paces(alias)
        if not pace or not pace[1]:
            return None
        return (pace[0] or 0.0) + MAX_TOKENS / pace[1]

    def _none(self, collection: str | None, seats: Set[str]) -> str:
        outside = [m for a, m in self.registry.models().items() if a not in seats and m.active and not m.ad_hoc]
        if not outside:
            why = "every active model on the bench is a seat of this panel, and a referee never judges its own answer"
        else:
            slow = [m.alias for m in outside if (self.seconds(m.alias) or 0) > self.settings()["referee_timeout"]]
            why = (f"no active model outside this panel could referee it ({len(outside)} outside it: "
                   + (f"{', '.join(slow[:3])} too slow for referee_timeout; " if slow else "")
                   + "the others resting, held or passed over)")
        return f"{why}; add a model that is not a member, or {fix(collection)}"

    def _ranking(self, models: dict[str, Model]) -> list[str]:
        """Active models that are not ad hoc, the best-recorded first (the record over every collection; ties: the
        faster first, then unmeasured ones), made again when the models change or after RANK_SECONDS."""
        now = time.monotonic()
        with self._lock:
            seen, at, ranked = self._ranked
            if seen is models and now - at < RANK_SECONDS:
                return ranked
        stats = self.rankings.models()

        def key(alias: str) -> tuple:
            took = self.seconds(alias)
            return -stats.get(alias, NONE).lower_bound(), took is None, took or 0.0, alias
        ranked = sorted((a for a, m in models.items() if m.active and not m.ad_hoc), key=key)
        with self._lock:
            self._ranked = (models, now, ranked)
        return ranked

    # ---- the merge model ---------------------------------------------------------------------
    def merger(self, run) -> tuple[Model | None, list[dict]]:
        """The collection's merge model, else the merge_model setting, else the best-recorded model outside the
        panel, each one that is not a seat; else (no other can) the best-recorded seat that answered."""
        col, models = run.collection, self.registry.models()
        seats = {sp.model.alias for sp in run.plan.seats}
        notes: list[dict] = []

        def able(model: Model) -> str | None:
            return self.able(model, run)
        for name in dict.fromkeys(n for n in ((col.merge_model if col else None), self.settings()["merge_model"]) if n):
            model = self._named(models.get(name), name, seats, run.collection_name, able, notes, resting=False)
            if model is not None:
                return model, notes
        for alias in self._ranking(models):
            if alias not in seats:
                model = self._default(models[alias], able, float("inf"))
                if model is not None:
                    return model, notes
        return self._best_seat(run), notes

    def _best_seat(self, run) -> Model | None:
        models = self.registry.models()
        answered = [s.model for s in run.seats if s.status == "ok" and s.model in models]
        if not answered:
            return None
        stats = self.rankings.models(run.collection_name)
        return models[max(answered, key=lambda a: stats.get(a, NONE).lower_bound())]
