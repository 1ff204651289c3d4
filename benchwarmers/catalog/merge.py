"""One model's facts from every source, each fact with the source it came from.

The order, first with a value wins: the user's overrides; models.dev for the provider serving the model
(the endpoint matched by its base URL); OpenRouter's list; FreeLLMAPI's dated hint; what the endpoint's
own list said; and last, models.dev's entry for the same model at another provider. A price is taken only
from a source about the serving provider, under the exact served name (':free' and its paid twin differ
only there); a server on this machine costs nothing. Names on a local server prove nothing, so its facts
come only from overrides and its own list.
"""
from __future__ import annotations

from .names import NameIndex
from .vendors import BY_FREELLMAPI, KNOWN, LOCAL, prefixes

FACTS = ("context_window", "max_output", "vision", "tools", "reasoning", "image_out", "price_in", "price_out")
PRICES = ("price_in", "price_out")


class Indexed:
    """The copies in use, indexed for lookups by served name; rebuilt when a copy changes."""

    def __init__(self, copies: dict):
        md, orr, fl = copies.get("models.dev"), copies.get("openrouter"), copies.get("freellmapi")
        self.providers: dict = md.parsed["providers"] if md else {}
        self.pairs = prefixes(self.providers)
        self.by_provider = {pid: NameIndex(p["models"]) for pid, p in self.providers.items()}
        self.makers: dict[str, list[str]] = {}
        for pid, p in self.providers.items():
            for mid in p["models"]:
                self.makers.setdefault(mid, []).append(pid)
        self.anywhere = NameIndex(self.makers)
        self.openrouter: dict = orr.parsed["models"] if orr else {}
        self.or_index = NameIndex(self.openrouter)
        self.hint_date = (fl.fetched[:7] if fl else "")
        self.hints: dict[str, dict] = {}
        for row in (fl.parsed["models"] if fl else []):
            self.hints.setdefault(row["platform"], {})[row["id"]] = row
        self.hint_index = {platform: NameIndex(rows) for platform, rows in self.hints.items()}

    def provider_entry(self, pid: str | None, served: str) -> tuple[dict | None, bool]:
        index = self.by_provider.get(pid) if pid else None
        if index is None:
            return None, False
        mid, exact = index.find(served)
        return (self.providers[pid]["models"][mid], exact) if mid else (None, False)

    def elsewhere(self, served: str, skip: str | None) -> tuple[str | None, dict | None]:
        """The same model at another provider: its maker's entry first ('openai/gpt-4o' -> openai)."""
        mid, _ = self.anywhere.find(served)
        if not mid:
            return None, None
        vendor = served.split("/", 1)[0].lower() if "/" in served else ""
        pids = sorted((p for p in self.makers[mid] if p != skip), key=lambda p: (p != vendor, p not in KNOWN, p))
        return (pids[0], self.providers[pids[0]]["models"][mid]) if pids else (None, None)

    def hint(self, pid: str | None, served: str) -> tuple[dict | None, bool]:
        platform = next((name for name, known in BY_FREELLMAPI.items() if known == pid), None)
        index = self.hint_index.get(platform) if platform else None
        if index is None or platform is None:
            return None, False
        mid, exact = index.find(served)
        return (self.hints[platform][mid], exact) if mid else (None, False)


def _layer(label: str, facts: dict | None, priced: bool) -> tuple[str, dict]:
    facts = facts or {}
    return label, {k: facts.get(k) for k in FACTS if k not in PRICES or priced}


def layers(ix: Indexed, pid: str | None, served: str, listed: dict, overrides: dict) -> list[tuple[str, dict]]:
    out = [_layer("override", overrides, True)]
    if pid == LOCAL:
        return out + [_layer("endpoint list", listed, True), ("local endpoint", {"price_in": 0.0, "price_out": 0.0})]
    entry, exact = ix.provider_entry(pid, served)
    out.append(_layer(f"models.dev/{pid}", entry, exact))
    or_id, or_exact = ix.or_index.find(served)
    out.append(_layer("openrouter", ix.openrouter.get(or_id), or_exact and pid == "openrouter"))
    row, row_exact = ix.hint(pid, served)
    if row:
        free = {"price_in": 0.0, "price_out": 0.0} if row_exact else {}
        out.append(_layer(f"FreeLLMAPI ({ix.hint_date})", {**row, **free}, row_exact))
    out.append(_layer("endpoint list", listed, True))
    other, other_entry = ix.elsewhere(served, pid)
    if other:
        out.append(_layer(f"models.dev/{other} (same model, another provider)", other_entry, False))
    return out


def merge(ix: Indexed, pid: str | None, served: str, listed: dict, overrides: dict) -> dict:
    """{fact: {"value", "source"}} for every fact some source states."""
    facts: dict = {}
    for label, values in layers(ix, pid, served, listed or {}, overrides or {}):
        for key, value in values.items():
            if value is not None and key not in facts:
                facts[key] = {"value": value, "source": label}
    return facts
