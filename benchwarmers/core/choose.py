"""Route mode's choice of member: by its judged answers and claims with their uncertainty; newcomers get turns, drops
are seen."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .rankings import Standing, wilson

# Measured by benchmarks/selection.py (BENCHMARKS.md): the width of the optimism, z = sqrt(EXPLORE * ln N) with N
# the judged evidence of the members offered, and the useful and not-useful answers every member starts with.
EXPLORE = 1.5
PRIOR = 1


@dataclass
class Ranked:
    alias: str
    score: tuple
    why: str


def rank(aliases: list[str], stats: dict[str, Standing]) -> list[Ranked]:
    """Order members best first, from the record (Rankings.models: each a Standing; a member it lacks has none).

    Only judged evidence counts (Standing.evidence): an answer nobody judged neither helps nor hurts a member. A
    judged claim (real or false) counts as evidence.CLAIM_WEIGHT of a judged answer (useful or not); so does what agent
    turns showed (evidence.with_signs: a turn whose tool calls failed as a not-useful answer, one whose calls were
    right at TOOL_CLEAN_WEIGHT of a useful one, a judge model's verdicts once its agreement holds). A member with
    no judged evidence yet goes first, so newcomers get their turns. The others go by the upper bound of the
    Wilson interval of their good share, counting PRIOR good and PRIOR bad answers extra (two bad verdicts do not
    bury a member), at z = sqrt(EXPLORE * ln N), N the judged evidence of all these members (as in UCB): a member
    judged little keeps the benefit of the doubt until its verdicts say otherwise, a poor member's turns shrink to a
    few. A member whose latest evidence clearly fell below its record (the record's `drop`) is judged on that
    evidence alone. Then the failure rate, then the median seconds."""
    none = Standing()
    known = sum(stats.get(a, none).evidence[0] for a in aliases)
    z = math.sqrt(EXPLORE * math.log(max(known, 3)))
    out = [_rank_one(alias, stats.get(alias, none), z) for alias in aliases]
    out.sort(key=lambda r: r.score, reverse=True)
    return out


def _rank_one(alias: str, s: Standing, z: float) -> Ranked:
    (judged, useful), fell = s.evidence, s.drop
    fail_rate = s.failures / s.asks if s.asks else 0.0
    speed = s.median_seconds or 0.0
    tail = f"failures {fail_rate:.0%}, median {speed:.1f} s"
    if not judged:
        return Ranked(alias, (1, 1.0, -fail_rate, -speed),
                      f"{alias}: no judged answers yet, nor claims or tool calls, so it goes first; {tail}")
    said = f"useful {s.useful}/{s.judged}"
    if s.judged_claims:
        said += f", claims held {s.real_claims}/{s.judged_claims}"
    if s.tool_turns:
        said += f", tool calls failed in {s.tool_failed}/{s.tool_turns} turns"
    if s.judge_counted[0]:
        said += f", judge found {s.judge_counted[1]}/{s.judge_counted[0]} useful"
    if s.wins or s.losses:
        said += f", best picks won {s.wins}/{s.wins + s.losses}"
    if fell:
        judged, useful = fell.evidence
        said += (f", but only {fell.useful}/{fell.judged} of its latest, a clear drop from {fell.before_useful}/"
                 f"{fell.before_judged} before: judged on the latest")
    ub = wilson(useful + PRIOR, judged + 2 * PRIOR, z)[1]
    why = f"{alias}: {said} (upper bound {ub:.2f} at z={z:.1f}); {tail}"
    return Ranked(alias, (0, ub, -fail_rate, -speed), why)
