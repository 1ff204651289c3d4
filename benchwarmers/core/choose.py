"""Route mode's choice of member: by record with its uncertainty, so evidence wins and newcomers get turns."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .record import wilson

WARMUP = 3      # a member with fewer judged turns than this is still being found out


@dataclass
class Ranked:
    alias: str
    score: tuple
    why: str


def rank(aliases: list[str], stats: dict[str, dict]) -> list[Ranked]:
    """Order members best first.

    A member with fewer than WARMUP judged asks comes first (fewest asks first), so every member gets its turns.
    After that the upper bound of the Wilson interval of the useful rate decides, at a width that grows slowly
    with the judged asks of all these members (z = sqrt(2 ln N), as in UCB): a member judged little keeps the
    benefit of the doubt until its verdicts say otherwise, so an unlucky start or a strong newcomer is found out,
    while a poor member's turns shrink to a few (benchmarks/selection.py measures this). Then the failure rate,
    then the median seconds."""
    judged_all = sum(stats.get(a, {}).get("judged", 0) for a in aliases)
    z = math.sqrt(2 * math.log(max(judged_all, 3)))
    out = []
    for alias in aliases:
        s = stats.get(alias, {})
        judged, useful, asks = s.get("judged", 0), s.get("useful", 0), s.get("asks", 0)
        fail_rate = s.get("failures", 0) / asks if asks else 0.0
        speed = s.get("median_seconds") or 0.0
        if judged < WARMUP:
            score = (1, -asks, 0.0, -fail_rate, -speed)
            why = f"{alias}: {judged} judged asks (<{WARMUP}), {asks} asks so far: still being found out"
        else:
            ub = wilson(useful, judged, z)[1]   # optimistic where there is little evidence
            score = (0, 0, ub, -fail_rate, -speed)
            why = (f"{alias}: useful {useful}/{judged} (Wilson upper bound {ub:.2f} at z={z:.1f}), "
                   f"failures {fail_rate:.0%}, median {speed:.1f} s")
        out.append(Ranked(alias, score, why))
    out.sort(key=lambda r: r.score, reverse=True)
    return out

