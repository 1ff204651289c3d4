"""One meaning for a judged claim: every reading of the record as evidence (route choice, its drop test, the merge
model, the membership suggestions) weighs a claim at evidence.CLAIM_WEIGHT of a judged answer."""
from __future__ import annotations

import pytest

from benchwarmers.core import evidence
from benchwarmers.core.choose import rank
from benchwarmers.core.collection import Collection
from benchwarmers.core.overview import suggestions
from benchwarmers.core.rankings import CLAIM, Standing, drop
from benchwarmers.roster.registry import Model


def pattern(useful: int, of: int, times: int) -> list[int]:
    return ([1] * useful + [0] * (of - useful)) * times


def as_claims(entries: list[int]) -> list[int]:
    """The same outcomes, as point claims' entries in a judged window."""
    return [CLAIM + v for v in entries]


@pytest.fixture
def weight(monkeypatch):
    def set_to(value: float) -> None:
        monkeypatch.setattr(evidence, "CLAIM_WEIGHT", value)
    return set_to


def test_the_drop_test_weighs_a_claim_as_the_choice_does(weight):
    history = pattern(8, 10, 60) + pattern(3, 10, 2)          # 80% for 600, then 30% for 20
    answers = drop(len(history), sum(history), history[-640:])
    assert answers is not None and (answers.judged, answers.useful) == (20, 6)
    weight(1.0)                                                # a claim as an answer: the same drop
    claims = drop(0, 0, as_claims(history[-640:]), len(history), sum(history))
    assert claims == answers
    weight(0.5)                                                # half the evidence: not clear enough yet
    assert drop(0, 0, as_claims(history[-640:]), len(history), sum(history)) is None


def test_a_drop_tells_its_counts_and_the_evidence_choice_reads(weight):
    weight(0.5)
    history = pattern(9, 10, 60) + [0, 0, 1, 0, 0] * 32       # 90% for 600, then 20% for 160
    fell = drop(0, 0, as_claims(history[-640:]), len(history), sum(history))
    assert fell is not None
    assert fell.to_dict() == {"judged": 160, "useful": 32, "useful_rate": 0.2, "before_judged": 600,
                              "before_useful": 540, "before_rate": 0.9}
    assert fell.evidence == (80.0, 16.0)                       # the span's claims at half an answer each
    mixed = drop(300, 270, (history[:300] + as_claims(history[300:]))[-640:], 460, 302)
    assert mixed is not None and mixed.judged == 160 and mixed.evidence == (80.0, 16.0)


def test_route_choice_judges_a_fallen_member_on_its_weighed_latest_evidence(weight):
    weight(0.5)
    history = pattern(9, 10, 60) + [0, 0, 1, 0, 0] * 32
    fell = drop(0, 0, as_claims(history[-640:]), len(history), sum(history))
    fallen = Standing(real_claims=sum(history), false_claims=len(history) - sum(history), drop=fell)
    ranked = rank(["fallen", "fair"], {"fallen": fallen, "fair": Standing(useful=60, not_useful=40)})
    assert [r.alias for r in ranked] == ["fair", "fallen"]
    assert "only 32/160 of its latest" in ranked[1].why


def test_the_merge_models_bound_reads_claims_at_the_same_weight(weight):
    claimed, answered = Standing(real_claims=40), Standing(useful=4)
    weight(0.5)
    assert claimed.evidence == (20.0, 20.0) and claimed.lower_bound() > answered.lower_bound()
    weight(0.0)
    assert claimed.lower_bound() == 0.0 < answered.lower_bound()


def test_an_explorer_earns_a_seat_by_its_judged_claims_too(weight):
    col = Collection("core", members=["a"])
    models = {alias: Model(alias, "e", alias) for alias in ("a", "x")}
    here = {"a": Standing(useful=5, not_useful=5), "x": Standing(real_claims=30, false_claims=2)}
    weight(0.5)
    [promote] = [s for s in suggestions(col, models, here) if s["kind"] == "promote"]
    assert promote["model"] == "x" and "30 of its 32 judged claims held" in promote["text"]
    weight(0.0)
    assert not [s for s in suggestions(col, models, here) if s["kind"] == "promote"]
