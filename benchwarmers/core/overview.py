"""A collection seen whole: the calls one ask makes, what its members share, and what their record suggests."""
from __future__ import annotations

from ..catalog import Catalog
from ..roster.registry import Model
from ..words import plural
from .collection import Collection
from .points import OFF
from .rankings import Standing

# An explorer earns a member's seat with this much judged evidence here (answers, and claims at CLAIM_WEIGHT of one)
# and a pessimistic good share this high (Standing.lower_bound).
PROMOTE_JUDGED, PROMOTE_LOWER = 5, 0.5


def seats(collection: Collection, models: dict[str, Model], catalog: Catalog) -> dict:
    """How many calls one ask makes: active members plus the explore seats there are explorers for (as seating
    picks them: not ad hoc, not held, and fit for the collection's purpose), plus the referee when it shows points
    (after the reply); :merged adds the merge's."""
    active = [a for a in collection.members if a in models and models[a].active]
    explorers = [a for a, m in models.items() if a not in collection.members and m.active and not m.ad_hoc
                 and not catalog.held(a) and not catalog.unfit(m, collection.purpose)]
    explore = min(collection.explore, len(explorers))
    shadow = min(collection.shadow, max(0, len(active) - 1))
    referee = int(collection.points != OFF)
    calls = len(active) + explore + referee
    return {"members": len(active), "explore": explore, "referee": referee, "calls": calls,
            "merged_calls": calls + 1, "route_calls": 1 + shadow, "explorers": len(explorers)}


def shared(flags: list) -> bool | None:
    """True when every member is known to have it, False when one is known not to, else None (not known)."""
    if any(f is False for f in flags):
        return False
    return True if flags and all(f is True for f in flags) else None


def window(facts: dict) -> int | None:
    value = facts.get("context_window")
    return int(value) if isinstance(value, (int, float)) and value > 0 else None


def together(members: list[Model], limits: dict, catalog: Catalog) -> dict:
    """The smallest context window, what every member can do (the catalog's facts, every source merged), and
    the tightest rate limit known."""
    known = {m.alias: catalog.facts(m) for m in members}
    windows = [w for m in members if (w := window(known[m.alias]))]
    tightest = None
    for m in members:
        facts = limits.get(m.endpoint) or {}
        if facts.get("requests_limit") and (tightest is None or facts["requests_limit"] < tightest["requests_limit"]):
            tightest = {"endpoint": m.endpoint, "requests_limit": facts["requests_limit"],
                        "tokens_limit": facts.get("tokens_limit")}
    return {"context_window": min(windows) if windows else None,
            "context_unknown": [m.alias for m in members if not window(known[m.alias])],
            "tools": shared([known[m.alias].get("tools") for m in members]),
            "vision": shared([known[m.alias].get("vision") for m in members]),
            "tightest_limit": tightest}


def status(model: Model | None, catalog: Catalog) -> str:
    if model is None:
        return "gone"
    return "held" if model.active and catalog.held(model.alias) else model.status


def suggestions(collection: Collection, models: dict[str, Model], here: dict[str, Standing]) -> list[dict]:
    """What the record says about who sits here: explorers that earned a seat, members to replace or restore."""
    out = []
    for alias in collection.members:
        model, rec = models.get(alias), here.get(alias) or Standing()
        if model is None:
            out.append({"kind": "gone", "model": alias, "text": f"{alias} is no longer on the bench: remove it."})
        elif not model.active:
            out.append({"kind": "retired", "model": alias,
                        "text": f"{alias} is retired ({model.reason or 'no reason given'}): it takes no seat."})
        elif rec.confidently_wrong:
            out.append({"kind": "replace", "model": alias,
                        "text": f"{alias} keeps being confidently wrong here: {rec.false_claims} false claims "
                                f"of {rec.judged_claims} checked. Consider replacing it."})
    for alias, rec in sorted(here.items()):
        model = models.get(alias)
        if alias in collection.members or model is None or not model.active:
            continue
        if rec.evidence[0] >= PROMOTE_JUDGED and rec.lower_bound() >= PROMOTE_LOWER:
            out.append({"kind": "promote", "model": alias,
                        "text": f"{alias} has earned a member's seat here: {earned(rec)}."})
    return out


def earned(rec: Standing) -> str:
    """A promoted explorer's evidence in words: its judged answers, its judged claims, or both."""
    said = [f"judged useful in {rec.useful} of {plural(rec.judged, 'answer')}"] if rec.judged else []
    if rec.judged_claims:
        said.append(f"{rec.real_claims} of its {plural(rec.judged_claims, 'judged claim')} held")
    return ", and ".join(said)


def overview(collection: Collection, models: dict[str, Model], here: dict[str, Standing],
             overall: dict[str, Standing], limits: dict, catalog: Catalog) -> dict:
    """`here`: the record in this collection; `overall`: across all; `limits`: rate-limit facts per endpoint;
    `catalog`: the facts, holds and roles seating reads."""
    members = [models[a] for a in collection.members if a in models]
    return {**collection.public(),
            "seats": seats(collection, models, catalog),
            "together": together([m for m in members if m.active], limits, catalog),
            "members_detail": [{"alias": a, "on_bench": a in models, "status": status(models.get(a), catalog),
                                "facts": catalog.facts(models[a]) if a in models else {},
                                "record": here[a].to_dict() if a in here else None,
                                "overall": overall[a].to_dict() if a in overall else None} for a in collection.members],
            "suggestions": suggestions(collection, models, here),
            "names": {"panel": f"bench/{collection.name}", "merged": f"bench/{collection.name}:merged",
                      "route": f"bench/{collection.name}:route"}}
