"""Route mode's ranking of members by record: warm-up first, then the useful rate with its uncertainty."""
from benchwarmers.core.choose import WARMUP, rank


def stats(useful: int, judged: int, asks: int | None = None, failures: int = 0, seconds: float = 1.0) -> dict:
    return {"useful": useful, "judged": judged, "asks": judged if asks is None else asks, "failures": failures,
            "median_seconds": seconds}


def order(members: dict) -> list[str]:
    return [r.alias for r in rank(list(members), members)]


def test_members_still_being_found_out_go_first_fewest_asks_first():
    got = order({"veteran": stats(90, 100), "new": stats(0, 0, asks=5), "newer": stats(0, 0, asks=1),
                 "judged_twice": stats(2, WARMUP - 1, asks=9)})
    assert got == ["newer", "new", "judged_twice", "veteran"]


def test_a_long_good_record_beats_a_long_poor_one():
    assert order({"poor": stats(40, 100), "good": stats(85, 100)}) == ["good", "poor"]


def test_a_short_poor_record_does_not_pass_a_long_good_one():
    # 85/100 against 2/5: the short record's optimism is not enough to pass the long good one
    assert order({"unlucky": stats(2, 5), "good": stats(85, 100)})[0] == "good"


def test_failures_then_speed_break_ties():
    assert order({"flaky": stats(50, 100, asks=200, failures=40), "steady": stats(50, 100, asks=200)}) == \
        ["steady", "flaky"]
    assert order({"slow": stats(50, 100, seconds=9.0), "fast": stats(50, 100, seconds=2.0)}) == ["fast", "slow"]


def test_every_ranking_explains_itself():
    ranked = rank(["a", "b"], {"a": stats(9, 10), "b": stats(0, 0)})
    assert all(r.why.startswith(r.alias + ":") for r in ranked)
    assert "still being found out" in ranked[0].why and "Wilson upper bound" in ranked[1].why
