"""The record: per model (overall and per collection) asks, answers, failures, verdicts, claims and speed."""
from __future__ import annotations

import statistics
import threading
import time
from typing import Callable

from ..store import Database

STATS_SQL = """
SELECT c.model AS model,
       SUM(c.status != 'skipped') AS asks,
       SUM(c.status = 'ok') AS answers,
       SUM(c.status IN ('failed', 'timeout')) AS failures,
       SUM(v.useful = 1) AS useful,
       SUM(v.useful = 0) AS not_useful,
       SUM(COALESCE(json_array_length(v.real), 0)) AS real_claims,
       SUM(COALESCE(json_array_length(v.false), 0)) AS false_claims
FROM calls c LEFT JOIN verdicts v ON v.call = c.id AND v.current = 1
WHERE c.kind IN {kinds} {where}
GROUP BY c.model
"""
# Merge calls are not answers to the user's question: they stay out of counts and speed alike.
KINDS = "('member', 'explore', 'with', 'route', 'shadow')"


class Record:
    """Computed from the calls and verdicts tables; cached for a few seconds because route mode reads it per turn.
    `settings` is read on every call, so a new confidently_wrong_ratio counts from the next request on."""

    def __init__(self, db: Database, settings: Callable[[], dict], ttl: float = 5.0):
        self.db = db
        self.settings = settings
        self.ttl = ttl
        self._cache: dict = {}
        self._lock = threading.Lock()

    def models(self, collection: str | None = None) -> dict[str, dict]:
        wrong_ratio = self.settings()["confidently_wrong_ratio"]
        key = (collection or "", wrong_ratio)
        with self._lock:
            hit = self._cache.get(key)
            if hit and time.monotonic() - hit[0] < self.ttl:
                return hit[1]
        data = self._compute(collection, wrong_ratio)
        with self._lock:
            self._cache[key] = (time.monotonic(), data)
        return data

    def invalidate(self) -> None:
        with self._lock:
            self._cache.clear()

    def _compute(self, collection: str | None, wrong_ratio: float) -> dict[str, dict]:
        self.db.sync()
        where, params = ("AND c.collection = ?", (collection,)) if collection else ("", ())
        out = {}
        for r in self.db.query(STATS_SQL.format(kinds=KINDS, where=where), params):
            d = {k: int(r[k] or 0) for k in ("asks", "answers", "failures", "useful", "not_useful", "real_claims",
                                             "false_claims")}
            judged_claims = d["real_claims"] + d["false_claims"]
            d["judged"] = d["useful"] + d["not_useful"]
            d["useful_rate"] = round(d["useful"] / d["judged"], 3) if d["judged"] else None
            d["useful_interval"] = [round(x, 3) for x in wilson(d["useful"], d["judged"])] if d["judged"] else None
            d["confidently_wrong"] = bool(d["false_claims"] >= 3 and judged_claims
                                          and d["false_claims"] / judged_claims >= wrong_ratio)
            out[r["model"]] = d
        speed_where = "AND collection = ?" if collection else ""
        for r in self.db.query(f"SELECT model, seconds FROM calls WHERE status = 'ok' AND seconds IS NOT NULL "
                               f"AND kind IN {KINDS} {speed_where} ORDER BY created DESC LIMIT 20000", params):
            out.setdefault(r["model"], {}).setdefault("_s", []).append(r["seconds"])
        for d in out.values():
            secs = d.pop("_s", [])
            d["median_seconds"] = round(statistics.median(secs), 3) if secs else None
        return out

    def summary(self) -> dict:
        """Overall and per collection, as GET /bench/record serves it."""
        cols = [r["collection"] for r in self.db.query(
            "SELECT DISTINCT collection FROM calls WHERE collection IS NOT NULL")]
        return {"models": self.models(), "collections": {c: self.models(c) for c in cols}}


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate: narrow with much evidence, wide with little."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = p + z * z / (2 * trials)
    margin = z * ((p * (1 - p) + z * z / (4 * trials)) / trials) ** 0.5
    return max(0.0, (centre - margin) / denom), min(1.0, (centre + margin) / denom)


def wilson_lower(successes: int, trials: int, z: float = 1.96) -> float:
    """Pessimistic where there is little evidence: one lucky verdict cannot outrank a long good record."""
    return wilson(successes, trials, z)[0]
