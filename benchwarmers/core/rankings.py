"""The record: per model (overall and per collection) asks, answers, failures, verdicts, claims and speed, read from
what the store keeps (store/standings.py), never recomputed from the history."""
from __future__ import annotations

import itertools
import math
import statistics
import threading
from typing import Callable

from ..store import Database, standings
from ..store.standings import KINDS_SQL as KINDS

# A drop is looked for over a member's latest judged answers, in doubling spans so one starts near the fall.
DROP_SPANS = (20, 40, 80, 160, 320, 640)   # the last: standings.JUDGED_WINDOW, the judged answers kept
DROP_Z = 4.0          # how clear a drop must be: at 3 false alarms cost more than they saved (BENCHMARKS.md)
DROP_BEFORE = 20      # judged answers needed before the span, to compare with
# The "confidently wrong" flag: measured by benchmarks/confidently_wrong.py (BENCHMARKS.md).
WRONG_MIN_FALSE = 3   # fewer false claims than this is too little evidence to flag anyone


class Rankings:
    """Read from the kept standings each time (a few rows a collection), so a verdict counts from the next request and
    no read waits for a recomputation. A drop is worked out from a standing's latest judged answers and kept in memory
    until a verdict changes them (their version). `settings` is read on every call, so a new confidently_wrong_ratio
    counts from the next request on."""

    def __init__(self, db: Database, settings: Callable[[], dict]):
        self.db = db
        self.settings = settings
        self._drops: dict = {}      # (model, scopes) -> (the judged windows' versions, the drop found in them)
        self._lock = threading.Lock()

    def models(self, collection: str | tuple | None = None) -> dict[str, dict]:
        """Per model, over every collection, one (a name) or some (a tuple of names)."""
        scopes = None if not collection and not isinstance(collection, tuple) else \
            (collection,) if isinstance(collection, str) else tuple(collection)
        wrong_ratio = self.settings()["confidently_wrong_ratio"]
        sums: dict[str, list] = {}
        times: dict[str, list] = {}
        names = standings.COUNTS + standings.POINT_COUNTS
        for r in standings.standing_rows(self.db, scopes):
            total = sums.setdefault(r["model"], [0] * len(names))
            for i, name in enumerate(names):
                total[i] += r[name]
            times.setdefault(r["model"], []).append(standings.speeds(r["speeds"]))
        versions = self._versions(scopes)
        out = {}
        for model, total in sums.items():
            d = figures(dict(zip(names, total)), wrong_ratio)
            latest = latest_of(times[model], standings.SPEED_WINDOW)
            d["median_seconds"] = round(statistics.median(s for _, s in latest), 3) if latest else None
            d["drop"] = self._drop(model, scopes, d, versions.get(model, ()))
            out[model] = d
        return out

    def _versions(self, scopes: tuple | None) -> dict[str, tuple]:
        where = "" if scopes is None else f" WHERE scope IN ({', '.join('?' * len(scopes))})"
        out: dict[str, list] = {}
        for r in self.db.query(f"SELECT model, scope, version FROM judged{where}", scopes or ()):
            out.setdefault(r["model"], []).append((r["scope"], r["version"]))
        return {m: tuple(sorted(v)) for m, v in out.items()}

    def _drop(self, model: str, scopes: tuple | None, d: dict, versions: tuple) -> dict | None:
        """A drop in the latest judged evidence: the judged windows hold judged answers and point claims together
        (1 useful or real, 0 not), by the moment of the answer (benchmarks/points.py: read on answers alone, a member
        judged mostly by its points was seen to fall late)."""
        judged, good = d["judged"] + d["point_claims"], d["useful"] + d["point_real"]
        if judged < DROP_SPANS[0] + DROP_BEFORE:
            return None
        key = (model, scopes)
        with self._lock:
            hit = self._drops.get(key)
        if hit and hit[0] == versions:
            return hit[1]
        windows = [standings.judged_entries(r["window"]) for r in standings.judged_windows(self.db, model, scopes)]
        latest = latest_of(windows, DROP_SPANS[-1])
        found = drop(judged, good, [u for _, u in latest])
        with self._lock:
            self._drops[key] = (versions, found)
        return found

    def summary(self, reach=None) -> dict:
        """Overall and per collection, as GET /bench/record serves it. `reach(collection) -> bool`: only those
        collections, and the overall figures over them alone (a limited gateway key sees nothing else)."""
        cols = [r["scope"] for r in self.db.query(
            "SELECT DISTINCT scope FROM standings WHERE scope != ? ORDER BY scope", (standings.NONE,))]
        if reach is None:
            return {"models": self.models(), "collections": {c: self.models(c) for c in cols}}
        mine = tuple(sorted(c for c in cols if reach(c)))
        return {"models": self.models(mine), "collections": {c: self.models(c) for c in mine}}


def latest_of(windows: list, size: int) -> list:
    """The latest `size` entries of these windows (each sorted oldest first), oldest first: the latest of a standing
    made of several (a model over its collections) is among theirs."""
    if len(windows) == 1:
        return windows[0][-size:]
    return sorted(itertools.chain.from_iterable(windows))[-size:]


def figures(d: dict, wrong_ratio: float) -> dict:
    """A standing's counts (store/standings.py's COUNTS) with the rates and flags read from them."""
    point_real, point_false = d.get("point_real", 0), d.get("point_false", 0)
    d = {k: d[k] for k in ("asks", "answers", "failures", "useful", "not_useful", "real_claims", "false_claims")}
    d["judged"] = d["useful"] + d["not_useful"]
    d["point_claims"], d["point_real"] = point_real + point_false, point_real   # of the judged claims, from points
    d["useful_rate"] = rate(d["useful"], d["judged"])
    d["useful_interval"] = [round(x, 3) for x in wilson(d["useful"], d["judged"])] if d["judged"] else None
    d["judged_claims"] = d["real_claims"] + d["false_claims"]
    d["false_claim_rate"] = rate(d["false_claims"], d["judged_claims"])
    d["confidently_wrong"] = confidently_wrong(d["real_claims"], d["false_claims"], wrong_ratio)
    return d


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
