"""Find a served model name among a source's model ids: exactly, else by the documented fallbacks.

A served name and a catalog id often differ only in case, a vendor prefix ('meta-llama/llama-3.3-70b' vs
'llama-3.3-70b') or a tag (':free', Ollama's ':latest'). The fallbacks, in order: the same name in any case;
without the tag; the last path segment; the last segment without the tag. A match by fallback is a match
for what the model can do, never for its price: ':free' and a paid twin share every fallback key.
"""
from __future__ import annotations


def _bare(name: str) -> str:
    return name.split(":", 1)[0]


def _last(name: str) -> str:
    return name.rsplit("/", 1)[-1]


FALLBACKS = (_bare, _last, lambda n: _bare(_last(n)))


class NameIndex:
    """Model ids of one source, looked up by a served name."""

    def __init__(self, ids):
        self.ids = {}
        self.lower: dict[str, str] = {}
        self.keyed: list[dict[str, list[str]]] = [{} for _ in FALLBACKS]
        for mid in ids:
            self.ids[mid] = mid
            low = mid.lower()
            self.lower.setdefault(low, mid)
            for table, key in zip(self.keyed, FALLBACKS):
                table.setdefault(key(low), []).append(mid)

    def find(self, served: str) -> tuple[str | None, bool]:
        """(the id that matches, whether it is the same name up to case); (None, False) when none does."""
        if not served:
            return None, False
        if served in self.ids:
            return served, True
        low = served.lower()
        if low in self.lower:
            return self.lower[low], True
        for table, key in zip(self.keyed, FALLBACKS):
            hits = table.get(key(low))
            if hits:
                # an untagged id ('x') is the model itself; a tagged one ('x:free') is a variant of it
                return sorted(hits, key=lambda h: (":" in h, len(h), h))[0], False
        return None, False
