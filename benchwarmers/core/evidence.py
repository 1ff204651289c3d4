"""A point's verdict as claims for every seat that took a side, the useful / not-useful it proposes per seat, and what
a judged claim weighs as evidence wherever the record reads it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..words import plural
from .points import Point

# Measured by benchmarks/points.py (BENCHMARKS.md): what one judged claim (a point's verdict gives one to every seat
# that took a side; an answer's verdict may list some) weighs against one judged answer, in every reading of the
# record as evidence: route choice and its drop test, the merge model, the membership suggestions. One weight for
# all: a lighter one leaves the drop test less evidence, so a member's fall is seen later (at 0.5 and 0.75 a member
# falling halfway cost clearly more than judging seats did); at 1 none is clearly worse than judging seats.
CLAIM_WEIGHT = 1.0
# Measured by benchmarks/selection.py --picks (BENCHMARKS.md): what one comparison of a best pick (the chosen seat
# beat another that answered) weighs against one judged answer, as a win (good) for the one and a loss for the
# other, wherever the record is read as evidence (route choice, the referee's and merge model's pick, the
# membership suggestions).
PICK_WEIGHT = 0.25

# What an agent's turns show without a verdict (core/toolcheck.py), as evidence in the same reading (issue 45; measured
# by benchmarks/selection.py, BENCHMARKS.md). A turn whose tool calls failed (a tool not offered, arguments not JSON or
# not fitting the tool's schema, or a tool result saying the call was malformed) failed whatever its text said: it
# weighs as a not-useful judged answer. A turn whose tool calls were all right proves less (right arguments, maybe
# the wrong answer): it weighs a quarter of a useful one, so a member whose calls keep working is not buried by a
# rare fault, while a member's user verdicts still outweigh its tool record.
TOOL_ERROR_WEIGHT = 1.0
TOOL_CLEAN_WEIGHT = 0.25
# A judge model's verdicts on shadow answers count only once its agreement with the user's verdicts on the same
# answers is measured: at least JUDGE_MIN_COMPARED answers both judged, and the lower end of the agreement's Wilson
# interval (95%) at least JUDGE_MIN_AGREEMENT. Then each weighs JUDGE_WEIGHT of a user's verdict.
JUDGE_MIN_COMPARED = 20
JUDGE_MIN_AGREEMENT = 0.7
JUDGE_WEIGHT = 0.5


def weighed(answers: int, useful: int, claims: int, real: int, wins: int = 0, losses: int = 0) -> tuple[float, float]:
    """(judged, good) as evidence: judged answers, judged claims and best picks' comparisons, a claim at CLAIM_WEIGHT
    of an answer and a comparison at PICK_WEIGHT; good counts the useful answers, the real claims and the wins."""
    return (answers + CLAIM_WEIGHT * claims + PICK_WEIGHT * (wins + losses),
            useful + CLAIM_WEIGHT * real + PICK_WEIGHT * wins)


def with_signs(judged: float, good: float, tool_turns: int, tool_failed: int, judge: tuple = (0, 0)) -> tuple:
    """(judged, good) with what agent turns showed added: checked tool turns (a failed one at TOOL_ERROR_WEIGHT of a
    not-useful answer, a clean one at TOOL_CLEAN_WEIGHT of a useful one) and a trusted judge's (verdicts, useful) at
    JUDGE_WEIGHT."""
    clean = tool_turns - tool_failed
    return (judged + TOOL_ERROR_WEIGHT * tool_failed + TOOL_CLEAN_WEIGHT * clean + JUDGE_WEIGHT * judge[0],
            good + TOOL_CLEAN_WEIGHT * clean + JUDGE_WEIGHT * judge[1])


@dataclass(frozen=True)
class Claim:
    """What one seat gains from a judged point: a real claim (it was right) or a false one, with its own words."""
    point: str                 # the point's id
    seat: int
    real: bool
    stance: str                # "assert" or "deny": what the seat said of the point's claim
    claim: str                 # the point's text
    quote: str                 # the seat's words

    @property
    def text(self) -> str:
        """The claim as the seat made it: the point's text, or its denial."""
        return self.claim if self.stance == "assert" else f"not so: {self.claim}"

    def to_dict(self) -> dict:
        return {"point": self.point, "seat": self.seat, "real": self.real, "stance": self.stance,
                "claim": self.text, "quote": self.quote}


@dataclass(frozen=True)
class Proposal:
    """The useful / not-useful a seat's judged points propose; the user's word still decides."""
    seat: int
    useful: bool
    held: int                  # its judged claims that held
    broke: int                 # and those that did not
    points: tuple[str, ...]    # the judged points it took a side on

    @property
    def why(self) -> str:
        if self.useful:
            return f"every judged claim held ({self.held} of {self.held})"
        return f"{self.broke} of its {plural(self.held + self.broke, 'judged claim')} did not hold"

    def to_dict(self) -> dict:
        return {"seat": self.seat, "useful": self.useful, "held": self.held, "broke": self.broke,
                "points": list(self.points), "why": self.why}


def claims(point: Point, verdict: bool | None) -> list[Claim]:
    """The claims a verdict on `point` gives: asserting a true point or denying a false one is a real claim;
    asserting a false point or denying a true one, a false claim. No verdict, or "can't tell" (None): none.
    Silent seats gain nothing: they said nothing to check."""
    if verdict is None:
        return []
    out = [Claim(point.id, s, verdict, "assert", point.claim, point.quotes.get(s, "")) for s in point.asserts]
    out += [Claim(point.id, s, not verdict, "deny", point.claim, point.quotes.get(s, "")) for s in point.denies]
    return sorted(out, key=lambda c: c.seat)


def by_seat(judged: Iterable[tuple[Point, bool | None]]) -> dict[int, list[Claim]]:
    """seat -> every claim its judged points gave it, in the order given."""
    out: dict[int, list[Claim]] = {}
    for point, verdict in judged:
        for claim in claims(point, verdict):
            out.setdefault(claim.seat, []).append(claim)
    return out


def proposals(judged: Iterable[tuple[Point, bool | None]]) -> dict[int, Proposal]:
    """seat -> what its judged points propose: useful when every judged claim of its held, not useful when any did
    not. A seat with no judged claim gets no proposal (nothing was checked of what it said)."""
    out = {}
    for seat, got in by_seat(judged).items():
        held = sum(c.real for c in got)
        out[seat] = Proposal(seat, held == len(got), held, len(got) - held, tuple(dict.fromkeys(c.point for c in got)))
    return out


def tally(judged: Iterable[tuple[Point, bool | None]]) -> dict[int, tuple[int, int]]:
    """seat -> (real claims, false claims): what the record adds to each seat's model from these point verdicts."""
    return {seat: (sum(c.real for c in got), sum(not c.real for c in got)) for seat, got in by_seat(judged).items()}
