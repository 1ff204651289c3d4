"""Route mode's choice of member: by its judged answers with their uncertainty; newcomers get turns, drops are seen."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .record import wilson

# Measured by benchmarks/selection.py (BENCHMARKS.md): the width of the optimism, z = sqrt(EXPLORE * ln N) with N
# the judged answers of the members offered, and the useful and not-useful answers every member starts with.
EXPLORE = 1.5
PRIOR = 1


@dataclass
class Ranked:
    alias: str
    score: tuple
    why: str


def rank(aliases: list[str], stats: dict[str, dict]) -> list[Ranked]:
    """Order members best first, from the record (Record.models: judged, useful, drop, failures, median_seconds).

    Only judged answers count: an answer nobody judged neither helps nor hurts a member. A member with no judged
    answer yet goes first, so newcomers get their turns. The others go by the upper bound of the Wilson interval
    of their useful rate, counting PRIOR useful and PRIOR not-useful answers extra (two bad verdicts do not bury a
    member), at z = sqrt(EXPLORE * ln N), N the judged answers of all these members (as in UCB): a member judged
    little keeps the benefit of the doubt until its verdicts say otherwise, a poor member's turns shrink to a few.
    A member whose latest answers clearly fell below its record (the record's `drop`) is judged on those alone.
    Then the failure rate, then the median seconds."""
    known = sum(stats.get(a, {}).get("judged", 0) for a in aliases)
    z = math.sqrt(EXPLORE * math.log(max(known, 3)))
    out = [_rank_one(alias, stats.get(alias, {}), z) for alias in aliases]
    out.sort(key=lambda r: r.score, reverse=True)
    return out


def _rank_one(alias: str, s: dict, z: float) -> Ranked:
    judged, useful, fell = s.get("judged", 0), s.get("useful", 0), s.get("drop")
    asks = s.get("asks", 0)
    fail_rate = s.get("failures", 0) / asks if asks else 0.0
    speed = s.get("median_seconds") or 0.0
    tail = f"failures {fail_rate:.0%}, median {speed:.1f} s"
    if not judged:
        return Ranked(alias, (1, 1.0, -fail_rate, -speed), f"{alias}: no judged answers yet, so it goes first; {tail}")
    evidence = f"useful {useful}/{judged}"
    if fell:
        judged, useful = fell["judged"], fell["useful"]
        evidence += (f", but only {useful}/{judged} of its latest, a clear drop from {fell['before_useful']}/"
                     f"{fell['before_judged']} before: judged on the latest")
    ub = wilson(useful + PRIOR, judged + 2 * PRIOR, z)[1]
    why = f"{alias}: {evidence} (upper bound {ub:.2f} at z={z:.1f}); {tail}"
    return Ranked(alias, (0, ub, -fail_rate, -speed), why)
