"""Ratings from best picks: a Bradley-Terry model fitted to the comparisons kept per pair (store/bestpicks.py), with
95% intervals from the model's own curvature, plain and with answer length as a covariate (a longer answer's pull
on the pick, taken out, as LMArena's style control does)."""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from ..store.bestpicks import BANDS

SCALE = 400 / math.log(10)    # ratings on the familiar Elo scale: 400 points are ten-to-one odds
CENTRE = 1000.0
# A weak prior (a Gaussian on each strength, this much precision): a model that won every comparison still gets a
# finite rating and an interval, and a model seen in few comparisons stays near the centre until they add up.
PRIOR = 0.1
Z = 1.96                      # 95%
STEPS = 50                    # Newton steps at most: the fit is concave, so a handful suffice


@dataclass(frozen=True)
class Rating:
    model: str
    rating: float
    interval: tuple[float, float]
    comparisons: int

    def to_dict(self) -> dict:
        return {"model": self.model, "rating": round(self.rating, 1),
                "interval": [round(self.interval[0], 1), round(self.interval[1], 1)], "comparisons": self.comparisons}


@dataclass(frozen=True)
class Fit:
    ratings: list            # Rating, best first
    length: float | None     # the length covariate's effect (rating points at the longest band), None: not fitted

    def to_dict(self) -> dict:
        return {"models": [r.to_dict() for r in self.ratings],
                **({"length_effect": round(self.length, 1)} if self.length is not None else {})}


def fit(counts: list, length: bool = False) -> Fit:
    """Ratings of the models in `counts` ((winner, loser, band, n) each); `length`: with the answer-length band as a
    covariate, so a model is not rated up for writing more."""
    models = sorted({m for w, lo, _, _ in counts for m in (w, lo)})
    if not models:
        return Fit([], None)
    index = {m: i for i, m in enumerate(models)}
    size = len(models) + (1 if length else 0)
    rows = [(index[w], index[lo], b / BANDS if length else 0.0, n) for w, lo, b, n in counts if n > 0]
    theta = [0.0] * size
    for _ in range(STEPS):
        grad, hess = _derivatives(rows, theta, size, length)
        step = solve(hess, grad)
        biggest = max(abs(s) for s in step)
        if biggest > 2.0:      # a long first step on lopsided counts: damped, the fit stays on its way
            step = [s * 2.0 / biggest for s in step]
        theta = [t + s for t, s in zip(theta, step)]
        if biggest < 1e-7:
            break
    _, hess = _derivatives(rows, theta, size, length)
    spread = centred_variances(hess, len(models))
    mean = sum(theta[:len(models)]) / len(models)      # the strengths say only how models differ: centred
    theta = [t - mean for t in theta[:len(models)]] + theta[len(models):]
    seen = [0] * len(models)
    for w, lo, _, n in rows:
        seen[w] += n
        seen[lo] += n
    out = [Rating(m, CENTRE + SCALE * theta[i], (CENTRE + SCALE * (theta[i] - Z * math.sqrt(spread[i])),
                                                  CENTRE + SCALE * (theta[i] + Z * math.sqrt(spread[i]))), seen[i])
           for i, m in enumerate(models)]
    out.sort(key=lambda r: (-r.rating, r.model))
    return Fit(out, SCALE * theta[-1] if length else None)


def _derivatives(rows: list, theta: list, size: int, length: bool) -> tuple[list, list]:
    """The log posterior's gradient and its negative Hessian (the information) at `theta`."""
    grad = [-PRIOR * t for t in theta]
    hess = [[PRIOR if i == j else 0.0 for j in range(size)] for i in range(size)]
    last = size - 1
    for w, lo, x, n in rows:
        margin = theta[w] - theta[lo] + (theta[last] * x if length else 0.0)
        p = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0
        g, h = n * (1.0 - p), n * p * (1.0 - p)
        grad[w] += g
        grad[lo] -= g
        hess[w][w] += h
        hess[lo][lo] += h
        hess[w][lo] -= h
        hess[lo][w] -= h
        if length and x:
            grad[last] += g * x
            hess[last][last] += h * x * x
            hess[w][last] += h * x
            hess[last][w] += h * x
            hess[lo][last] -= h * x
            hess[last][lo] -= h * x
    return grad, hess


def solve(matrix: list, vector: list) -> list:
    """x with matrix · x = vector (Gaussian elimination with partial pivoting; the matrix is positive definite)."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        lead = a[col][col]
        for r in range(col + 1, n):
            factor = a[r][col] / lead
            if factor:
                row, top = a[r], a[col]
                for c in range(col, n + 1):
                    row[c] -= factor * top[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def centred_variances(information: list, models: int) -> list:
    """Each model's variance about the models' mean strength, from the information's inverse: a common shift of every
    strength (which comparisons cannot see) is left out, so an interval says how well a model is placed among them."""
    n = len(information)
    columns = [solve(information, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(models)]
    cov = [[columns[j][i] for j in range(models)] for i in range(models)]
    row_means = [sum(row) / models for row in cov]
    grand = sum(row_means) / models
    return [max(cov[i][i] - 2 * row_means[i] + grand, 0.0) for i in range(models)]


class Ratings:
    """Fitted when the counts they read changed, else the last fit: a read costs the few rows a pair of models has."""

    def __init__(self, store):
        self.store = store
        self._fits: dict = {}
        self._lock = threading.Lock()

    def of(self, scopes: tuple | None, blind_only: bool = False, length: bool = False) -> Fit:
        return self._fitted(self.store.counts(scopes, blind_only), (scopes, blind_only, length))

    def both(self, scopes: tuple | None, blind_only: bool = False) -> tuple[Fit, Fit]:
        """The plain fit and the length-controlled one, from one read of the counts."""
        counts = self.store.counts(scopes, blind_only)
        return self._fitted(counts, (scopes, blind_only, False)), self._fitted(counts, (scopes, blind_only, True))

    def _fitted(self, counts: list, key: tuple) -> Fit:
        length = key[2]
        mark = tuple(sorted(counts))
        with self._lock:
            hit = self._fits.get(key)
        if hit is not None and hit[0] == mark:
            return hit[1]
        found = fit(counts, length)
        with self._lock:
            self._fits[key] = (mark, found)
        return found
