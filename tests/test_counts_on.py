"""count_on(), which every upstream call goes through twice (Quota.take and Quota.spent), rolls a call's connection's and
model's counts when due (Quota._at's tests, made in it) and counts them as Counts.count and Counts.add do: the same
counts as the methods one by one, whatever the sequence (a day's and a month's end, merged entries, corrections)."""
from __future__ import annotations

import random

from benchwarmers.roster.limits.counts import DAY, MERGE, MINUTE, Counts, count_on


def state(c: Counts) -> tuple:
    windows = [(list(w.pairs()), w.total, w.opened, w.first) for w in (c.times, c.tokens)]
    return windows, c.day, c.day_requests, c.day_tokens, c.month, c.month_requests


def one_by_one(c: Counts, now: float, tokens: int, requests: int) -> None:
    c.roll(now)   # as Quota._at
    (c.count if requests else c.add)(now, tokens)


def test_count_on_counts_as_the_methods_do_on_random_sequences():
    for seed in range(200):
        rng = random.Random(seed)
        written, methods = (Counts(), Counts()), (Counts(), Counts())
        now = rng.choice([0.0, DAY - 90.0, 1_767_225_000.0])      # a day's and a month's end among them
        for _ in range(rng.randrange(1, 120)):
            now += rng.choice([0.0, MERGE / 3, MERGE, MERGE * 2, 1.0, 7.5, MINUTE, DAY / 2])
            tokens, requests = rng.choice([0, 1, 57, 4000, -30, -5000]), rng.choice([0, 1])
            count_on(written, now, tokens, requests)
            for c in methods:
                one_by_one(c, now, tokens, requests)
            assert [state(c) for c in written] == [state(c) for c in methods], seed
