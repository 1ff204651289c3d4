"""The record: per model (overall and per collection) asks, answers, failures, verdicts, claims and speed, read from
what the store keeps (store/standings.py), never recomputed from the history."""
from __future__ import annotations

import itertools
import math
import statistics
import threading
from dataclasses import dataclass
from typing import Callable

from ..store import Database, blindkept, judgestore, standings
from ..store.bestpicks import BestPicks
from ..store.standings import KINDS_SQL as KINDS
from ..store.windows import CLAIM
from .evidence import JUDGE_MIN_AGREEMENT, JUDGE_MIN_COMPARED, weighed, with_signs

# A drop is looked for over a member's latest judged answers and point claims, in doubling spans so one starts near
# the fall.
DROP_SPANS = (20, 40, 80, 160, 320, 640)   # the last: standings.JUDGED_WINDOW, the judged entries kept
DROP_Z = 4.0          # how clear a drop must be: at 3 false alarms cost more than they saved (BENCHMARKS.md)
DROP_BEFORE = 20      # judged evidence needed before the span, to compare with (a claim counts CLAIM_WEIGHT)
# The "confidently wrong" flag: measured by benchmarks/confidently_wrong.py (BENCHMARKS.md).
WRONG_MIN_FALSE = 3   # fewer false claims than this is too little evidence to flag anyone
# A Standing's counts, summed from the kept standings' columns of the same names (store/standings.py).
COUNTED = ("asks", "answers", "failures", "useful", "not_useful", "real_claims", "false_claims", "point_real",
           "point_false") + standings.SIGN_COUNTS + standings.JUDGE_COUNTS


@dataclass(frozen=True, slots=True)
class Drop:
    """A clear fall in a member's latest judged evidence against its record before it (`drop`): counted as shown,
    and weighed as route choice then judges the member (evidence.weighed)."""
    judged: int             # the span: its latest judged answers and point claims
    useful: int             # of them, the useful answers and real claims
    before_judged: int      # the same before the span
    before_useful: int
    evidence: tuple[float, float]   # (judged, good) of the span, a claim at CLAIM_WEIGHT

    @property
    def useful_rate(self) -> float | None:
        return rate(self.useful, self.judged)

    @property
    def before_rate(self) -> float | None:
        return rate(self.before_useful, self.before_judged)

    def to_dict(self) -> dict:
        return {"judged": self.judged, "useful": self.useful, "useful_rate": self.useful_rate,
                "before_judged": self.before_judged, "before_useful": self.before_useful,
                "before_rate": self.before_rate}


@dataclass(slots=True)
class Standing:
    """A model's record, overall, in a collection or over some (Rankings.models): its counts, and what is read from
    them. Mutable only so a simulation (benchmarks/) can tally one as it goes; the service makes one per read."""
    asks: int = 0
    answers: int = 0
    failures: int = 0
    useful: int = 0             # judged answers, useful or not
    not_useful: int = 0
    real_claims: int = 0        # judged claims, real or false: listed in answer verdicts or given by judged points
    false_claims: int = 0
    point_real: int = 0         # of those, the ones judged points gave
    point_false: int = 0
    tool_turns: int = 0         # answers whose tool calls were checked (core/toolcheck.py)
    tool_failed: int = 0        # of them, those whose tool calls failed; then each kind of fault
    tool_unoffered: int = 0
    tool_not_json: int = 0
    tool_schema: int = 0
    tool_reported: int = 0
    retried: int = 0            # answers the client sent the same turn again after (shown, not weighed)
    judge_useful: int = 0       # a judge model's verdicts (apart from the user's)
    judge_not_useful: int = 0
    judge_counted: tuple = (0, 0)   # (verdicts, useful) of them that count: their judge's agreement is measured
    confidently_wrong: bool = False
    median_seconds: float | None = None
    drop: Drop | None = None
    wins: int = 0               # best picks' comparisons it won (its seat picked over another that answered)
    losses: int = 0             # and lost

    @property
    def judged(self) -> int:
        return self.useful + self.not_useful

    @property
    def judged_claims(self) -> int:
        return self.real_claims + self.false_claims

    @property
    def point_claims(self) -> int:
        return self.point_real + self.point_false

    @property
    def evidence(self) -> tuple[float, float]:
        """(judged, good) as evidence: every judged answer, every judged claim at CLAIM_WEIGHT of one, every best
        pick's comparison at PICK_WEIGHT (a win good, a loss not), and what agent turns showed (evidence.with_signs:
        checked tool calls, a trusted judge's verdicts)."""
        judged, good = weighed(self.judged, self.useful, self.judged_claims, self.real_claims, self.wins, self.losses)
        return with_signs(judged, good, self.tool_turns, self.tool_failed, self.judge_counted)

    def lower_bound(self) -> float:
        """The good share of its evidence, pessimistic where there is little: the lower bound of its Wilson interval,
        so one lucky verdict cannot outrank a long good record."""
        judged, good = self.evidence
        return wilson_lower(good, judged)

    @property
    def useful_rate(self) -> float | None:
        return rate(self.useful, self.judged)

    @property
    def useful_interval(self) -> list | None:
        return [round(x, 3) for x in wilson(self.useful, self.judged)] if self.judged else None

    @property
    def false_claim_rate(self) -> float | None:
        return rate(self.false_claims, self.judged_claims)

    def to_dict(self) -> dict:
        """As the API serves it (GET /bench/record, a model's `record`)."""
        return {"asks": self.asks, "answers": self.answers, "failures": self.failures, "useful": self.useful,
                "not_useful": self.not_useful, "real_claims": self.real_claims, "false_claims": self.false_claims,
                "judged": self.judged, "point_claims": self.point_claims, "point_real": self.point_real,
                "useful_rate": self.useful_rate, "useful_interval": self.useful_interval,
                "judged_claims": self.judged_claims, "false_claim_rate": self.false_claim_rate,
                "confidently_wrong": self.confidently_wrong, "median_seconds": self.median_seconds,
                "drop": self.drop.to_dict() if self.drop else None, "wins": self.wins,
                "losses": self.losses, **self.signs_dict()}

    def signs_dict(self) -> dict:
        """What agent turns showed, and a judge model's verdicts, as GET /bench/record serves them."""
        return {"tool_turns": self.tool_turns, "tool_errors": self.tool_failed,
                "tool_error_rate": rate(self.tool_failed, self.tool_turns),
                "tool_error_kinds": {"unoffered": self.tool_unoffered, "not_json": self.tool_not_json,
                                     "schema": self.tool_schema, "reported": self.tool_reported},
                "retried": self.retried,
                "judge": {"useful": self.judge_useful, "not_useful": self.judge_not_useful,
                          "counted": self.judge_counted[0]}}


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

    def models(self, collection: str | tuple | None = None) -> dict[str, Standing]:
        """Per model, over every collection, one (a name) or some (a tuple of names)."""
        scopes = None if not collection and not isinstance(collection, tuple) else \
            (collection,) if isinstance(collection, str) else tuple(collection)
        wrong_ratio = self.settings()["confidently_wrong_ratio"]
        sums: dict[str, list] = {}
        times: dict[str, list] = {}
        trusted = self.judge_trusted(scopes)
        counted: dict[str, tuple] = {}
        for r in standings.standing_rows(self.db, scopes):
            total = sums.setdefault(r["model"], [0] * len(COUNTED))
            for i, name in enumerate(COUNTED):
                total[i] += r[name]
            times.setdefault(r["model"], []).append(standings.speeds(r["speeds"]))
            if r["scope"] in trusted and r["judge_useful"] + r["judge_not_useful"]:
                had = counted.get(r["model"], (0, 0))
                counted[r["model"]] = (had[0] + r["judge_useful"] + r["judge_not_useful"], had[1] + r["judge_useful"])
        versions = self._versions(scopes)
        won, lost = self._picks(scopes)
        out = {}
        for model, total in sums.items():
            s = Standing(*total)
            s.judge_counted = counted.get(model, (0, 0))
            s.confidently_wrong = confidently_wrong(s.real_claims, s.false_claims, wrong_ratio)
            latest = latest_of(times[model], standings.SPEED_WINDOW)
            s.median_seconds = round(statistics.median(x for _, x in latest), 3) if latest else None
            s.drop = self._drop(model, scopes, s, versions.get(model, ()))
            s.wins, s.losses = won.get(model, 0), lost.get(model, 0)
            out[model] = s
        return out

    def judge_trusted(self, scopes: tuple | None) -> set:
        """The collections whose judge verdicts count as evidence: every judge that judged there agreed with the user
        often enough, on enough answers both judged (judge_agreement)."""
        rows = judgestore.agreement_rows(self.db, scopes)
        return {c for c, judges in rows.items() if all(agreement_holds(n, k) for _, n, k in judges)}

    def _picks(self, scopes: tuple | None) -> tuple[dict, dict]:
        """model -> best picks' comparisons won, and lost, in these scopes (the kept counts: a few rows a pair)."""
        won: dict = {}
        lost: dict = {}
        for winner, loser, _, n in BestPicks(self.db).counts(scopes):
            won[winner] = won.get(winner, 0) + n
            lost[loser] = lost.get(loser, 0) + n
        return won, lost

    def _versions(self, scopes: tuple | None) -> dict[str, tuple]:
        where = "" if scopes is None else f" WHERE scope IN ({', '.join('?' * len(scopes))})"
        out: dict[str, list] = {}
        for r in self.db.query(f"SELECT model, scope, version FROM judged{where}", scopes or ()):
            out.setdefault(r["model"], []).append((r["scope"], r["version"]))
        return {m: tuple(sorted(v)) for m, v in out.items()}

    def _drop(self, model: str, scopes: tuple | None, s: Standing, versions: tuple) -> Drop | None:
        """A drop in the latest judged evidence: the judged windows hold judged answers and point claims together, by
        the moment of the answer (benchmarks/points.py: read on answers alone, a member judged mostly by its points
        was seen to fall late). The claims an answer's verdict lists have no entry of their own there, so the drop
        weighs the point claims with the answers; route choice's whole record weighs every claim."""
        if weighed(s.judged, s.useful, s.point_claims, s.point_real)[0] <= DROP_BEFORE:
            return None
        key = (model, scopes)
        with self._lock:
            hit = self._drops.get(key)
        if hit and hit[0] == versions:
            return hit[1]
        windows = [standings.judged_entries(r["window"]) for r in standings.judged_windows(self.db, model, scopes)]
        latest = latest_of(windows, DROP_SPANS[-1])
        found = drop(s.judged, s.useful, [v for _, v in latest], s.point_claims, s.point_real)
        with self._lock:
            self._drops[key] = (versions, found)
        return found

    def summary(self, reach=None, blind: bool = False) -> dict:
        """Overall and per collection, as GET /bench/record serves it. `reach(collection) -> bool`: only those
        collections, and the overall figures over them alone (a limited gateway key sees nothing else). `blind`:
        each model's figures from blind verdicts alone beside its own (`blind`, see blind_useful)."""
        cols = [r["scope"] for r in self.db.query(
            "SELECT DISTINCT scope FROM standings WHERE scope != ? ORDER BY scope", (standings.NONE,))]
        mine = None if reach is None else tuple(sorted(c for c in cols if reach(c)))
        return {"models": self.figures(mine, blind),
                "collections": {c: self.figures((c,), blind) for c in (cols if mine is None else mine)}}

    def figures(self, scopes: tuple | None, blind: bool = False) -> dict[str, dict]:
        """models() of these scopes as the API serves it; `blind`: with each model's `blind` figures (None: no blind
        verdict yet)."""
        found = served(self.models(scopes))
        if blind:
            alone = blind_useful(self.db, scopes)
            for model, d in found.items():
                d["blind"] = alone.get(model)
        return found


def blind_useful(db: Database, scopes: tuple | None) -> dict[str, dict]:
    """model -> its useful rate from blind verdicts alone (the current verdicts given before its panel's models were
    shown): {judged, useful, useful_rate, useful_interval}, read from the kept counts (store/blindkept.py)."""
    out = {}
    for model, (useful, not_useful) in blindkept.counts(db, scopes).items():
        judged = useful + not_useful
        if judged > 0:
            out[model] = {"judged": judged, "useful": useful, "useful_rate": rate(useful, judged),
                          "useful_interval": [round(x, 3) for x in wilson(useful, judged)]}
    return out


def agreement_holds(compared: int, agreed: int) -> bool:
    """A judge's agreement is measured, and high enough for its verdicts to count (evidence.JUDGE_MIN_*)."""
    return compared >= JUDGE_MIN_COMPARED and wilson(agreed, compared)[0] >= JUDGE_MIN_AGREEMENT


def served(found: dict[str, Standing]) -> dict[str, dict]:
    """Rankings.models as the API serves it."""
    return {model: s.to_dict() for model, s in found.items()}


def latest_of(windows: list, size: int) -> list:
    """The latest `size` entries of these windows (each sorted oldest first), oldest first: the latest of a standing
    made of several (a model over its collections) is among theirs."""
    if len(windows) == 1:
        return windows[0][-size:]
    return sorted(itertools.chain.from_iterable(windows))[-size:]


def rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def drop(judged: int, useful: int, recent: list[int], claims: int = 0, real: int = 0) -> Drop | None:
    """A clear fall in a member's latest judged evidence against its record before it (a model swapped upstream).

    `judged` and `useful` are its judged answers and the useful ones, `claims` and `real` its point claims and the
    real ones; `recent` its latest entries of them, oldest first: 1 a useful answer, 0 not, CLAIM + 1 a real claim,
    CLAIM a false one. Evidence is weighed as everywhere (evidence.weighed: a claim at CLAIM_WEIGHT of an answer).
    Each span of DROP_SPANS latest entries is compared with the evidence before it (a two-proportion z test on the
    weighed counts); the span of the clearest fall is returned when its z reaches DROP_Z, else None. The clearest
    span, not the longest, starts near where the fall began, so the member is then judged on its evidence since."""
    total, good = weighed(judged, useful, claims, real)
    if not 0 < good < total:
        return None
    pooled, best = good / total, None
    for span in DROP_SPANS:
        if span > len(recent):
            break
        tail = recent[-span:]
        n = [tail.count(v) for v in (0, 1, CLAIM, CLAIM + 1)]
        span_total, now = weighed(n[0] + n[1], n[1], n[2] + n[3], n[3])
        before = total - span_total
        if before < DROP_BEFORE:
            break
        if not span_total:       # claims weighing nothing (a benchmark's CLAIM_WEIGHT 0)
            continue
        fall = (good - now) / before - now / span_total
        z = fall / math.sqrt(pooled * (1 - pooled) * (1 / span_total + 1 / before))
        if z >= DROP_Z and (best is None or z > best[0]):
            best = (z, span, n[1] + n[3], (span_total, now))
    if best is None:
        return None
    _, span, kept, weighed_span = best
    return Drop(span, kept, judged + claims - span, useful + real - kept, weighed_span)


def confidently_wrong(real: int, false: int, ratio: float) -> bool:
    """Flag a model when at least `ratio` of its judged claims were false, on at least WRONG_MIN_FALSE of them."""
    return false >= WRONG_MIN_FALSE and false / (real + false) >= ratio


def wilson(successes: float, trials: float, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate: narrow with much evidence, wide with little."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = p + z * z / (2 * trials)
    margin = z * ((p * (1 - p) + z * z / (4 * trials)) / trials) ** 0.5
    return max(0.0, (centre - margin) / denom), min(1.0, (centre + margin) / denom)


def wilson_lower(successes: float, trials: float, z: float = 1.96) -> float:
    """Pessimistic where there is little evidence: one lucky verdict cannot outrank a long good record."""
    return wilson(successes, trials, z)[0]
