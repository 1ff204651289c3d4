"""Free models that turn paid are held: not seated or probed until the user confirms the new price.

A model is free when both its prices are 0, or (no price known) when its served name ends in ':free'. It
turns paid when a price above 0 appears where it was free, or its served name loses ':free' with no zero
price in sight. What was last seen of each model is kept in the data folder's catalog/watch.json:
{"models": {alias: {"free", "served", "held"?: {"reason", "since"}}}}. A held model that is free again is
released by itself; a confirmed one is remembered as paid, so it is not held again for the same price.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from ..store.config import atomic_write
from .store import folder

FILE = "watch.json"


def is_free(facts: dict, served: str) -> bool | None:
    """True, False, or None when nothing says."""
    prices = [facts.get(k, {}).get("value") for k in ("price_in", "price_out")]
    if any(p is not None and p > 0 for p in prices):
        return False
    if all(p is not None for p in prices):
        return True
    return True if served.endswith(":free") else None


def _price_text(facts: dict) -> str:
    pin, pout = (facts.get(k, {}).get("value") for k in ("price_in", "price_out"))
    source = (facts.get("price_out") or facts.get("price_in") or {}).get("source", "the catalog")
    money = lambda v: "?" if v is None else f"${v:g}"
    return f"it was free and now costs {money(pin)} in / {money(pout)} out per million tokens ({source})"


def step(prev: dict | None, served: str, facts: dict, now: float) -> dict:
    """The model's next watch entry from its last one and what the catalog says now."""
    free = is_free(facts, served)
    if prev is None:
        return {"free": free, "served": served}
    if prev.get("held"):
        return {"free": True, "served": served} if free else dict(prev, served=served)
    reason = None
    if prev.get("free") is True and free is False:
        reason = _price_text(facts)
    elif prev.get("free") is True and str(prev.get("served", "")).endswith(":free") and \
            not served.endswith(":free") and free is not True:
        reason = f"its served name lost ':free' ({prev['served']} -> {served})"
    if reason:
        return {"free": True, "served": served, "held": {"reason": reason, "since": now}}
    return {"free": prev.get("free") if free is None else free, "served": served}


def path(home: Path) -> Path:
    return folder(home) / FILE


def load(home: Path) -> dict:
    try:
        data = json.loads(path(home).read_text(encoding="utf-8"))
        return data if isinstance(data.get("models"), dict) else {"models": {}}
    except (OSError, ValueError, AttributeError):
        return {"models": {}}


def save(home: Path, state: dict) -> None:
    atomic_write(path(home), state, keep_broken=False)


def update(state: dict, current: dict, now: float | None = None) -> bool:
    """Step every model ({alias: (served, facts)}) and forget removed ones; True when anything changed."""
    now = time.time() if now is None else now
    models = state.setdefault("models", {})
    changed = False
    for alias in [a for a in models if a not in current]:
        del models[alias]
        changed = True
    for alias, (served, facts) in current.items():
        entry = step(models.get(alias), served, facts, now)
        if entry != models.get(alias):
            models[alias] = entry
            changed = True
    return changed


def confirm(state: dict, alias: str, served: str) -> dict | None:
    """Accept the new price: the hold goes and the model counts as paid. Returns the hold that was lifted."""
    entry = state.setdefault("models", {}).get(alias) or {}
    held = entry.get("held")
    state["models"][alias] = {"free": False, "served": served}
    return held
