"""Points: their order, which a reply shows, the text block, and what a point's verdict gives every seat."""
from __future__ import annotations

from benchwarmers.core.evidence import Claim, by_seat, claims, proposals, tally
from benchwarmers.core.points import (ALL, CONTESTED, HEADING, OFF, Point, Points, contest, ranked, render,
                                      select)


def point(pid: str, asserts=(), denies=(), silent=(), claim: str | None = None) -> Point:
    quotes = {s: f"seat {s} on {pid}" for s in (*asserts, *denies)}
    return Point(pid, claim or f"Claim {pid}.", tuple(asserts), tuple(denies), tuple(silent), quotes)


SPLIT = point("split", (1, 2), (3, 4), (5,))          # two against two
ONE_OFF = point("one-off", (1, 2, 3), (4,), (5,))     # three against one
DENIED = point("denied", (), (2,), (1, 3, 4, 5))      # only a denial stood
LONE = point("lone", (5,), (), (1, 2, 3, 4))          # one seat's finding
SHARED = point("shared", (1, 2, 3, 4), (), (5,))      # everyone agrees
PAIR = point("pair", (1, 2), (), (3, 4, 5))


def test_most_contested_first():
    order = [p.id for p in ranked([SHARED, LONE, DENIED, ONE_OFF, PAIR, SPLIT])]
    assert order == ["split", "one-off", "denied", "lone", "pair", "shared"]
    assert contest(SPLIT) < contest(ONE_OFF) < contest(DENIED) < contest(LONE) < contest(SHARED)
    # equals keep the referee's order
    twin = point("twin", (1, 2), (3, 4))
    assert [p.id for p in ranked([twin, SPLIT])] == ["twin", "split"]


def test_contested_shows_contradicted_points_and_lone_claims_only_for_review():
    found = ranked([SHARED, LONE, DENIED, ONE_OFF, PAIR, SPLIT])
    assert [p.id for p in select(found, CONTESTED)] == ["split", "one-off", "denied"]
    assert [p.id for p in select(found, CONTESTED, "design")] == ["split", "one-off", "denied"]
    assert [p.id for p in select(found, CONTESTED, "review")] == ["split", "one-off", "denied", "lone"]
    assert select(found, ALL) == found and select(found, OFF) == []


def test_the_block_names_the_seats_quotes_them_and_gives_the_point_id():
    found = Points(ranked([SHARED, SPLIT]))
    text = render(found, CONTESTED, models={1: "m1", 2: "m2", 3: "m3", 4: "m4", 5: "m5"})
    assert text == (f"{HEADING}\n\n**1. Claim split.** (point `split`)\n"
                    "- asserts: Seat 1 · m1: \u201cseat 1 on split\u201d; Seat 2 · m2: \u201cseat 2 on split\u201d\n"
                    "- denies: Seat 3 · m3: \u201cseat 3 on split\u201d; Seat 4 · m4: \u201cseat 4 on split\u201d\n"
                    "- silent: Seat 5 · m5\n")
    everything = render(found, ALL)
    assert "**1. Claim split.**" in everything and "**2. Claim shared.**" in everything
    assert "denies" not in everything.split("**2.")[1]


def test_the_block_when_nothing_is_contested_or_nothing_came_back():
    assert render(Points([SHARED, PAIR]), CONTESTED) == \
        f"{HEADING}\n\nNo seat contradicts another on the 2 points the referee found.\n"
    assert render(Points([]), CONTESTED) == f"{HEADING}\n\nThe referee found no checkable point in the answers.\n"
    failed = Points.failed("the referee timed out after 60 s")
    assert render(failed, ALL) == f"{HEADING}\n\npoints: unavailable, the referee timed out after 60 s\n"


def test_the_bench_field_lists_the_shown_points_and_says_what_was_dropped():
    found = Points(ranked([SHARED, SPLIT, LONE]), dropped=["point 4: seat 9 is not one that answered"],
                   dropped_count=3)
    got = found.bench(CONTESTED)
    assert [p["id"] for p in got["points"]] == ["split"]
    assert got["points"][0] == {"id": "split", "claim": "Claim split.", "assert": [1, 2], "deny": [3, 4],
                                "silent": [5], "quotes": {"1": "seat 1 on split", "2": "seat 2 on split",
                                                          "3": "seat 3 on split", "4": "seat 4 on split"}}
    assert got["points_info"] == {"mode": "contested", "found": 3, "shown": 1, "dropped": 3,
                                  "dropped_reasons": ["point 4: seat 9 is not one that answered"]}
    assert Points.failed("no referee").bench(ALL) == {"points": [], "points_info": {
        "mode": "all", "found": 0, "shown": 0, "dropped": 0, "unavailable": "no referee"}}


# ---- one judgement, many verdicts ------------------------------------------------------------

def test_a_true_point_is_a_real_claim_for_its_asserters_and_a_false_one_for_its_deniers():
    got = claims(SPLIT, True)
    assert [(c.seat, c.real, c.stance) for c in got] == [(1, True, "assert"), (2, True, "assert"),
                                                          (3, False, "deny"), (4, False, "deny")]
    assert got[0] == Claim("split", 1, True, "assert", "Claim split.", "seat 1 on split")
    assert got[2].text == "not so: Claim split." and got[0].text == "Claim split."
    assert got[2].to_dict() == {"point": "split", "seat": 3, "real": False, "stance": "deny",
                                "claim": "not so: Claim split.", "quote": "seat 3 on split"}


def test_a_false_point_turns_every_claim_around_and_cant_tell_gives_none():
    assert [(c.seat, c.real) for c in claims(SPLIT, False)] == [(1, False), (2, False), (3, True), (4, True)]
    assert claims(SPLIT, None) == []
    assert [c.seat for c in claims(DENIED, False)] == [2] and claims(DENIED, False)[0].real


def test_silent_seats_gain_nothing():
    assert 5 not in by_seat([(SPLIT, True), (ONE_OFF, False)])
    assert tally([(SPLIT, True), (ONE_OFF, False)]) == {1: (1, 1), 2: (1, 1), 3: (0, 2), 4: (1, 1)}


def test_proposals_useful_when_every_judged_claim_held_not_useful_when_any_broke():
    judged = [(SPLIT, True), (ONE_OFF, True), (LONE, None), (PAIR, True)]
    got = proposals(judged)
    assert {s: p.useful for s, p in got.items()} == {1: True, 2: True, 3: False, 4: False}
    assert (got[1].held, got[1].broke, got[1].points) == (3, 0, ("split", "one-off", "pair"))
    assert (got[3].held, got[3].broke) == (1, 1)                   # denied the true split, right on one-off
    assert (got[4].held, got[4].broke) == (0, 2)
    assert got[1].why == "every judged claim held (3 of 3)" and got[4].why == "2 of its 2 judged claims did not hold"
    assert 5 not in got                                             # its only point was "can't tell"
    assert got[3].to_dict() == {"seat": 3, "useful": False, "held": 1, "broke": 1, "points": ["split", "one-off"],
                                "why": "1 of its 2 judged claims did not hold"}


def test_changing_a_points_verdict_changes_every_seats_claims_and_withdrawing_it_removes_them():
    before, after = tally([(SPLIT, True)]), tally([(SPLIT, False)])
    assert before == {1: (1, 0), 2: (1, 0), 3: (0, 1), 4: (0, 1)}
    assert after == {1: (0, 1), 2: (0, 1), 3: (1, 0), 4: (1, 0)}
    assert tally([]) == {} and proposals([(SPLIT, None)]) == {}
