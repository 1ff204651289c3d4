"""The last minute's counts, kept flat: what one entry per call would answer (a limit freeing at most MERGE later)."""
from __future__ import annotations

from benchwarmers.roster.limits.quota import Counts, MERGE, MINUTE, MinuteWindow


def test_the_window_forgets_what_left_the_minute_and_keeps_its_total():
    w = MinuteWindow()
    for t in range(3000):                        # past the point where the forgotten head is let go
        w.append(float(t), 2)
        w.drop_until(t - MINUTE)
    assert len(w) == 60 and w.total == 120
    assert w.time(0) == 2940.0 and w.time(-1) == 2999.0
    assert list(w.pairs())[:2] == [(2940.0, 2), (2941.0, 2)]
    w.drop_until(5000.0)
    assert len(w) == 0 and w.total == 0 and not w


def test_counts_answer_as_before_with_thousands_of_calls():
    c = Counts()
    now = 1_000_000.0
    for i in range(5000):                        # 5000 calls over 50 seconds, 10 prompt tokens each
        c.roll(now + i * 0.01)
        c.count(now + i * 0.01, 10)
    end = now + 49.99
    c.roll(end)
    assert c.used()["rpm"] == 5000 and c.used()["tpm"] == 50000
    (at, which), = c.blocked_until({"rpm": 4000}, end, 0)
    assert which == "rpm" and at == now + 1000 * 0.01 + MINUTE      # when the 1001st oldest call leaves the minute
    (at, which), = c.blocked_until({"tpm": 49995}, end, 10)
    assert which == "tpm" and at == now + 0.01 + MINUTE              # the two oldest calls' tokens must leave first
    c.add(end, -50000)                                               # a correction below what was counted
    assert c.minute_tokens() == 0
    c.roll(end + MINUTE)
    assert c.used()["rpm"] == 0 and c.resets(end + MINUTE)["rpm"] is None


def test_calls_close_together_share_an_entry_and_free_a_limit_no_earlier():
    """A thousand calls a second: the minute holds one entry per MERGE, counts every call, and says a limit frees
    up when the exact count would, or at most MERGE later (never earlier)."""
    c = Counts()
    now = 1_000_000.0
    for i in range(6000):
        t = now + i * 0.001
        c.roll(t)
        c.count(t, 10)
    end = now + 5.999
    assert c.used()["rpm"] == 6000 and c.used()["tpm"] == 60000
    assert len(c.times) <= 6000 * 0.001 / MERGE + 2 and len(c.tokens) <= 6000 * 0.001 / MERGE + 2
    (at, which), = c.blocked_until({"rpm": 5000}, end, 0)
    exact = now + 1000 * 0.001 + MINUTE                  # when the 1001st oldest call leaves the minute
    assert which == "rpm" and exact <= at <= exact + MERGE
    (at, which), = c.blocked_until({"tpm": 59990}, end, 10)
    exact = now + 0.001 + MINUTE                         # the two oldest calls' tokens must leave first
    assert which == "tpm" and exact <= at <= exact + MERGE
    c.roll(end + MINUTE)
    assert c.used()["rpm"] == 0 and c.used()["tpm"] == 0
