"""Bradley-Terry ratings from comparison counts: members of known strength come out in their order with intervals
that hold their true gaps and narrow with evidence; the length-controlled view sees through a bias for long answers;
a model that won every comparison stays finite."""
from __future__ import annotations

import math
import random

from benchwarmers.core.ratings import SCALE, fit


def comparisons(strength: dict, n: int, seed: int, length_bias: float = 0.0) -> list:
    """(winner, loser, band, count) drawn from a Bradley-Terry world; `length_bias`: how much a longer answer's band
    adds to its chance, whoever wrote it."""
    rng, counts = random.Random(seed), {}
    for _ in range(n):
        a, b = rng.sample(sorted(strength), 2)
        band = rng.randint(-4, 4)          # a's length against b's
        p = 1 / (1 + math.exp(-(strength[a] - strength[b] + length_bias * band / 4)))
        key = (a, b, band) if rng.random() < p else (b, a, -band)
        counts[key] = counts.get(key, 0) + 1
    return [(w, lo, band, k) for (w, lo, band), k in counts.items()]


def test_known_strengths_come_out_in_order_with_intervals_that_narrow():
    truth = {"best": 1.5, "good": 0.5, "fair": -0.5, "poor": -1.5}
    small, large = fit(comparisons(truth, 120, 1)), fit(comparisons(truth, 2400, 1))
    for found in (small, large):
        assert [r.model for r in found.ratings] == ["best", "good", "fair", "poor"]
        assert all(r.interval[0] < r.rating < r.interval[1] for r in found.ratings)
    width = {r.model: r.interval[1] - r.interval[0] for r in small.ratings}
    assert all(r.interval[1] - r.interval[0] < width[r.model] / 3 for r in large.ratings)
    rated = {r.model: r.rating for r in large.ratings}
    gap = (rated["best"] - rated["poor"]) / SCALE       # the true gap is 3
    assert 2.4 < gap < 3.3
    assert large.ratings[0].interval[0] > large.ratings[1].interval[1]     # best and good told apart
    assert sum(r.comparisons for r in large.ratings) == 2 * 2400


def test_the_length_controlled_view_sees_through_a_bias_for_long_answers():
    truth = {"terse": 0.6, "wordy": 0.0}
    rows = []
    rng = random.Random(3)
    for _ in range(3000):
        band = rng.randint(1, 4)                                           # wordy's answer is longer by `band`
        p_wordy = 1 / (1 + math.exp(-(truth["wordy"] - truth["terse"] + 2.0 * band / 4)))
        rows.append(("wordy", "terse", band, 1) if rng.random() < p_wordy else ("terse", "wordy", -band, 1))
    plain, controlled = fit(rows), fit(rows, length=True)
    assert plain.ratings[0].model == "wordy"                               # fooled by length
    assert controlled.ratings[0].model == "terse"                          # not fooled
    assert controlled.length > 0


def test_a_clean_sweep_stays_finite_and_nothing_is_nothing():
    found = fit([("a", "b", 0, 50)])
    assert found.ratings[0].model == "a" and math.isfinite(found.ratings[0].rating)
    assert found.ratings[0].interval[1] < 5000
    assert fit([]).ratings == [] and fit([]).to_dict() == {"models": []}
