"""Collections: named panels with a purpose, members always seated, explore seats, a merge model."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypeGuard

from ..catalog.roles import PURPOSES, check_purpose
from ..errors import BadRequest, CollectionNotFound, ModelNotFound
from ..names import DESCRIPTION_MOST, check_name, check_text
from ..roster.registry import Registry, close_names, suggest, suggest_all
from ..store import Config
from .points import CONTESTED, MODES as POINT_MODES, OFF

FILE = "collections.json"
FIELDS = {"members", "add", "remove", "description", "explore", "shadow", "merge_model", "purpose", "explore_grace",
          "referee", "points", "points_wait", "judge", "judge_budget", "judge_rate", "blind"}
MOST_JUDGE_BUDGET = 100000.0   # USD a month: a bound on a typo, not a suggestion
NEW_POINTS = CONTESTED       # a collection made now shows its contested points; one saved before points said nothing
MOST_GRACE = 86400.0    # the explore_grace_seconds setting's own bound
MOST_POINTS_WAIT = 600.0   # the points_wait_seconds setting's own bound


@dataclass
class Collection:
    name: str
    description: str = ""
    members: list = field(default_factory=list)
    explore: int = 1
    merge_model: str | None = None
    shadow: int = 0
    purpose: str = ""                # what it is for (review, design, ...): explore seats go to models that fit
    explore_grace: float | None = None   # seconds to wait for explore seats once members are in (None: the setting)
    referee: str | None = None       # the model that finds the panel's points (None: chosen as the merge model is)
    points: str = OFF                # which points a reply shows: off, contested or all
    points_wait: float | None = None   # seconds a stream waits for its points after the last seat (None: the setting)
    judge: str | None = None         # route mode: the model that judges the shadow answers (None: none judges)
    judge_budget: float | None = None   # USD a month the judge may spend (priced from the catalog)
    judge_rate: float = 1.0          # the share of shadowed turns judged
    blind: bool = False              # its panels name no model (Seat 1..N, in a random order) until judged

    @classmethod
    def from_dict(cls, name: str, d: dict) -> "Collection":
        members = list(dict.fromkeys([m for m in (d.get("members") or []) if isinstance(m, str)]))   # a model once
        explore = d.get("explore", 1)
        shadow = d.get("shadow", 0)
        purpose = str(d["purpose"]) if d.get("purpose") in PURPOSES else ""
        grace, wait = d.get("explore_grace"), d.get("points_wait")
        return cls(name, str(d.get("description") or ""), members,
                   explore if isinstance(explore, int) and explore >= 0 else 1,
                   d.get("merge_model") if isinstance(d.get("merge_model"), str) else None,
                   shadow if isinstance(shadow, int) and shadow >= 0 else 0, purpose,
                   float(grace) if grace_ok(grace) else None,   # a bad hand edit: the setting's grace
                   d.get("referee") if isinstance(d.get("referee"), str) else None,
                   str(d["points"]) if d.get("points") in POINT_MODES else OFF,
                   float(wait) if wait_ok(wait) else None, *_judge_of(d),
                   d.get("blind") is True)

    def to_dict(self) -> dict:
        d = {"description": self.description, "members": self.members, "explore": self.explore,
             "merge_model": self.merge_model, "shadow": self.shadow, "purpose": self.purpose}
        if self.explore_grace is not None:
            d["explore_grace"] = self.explore_grace
        d["referee"], d["points"] = self.referee, self.points
        if self.points_wait is not None:
            d["points_wait"] = self.points_wait
        if self.judge is not None:
            d["judge"], d["judge_budget"], d["judge_rate"] = self.judge, self.judge_budget, self.judge_rate
        if self.blind:
            d["blind"] = True
        return d

    def public(self) -> dict:
        return {"name": self.name, **self.to_dict()}


class Collections:
    def __init__(self, config: Config, registry: Registry):
        self.config = config
        self.registry = registry

    def all(self) -> dict[str, Collection]:
        raw = self.config.view(FILE).get("collections") or {}
        return {n: Collection.from_dict(n, d) for n, d in raw.items() if isinstance(d, dict)}

    def target(self, ask) -> tuple:
        """(the collection, the model) an ask names: bench/<name> a collection, a model's alias that model."""
        name = ask.target.name
        if ask.target.mode != "direct":
            return self.get(name), None
        model = self.registry.models().get(name)
        if model is None:
            cols = self.all()
            hint = ("Ask a collection as bench/<name>: " + ", ".join(f"bench/{c}" for c in sorted(cols))
                    if cols else "Onboard a model or make a collection first.")
            raise ModelNotFound(f"No model or collection named {name!r}.", hint)
        return None, model

    def get(self, name: str) -> Collection:
        saved = (self.config.view(FILE).get("collections") or {}).get(name)   # all()'s, for this one name alone
        found = Collection.from_dict(name, saved) if isinstance(saved, dict) else None
        if found is None:
            known = self.all()
            close = close_names(name, known)
            hint = ("Did you mean " + " or ".join(f"'bench/{c}'" for c in close) + "? " if close else "") + \
                ("Ask one of: " + ", ".join(f"bench/{n}" for n in sorted(known)) + "." if known else
                 "There are no collections yet: bench collection save NAME --members a,b.")
            raise CollectionNotFound(f"No collection named {name!r}.", hint)
        return found

    def save(self, name: str, spec: dict) -> Collection:
        """Create or change a collection: members replace, add and remove edit; unknown models are refused."""
        check_name(name, "Collection name")
        unknown = sorted(set(spec) - FIELDS)
        if unknown:
            raise BadRequest(f"Unknown field(s): {', '.join(unknown)}.",
                             "A collection takes " + ", ".join(sorted(FIELDS)) + ".")
        current = self.all().get(name) or Collection(name, points=NEW_POINTS)
        models = self.registry.models()
        col = replace(current, members=_members(current.members, spec, models))
        if "description" in spec:
            col.description = check_text(spec["description"], "description", DESCRIPTION_MOST, optional=False)
        if "purpose" in spec:
            try:
                col.purpose = check_purpose(spec["purpose"])
            except ValueError as e:
                raise BadRequest(str(e).capitalize() + ".", "Leave it empty for no purpose.") from None
        _settle_numbers(col, spec)
        _settle_models(col, spec, models)
        _settle_judge(col, spec, models)
        if "points" in spec:
            if spec["points"] not in POINT_MODES:
                raise BadRequest(f"points must be one of {', '.join(POINT_MODES)}, not {spec['points']!r}.",
                                 "contested shows the points some seat contradicts; all shows every point.")
            col.points = spec["points"]
        if "blind" in spec:
            if not isinstance(spec["blind"], bool):
                raise BadRequest("blind must be true (its panels name no model until judged) or false.")
            col.blind = spec["blind"]
        if not col.members and not col.explore:
            raise BadRequest("A collection needs members or explore seats.", "Add --members a,b or --explore 1.")
        self.config.update(FILE, lambda d: d.setdefault("collections", {}).__setitem__(name, col.to_dict()))
        return col

    def delete(self, name: str) -> None:
        self.get(name)
        self.config.update(FILE, lambda d: d.get("collections", {}).pop(name, None))


def _members(members: list, spec: dict, models: dict) -> list:
    """The members once `spec` is applied (members replace, add and remove edit), or a 400 naming any model not on
    the bench."""
    members = _names(spec["members"], "members") if "members" in spec else list(members)
    for m in _names(spec.get("add") or [], "add"):
        if m not in members:
            members.append(m)
    drop = set(_names(spec.get("remove") or [], "remove"))
    members = [m for m in members if m not in drop]
    unknown = [m for m in members if m not in models]
    if unknown:
        raise BadRequest(f"Not on the bench: {', '.join(unknown)}.", suggest_all(unknown, models, "model"))
    return members


def _settle_numbers(col: Collection, spec: dict) -> None:
    """`spec`'s seat counts (explore, shadow) and seconds (explore_grace, points_wait) on `col`, each checked."""
    for key in ("explore", "shadow"):
        if key in spec:
            value = spec[key]
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 16:
                raise BadRequest(f"{key} must be a whole number from 0 to 16.")
            setattr(col, key, value)
    for key, setting, most in (("explore_grace", "explore_grace_seconds", MOST_GRACE),
                               ("points_wait", "points_wait_seconds", MOST_POINTS_WAIT)):
        if key in spec:
            setattr(col, key, _seconds(spec[key], key, setting, most))


def _settle_models(col: Collection, spec: dict, models: dict) -> None:
    """`spec`'s merge model and referee on `col` (null: chosen by the bench), each a model on the bench."""
    for key, title in (("merge_model", "Merge model"), ("referee", "Referee")):
        if key in spec:
            chosen = spec[key]
            if chosen is not None and (not isinstance(chosen, str) or chosen not in models):
                raise BadRequest(f"{title} {chosen!r} is not on the bench.", suggest(str(chosen), models, "model"))
            setattr(col, key, chosen or None)


def _judge_of(d: dict) -> tuple[str | None, float | None, float]:
    """(judge, budget, rate) as saved; a bad hand edit: no judge."""
    judge, budget, rate = d.get("judge"), d.get("judge_budget"), d.get("judge_rate", 1.0)
    if not isinstance(judge, str) or not seconds_ok(budget, MOST_JUDGE_BUDGET) or not seconds_ok(rate, 1.0):
        return None, None, 1.0
    return judge, float(budget), float(rate)


def _settle_judge(col: Collection, spec: dict, models: dict) -> None:
    """`spec`'s judge (null: none), its monthly budget in USD and its rate, each checked: the judge is a model on the
    bench and no member (it never judges a turn it answered), and a judge needs a budget."""
    if "judge" in spec:
        judge = spec["judge"]
        if judge is not None and (not isinstance(judge, str) or judge not in models):
            raise BadRequest(f"Judge {judge!r} is not on the bench.", suggest(str(judge), models, "model"))
        col.judge = judge or None
    for key, most, what in (("judge_budget", MOST_JUDGE_BUDGET, "USD a month"), ("judge_rate", 1.0, "a share")):
        if spec.get(key) is not None:
            if not seconds_ok(spec[key], most):
                raise BadRequest(f"{key} must be {what} from 0 to {most:,g}, not {spec[key]!r}.")
            setattr(col, key, float(spec[key]))
    if col.judge is None:
        col.judge_budget, col.judge_rate = None, 1.0
        return
    if col.judge in col.members:
        raise BadRequest(f"The judge {col.judge!r} is a member of {col.name!r}: a judge is never a contestant.",
                         "Choose a model that is not a member, or remove it from the members.")
    if col.judge_budget is None:
        raise BadRequest("A judge needs a monthly budget: judge_budget, in USD.",
                         "bench collection save NAME --judge MODEL --judge-budget 2")


def _seconds(value, key: str, setting: str, most: float) -> float | None:
    """A collection's own number of seconds for `setting` (None: the setting's), or a 400 saying what it may be."""
    if value is not None and not seconds_ok(value, most):
        raise BadRequest(f"{key} must be a number of seconds from 0 to {most:,.0f}, or null for the {setting} "
                         f"setting, not {value!r}.")
    return None if value is None else float(value)


def seconds_ok(value, most: float) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= most


def grace_ok(value) -> TypeGuard[int | float]:
    return seconds_ok(value, MOST_GRACE)


def wait_ok(value) -> TypeGuard[int | float]:
    return seconds_ok(value, MOST_POINTS_WAIT)


def _names(value, field_name: str) -> list:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise BadRequest(f"{field_name} must be a list of model aliases.")
    return list(dict.fromkeys(value))   # a model named twice is one member: a panel seats it once
