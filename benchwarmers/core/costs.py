"""What an ask will cost at most, before it is sent: each seat's estimate (its prompt and output cap at its model's
price), the referee's and the merge's (their prompts: the ask and every seat's answer at its cap), and in route mode
the dearest member that may answer plus its shadows. Nothing is seated or held: the panel's own seating picks the
explore seats when it runs, so each is counted here at the dearest able candidate."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..askparts import ANYONE, Asker
from ..canonical import EXPLORE, MEMBER, MERGED, ROUTE, WITH, Ask
from ..errors import ModelNotFound
from ..roster.registry import Model
from . import points, referee
from .calling import Dialer
from .seating import Plan, SeatPlan

MERGE_OVERHEAD = 400    # tokens a merge's or a referee's own instructions add to the seats' answers (about)


def seat_estimate(dialer: Dialer, model: Model, ask: Ask, kind: str, skip: str | None = None,
                  prompt: int | None = None, cap: int | None = None) -> dict:
    """One call's most: its model, kind, prompt and output tokens, price and dollars (None: unpriced)."""
    pricing = dialer.pricing
    price_in, price_out, _ = pricing.price(model)
    prompt = ask.prompt_tokens() if prompt is None else prompt
    cap = pricing.cap(model, ask) if cap is None else cap
    return {"model": model.alias, "kind": kind, "prompt_tokens": prompt, "max_tokens": cap, "price_in": price_in,
            "price_out": price_out, "usd": None if skip else pricing.estimate(model, ask, prompt, cap),
            "skip": skip}


def ask_estimate(panel, ask: Ask, asker: Asker = ANYONE) -> dict:
    """{"seats": [...], "referee", "merge", "most": dollars, "unpriced": [aliases]} for `ask` as the panel would run
    it now (`panel`: the Panel, for its registry, collections, seating, picker and dialer)."""
    dialer, models, target = panel.dialer, panel.registry.models(), ask.aim
    collection = None
    if target.mode == "direct":
        model = models.get(target.name)
        if model is None:
            raise ModelNotFound(f"No model or collection named {target.name!r}.", "Ask a collection as bench/<name>.")
        seats = [seat_estimate(dialer, model, ask, MEMBER, why(panel, model, ask, MEMBER, asker, True))]
    else:
        collection = panel.collections.get(target.name)
        seats = [seat_estimate(dialer, models[a], ask, MEMBER, why(panel, models[a], ask, MEMBER, asker))
                 for a in collection.members if a in models]
        seats += [seat_estimate(dialer, models[a], ask, WITH, why(panel, models[a], ask, WITH, asker, True))
                  for a in ask.with_models if a in models and a not in collection.members]
        if target.mode != ROUTE:
            seats += explorers(panel, ask, asker, collection, {s["model"] for s in seats})
    out: dict[str, Any] = {"target": target.requested or target.name, "mode": target.mode, "seats": seats,
                           "referee": None, "merge": None}
    if target.mode == ROUTE:
        out["most"] = route_most(seats, collection.shadow if collection else 0)
    else:
        out["referee"], out["merge"] = judges(panel, ask, asker, collection, seats)
        out["most"] = round(sum(x["usd"] or 0.0 for x in [*seats, out["referee"], out["merge"]] if x), 6)
    out["unpriced"] = sorted({x["model"] for x in [*seats, out["referee"], out["merge"]]
                              if x and x["usd"] is None and not x["skip"]})
    return out


def why(panel, model: Model, ask: Ask, kind: str, asker: Asker, named: bool = False) -> str | None:
    """Why the panel would not seat `model` now (a budget spent, a rate limit, its window), or None."""
    return panel.seating.why_not(model, ask, ask.prompt_tokens(), None, kind, asker, named)


def explorers(panel, ask: Ask, asker: Asker, collection, taken: set) -> list[dict]:
    """The collection's explore seats, each at the dearest able candidate not taken yet: the most they can cost."""
    able = [m for a, m in panel.registry.models().items()
            if a not in taken and m.active and not m.ad_hoc and why(panel, m, ask, EXPLORE, asker) is None]
    ranked = sorted((seat_estimate(panel.dialer, m, ask, EXPLORE) for m in able),
                    key=lambda x: (x["usd"] is not None, x["usd"] or 0.0), reverse=True)
    return ranked[:collection.explore]


def route_most(seats: list, shadow: int) -> float:
    """A route turn: one member answers (the dearest able one, at most), and `shadow` others answer it too."""
    costs = sorted((x["usd"] or 0.0 for x in seats if not x["skip"]), reverse=True)
    return round(sum(costs[:1 + shadow]), 6)


def judges(panel, ask: Ask, asker: Asker, collection, seats: list) -> tuple[dict | None, dict | None]:
    """The referee's estimate when the panel shows points, and the merge's when it is merged; each reads the ask and
    every seat's answer at its cap."""
    seated = [x for x in seats if not x["skip"]]
    prompt = ask.prompt_tokens() + sum(x["max_tokens"] for x in seated) + MERGE_OVERHEAD
    plan = Plan(seats=[SeatPlan(i + 1, x["kind"], panel.registry.models()[x["model"]]) for i, x in enumerate(seated)])
    run = SimpleNamespace(ask=ask, asker=asker, collection=collection, plan=plan, seats=[], endpoints=None,
                          collection_name=collection.name if collection else None)
    ref = None
    if shows_points(ask, collection):
        model = panel.picker.referee(run)[0]
        if model is not None:
            ref = seat_estimate(panel.dialer, model, ask, "referee", prompt=prompt, cap=referee.MAX_TOKENS)
    merge = None
    if ask.aim.mode == MERGED:
        model = panel.picker.merger(run)[0]
        if model is not None:
            merge = seat_estimate(panel.dialer, model, ask, "merge", prompt=prompt)
    return ref, merge


def shows_points(ask: Ask, collection) -> bool:
    """Whether the panel calls a referee: the ask's word, `:points`, else the collection's."""
    if ask.points in points.MODES:
        return ask.points != points.OFF
    return bool(ask.aim.points) or bool(collection and collection.points != points.OFF)
