"""Keyset pages and counts that stop: a page looks through so many asks at most and says where it stopped, a count
of every ask stops at its cap, and the answers waiting for a verdict are looked for among the latest calls."""
from __future__ import annotations

import pytest

from benchwarmers.store import history, pending
from tests.fakes import Reply
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401 (fake is a fixture)


@pytest.fixture
def api(home, fake, app):
    setup_bench(home, fake)
    return app


def asks(api, n: int) -> list[str]:
    out = []
    for i in range(n):
        status, _, d = api("POST", "/v1/chat/completions", body(content=f"q{i}"))
        assert status == 200, d
        out.append(d["bench"]["panel"])
    return out


def test_a_page_looks_through_so_many_asks_and_goes_on_from_there(api, fake, monkeypatch):
    fake.script("m-a", Reply.error(500, "a broke"))
    failing = asks(api, 1)                     # the only ask with a failed seat: the oldest
    fake.script("m-a", Reply(text="fine"))
    asks(api, 6)
    monkeypatch.setattr(history, "SCAN", 3)
    d = api("GET", "/bench/history?status=failed")[2]
    assert d["items"] == [] and d["searched_to"] and d["next"]          # nothing in the newest three: it says so
    seen = []
    while d["next"]:
        d = api("GET", f"/bench/history?status=failed&before={d['next']}")[2]
        seen += [i["id"] for i in d["items"]]
    assert seen == failing


def test_counts_stop_at_their_cap(api, monkeypatch):
    asks(api, 5)
    monkeypatch.setattr(history, "COUNT_CAP", 3)
    d = api("GET", "/bench/history")[2]
    assert (d["total"], d["total_capped"]) == (3, True)
    monkeypatch.setattr(history, "COUNT_SCAN", 2)
    d = api("GET", "/bench/history?verdict=missing")[2]
    assert (d["total"], d["counted_in"]) == (2, 2)                     # two of the latest two looked at
    monkeypatch.setattr(pending, "REACH", 4)
    waiting = api("GET", "/bench/pending")[2]
    assert waiting["total_capped"] and waiting["looked_through"] == 4 and waiting["total"] <= 4
    page = api("GET", "/calls?verdict=missing")[2]
    assert "2 of the latest 2 asks" in page


def test_a_shadow_seat_is_found_by_its_turn(home, fake, app):
    setup_bench(home, fake, {"agent": {"members": ["a", "b"], "explore": 0, "shadow": 1}})
    status, headers, d = app("POST", "/v1/chat/completions", body("bench/agent:route"))
    assert status == 200, d
    turn = headers["x-bench-call"]
    from tests.helpers.panel import wait_for
    wait_for(lambda: len(app("GET", f"/bench/history/{turn}")[2]["seats"]) == 2)
    shadow = app.bench.db.one("SELECT turn, kind FROM calls WHERE kind = 'shadow'")
    assert tuple(shadow) == (turn, "shadow")
