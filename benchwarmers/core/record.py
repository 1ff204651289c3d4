"""The record: per model (overall and per collection) asks, answers, failures, verdicts, claims and speed."""
from __future__ import annotations

import math
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
RECENT_SQL = """
SELECT v.useful AS useful FROM calls c JOIN verdicts v ON v.call = c.id AND v.current = 1
WHERE c.model = ? AND c.kind IN {kinds} {where} ORDER BY c.created DESC, c.rowid DESC LIMIT {limit}
"""
# A drop is looked for over a member's latest judged answers, in doubling spans so one starts near the fall.
DROP_SPANS = (20, 40, 80, 160, 320, 640)
DROP_Z = 4.0          # how clear a drop must be: at 3 false alarms cost more than they saved (BENCHMARKS.md)
DROP_BEFORE = 20      # judged answers needed before the span, to compare with
# The "confidently wrong" flag: measured by benchmarks/confidently_wrong.py (BENCHMARKS.md).
WRONG_MIN_FALSE = 3   # fewer false claims than this is too little evidence to flag anyone


class Record:
    """Computed from the calls and verdicts tables; cached for a few seconds because route mode reads it per turn.
    `settings` is read on every call, so a new confidently_wrong_ratio counts from the next request on."""

    def __init__(self, db: Database, settings: Callable[[], dict], ttl: float = 5.0):
        self.db = db
        self.settings = settings
        self.ttl = ttl
        self._cache: dict = {}
        self._lock = threading.Lock()

    def models(self, collection: str | tuple | None = None) -> dict[str, dict]:
        """Per model, over every collection, one (a name) or some (a tuple of names)."""
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

    def _compute(self, collection: str | tuple | None, wrong_ratio: float) -> dict[str, dict]:
        self.db.sync()
        if isinstance(collection, tuple) and not collection:
            return {}                                  # none of the collections asked for
        params = collection if isinstance(collection, tuple) else ((collection,) if collection else ())
        where = f"AND c.collection IN ({', '.join('?' * len(params))})" if params else ""
        out = {}
        for r in self.db.query(STATS_SQL.format(kinds=KINDS, where=where), params):
            d = {k: int(r[k] or 0) for k in ("asks", "answers", "failures", "useful", "not_useful", "real_claims",
                                             "false_claims")}
            d["judged"] = d["useful"] + d["not_useful"]
            d["useful_rate"] = rate(d["useful"], d["judged"])
            d["useful_interval"] = [round(x, 3) for x in wilson(d["useful"], d["judged"])] if d["judged"] else None
            d["judged_claims"] = d["real_claims"] + d["false_claims"]
            d["false_claim_rate"] = rate(d["false_claims"], d["judged_claims"])
            d["confidently_wrong"] = confidently_wrong(d["real_claims"], d["false_claims"], wrong_ratio)
            d["drop"] = self._drop(r["model"], d, where, params)
            out[r["model"]] = d
        speed_where = where.replace("c.collection", "collection")
        for r in self.db.query(f"SELECT model, seconds FROM calls WHERE status = 'ok' AND seconds IS NOT NULL "
                               f"AND kind IN {KINDS} {speed_where} ORDER BY created DESC LIMIT 20000", params):
            out.setdefault(r["model"], {}).setdefault("_s", []).append(r["seconds"])
        for d in out.values():
            secs = d.pop("_s", [])
            d["median_seconds"] = round(statistics.median(secs), 3) if secs else None
        return out

    def _drop(self, model: str, d: dict, where: str, params: tuple) -> dict | None:
        if d["judged"] < DROP_SPANS[0] + DROP_BEFORE:
            return None
        rows = self.db.query(RECENT_SQL.format(kinds=KINDS, where=where, limit=DROP_SPANS[-1]), (model, *params))
        return drop(d["judged"], d["useful"], [int(r["useful"]) for r in reversed(rows)])

    def summary(self, reach=None) -> dict:
        """Overall and per collection, as GET /bench/record serves it. `reach(collection) -> bool`: only those
        collections, and the overall figures over them alone (a limited gateway key sees nothing else)."""
        cols = [r["collection"] for r in self.db.query(
            "SELECT DISTINCT collection FROM calls WHERE collection IS NOT NULL")]
        if reach is None:
            return {"models": self.models(), "collections": {c: self.models(c) for c in cols}}
        mine = tuple(sorted(c for c in cols if reach(c)))
        return {"models": self.models(mine), "collections": {c: self.models(c) for c in mine}}


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def drop(judged: int, useful: int, recent: list[int]) -> dict | None:
    """A clear fall in a member's latest judged answers against its record before them (a model swapped upstream).

    `recent` is its latest judged answers, oldest first (1 useful, 0 not), `judged` and `useful` its whole record.
    Each span of DROP_SPANS is compared with the answers before it (a two-proportion z test); the span of the
    clearest fall is returned when its z reaches DROP_Z, else None. The clearest span, not the longest, starts
    near where the fall began, so the member is then judged on its answers since."""
    if not 0 < useful < judged:
        return None
    pooled, best = useful / judged, None
    for span in DROP_SPANS:
        before_judged = judged - span
        if span > len(recent) or before_judged < DROP_BEFORE:
            break
        now = sum(recent[-span:])
        fall = (useful - now) / before_judged - now / span
        z = fall / math.sqrt(pooled * (1 - pooled) * (1 / span + 1 / before_judged))
        if z >= DROP_Z and (best is None or z > best[0]):
            best = (z, span, now)
    if best is None:
        return None
    _, span, now = best
    return {"judged": span, "useful": now, "useful_rate": rate(now, span), "before_judged": judged - span,
            "before_useful": useful - now, "before_rate": rate(useful - now, judged - span)}


def confidently_wrong(real: int, false: int, ratio: float) -> bool:
    """Flag a model when at least `ratio` of its judged claims were false, on at least WRONG_MIN_FALSE of them."""
    return false >= WRONG_MIN_FALSE and false / (real + false) >= ratio


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
