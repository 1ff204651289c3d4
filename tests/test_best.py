"""The best answer in one click: POST /bench/panels/{id}/best makes the chosen seat beat each other seat that answered
(comparisons kept per pair), a new pick replaces the old, DELETE withdraws it; the pick proposes verdicts; the CLI and
the MCP `verdict` tool pick too; bad picks are refused clearly."""
from __future__ import annotations

import pytest

from tests.helpers.dashboard import Session
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401  (the fake fixture)

ANSWERS = {"m-a": "A long and careful answer about the cache.", "m-b": "Short.", "m-c": "Medium answer here."}
COLS = {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger"}}


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS)
    for served, text in ANSWERS.items():
        fake.script(served, text)
    return make_service()


def ask(url) -> dict:
    status, _, data = Http(url)("POST", "/v1/chat/completions", body())
    assert status == 200, data
    return data["bench"]


def counts(svc) -> dict:
    return {(w, lo): n for w, lo, _, n in svc.bench.best.store.counts(None)}


def seat_of(bench: dict, model: str) -> int:
    return next(s["seat"] for s in bench["seats"] if s["model"] == model)


def test_a_pick_is_comparisons_replaced_by_the_next_and_withdrawn(served):
    api, bench = Http(served.url), ask(served.url)
    panel, a, b = bench["panel"], seat_of(bench, "a"), seat_of(bench, "b")
    status, _, got = api("POST", f"/bench/panels/{panel}/best", {"seat": a})
    assert status == 200, got
    assert sorted((c["winner"], c["loser"]) for c in got["comparisons"]) == [("a", "b"), ("a", "c")]
    assert got["proposals"] == [{"seat": a, "call": got["proposals"][0]["call"], "model": "a", "useful": True,
                                 "why": "picked as the best answer"}]
    assert counts(served) == {("a", "b"): 1, ("a", "c"): 1}
    assert api("GET", f"/bench/panels/{panel}/best")[2]["best"]["seat"] == a
    api("POST", f"/bench/panels/{panel}/best", {"seat": b})        # the latest pick counts
    assert counts(served) == {("b", "a"): 1, ("b", "c"): 1}
    status, _, gone = api("DELETE", f"/bench/panels/{panel}/best")
    assert status == 200 and gone["withdrawn"] is True and counts(served) == {}
    assert api("GET", f"/bench/panels/{panel}/best")[2]["best"] is None
    assert api("DELETE", f"/bench/panels/{panel}/best")[2]["withdrawn"] is False


def test_none_good_makes_no_comparison_and_proposes_every_seat_not_useful(served):
    api, bench = Http(served.url), ask(served.url)
    got = api("POST", f"/bench/panels/{bench['panel']}/best", {"seat": None})[2]
    assert got["seat"] is None and got["comparisons"] == [] and counts(served) == {}
    assert sorted(p["model"] for p in got["proposals"]) == ["a", "b", "c"]
    assert not any(p["useful"] for p in got["proposals"])


def test_bad_picks_are_refused_clearly(served):
    api, bench = Http(served.url), ask(served.url)
    path = f"/bench/panels/{bench['panel']}/best"
    status, _, err = api("POST", path, {"seat": 9})
    assert status == 400 and "Seat 9" in err["error"]["message"] and "answered" in err["error"]["message"]
    for bad in ({}, {"seat": "1"}, {"seat": True}, {"seat": 1, "x": 2}):
        status, _, err = api("POST", path, bad)
        assert status == 400 and "seat" in err["error"]["message"], bad
    assert api("POST", "/bench/panels/nope/best", {"seat": 1})[0] == 404


def test_the_cli_and_the_mcp_tool_pick(served, capsys):
    from benchwarmers.cli.main import main
    from benchwarmers.mcp.reach import HttpReach
    from benchwarmers.mcp.tools import Tools
    bench = ask(served.url)
    panel, c = bench["panel"], seat_of(bench, "c")
    assert main(["--url", served.url, "best", panel, str(c)]) == 0
    assert f"seat {c} (c) best" in capsys.readouterr().out and counts(served) == {("c", "a"): 1, ("c", "b"): 1}
    assert main(["--url", served.url, "best", panel, "--withdraw"]) == 0 and counts(served) == {}
    assert main(["--url", served.url, "best", panel, "seven"]) == 2
    tools = Tools(HttpReach(served.url, {}))
    result = tools.call("verdict", {"panel": panel, "best": c}, "2025-06-18")
    assert not result["isError"] and result["structuredContent"]["best"] == c
    assert "picked as the best answer" in result["content"][0]["text"]
    assert counts(served) == {("c", "a"): 1, ("c", "b"): 1}
    bad = tools.call("verdict", {"panel": panel, "best": 1, "call": "x"}, "2025-06-18")
    assert bad["isError"]


def test_ratings_order_members_of_known_quality_with_intervals(served):
    """Picks that follow a known order (a over b over c, each beaten now and then) rate the members in that order,
    each with an interval around its rating; the length-controlled view sits beside the plain one."""
    import random
    api, rng = Http(served.url), random.Random(7)
    quality = {"a": 3, "b": 2, "c": 1}
    for _ in range(24):
        bench = ask(served.url)
        seats = {s["model"]: s["seat"] for s in bench["seats"]}
        chosen = max(seats, key=lambda m: quality[m] + rng.random() * 1.5)
        assert api("POST", f"/bench/panels/{bench['panel']}/best", {"seat": seats[chosen]})[0] == 200
    status, _, got = api("GET", "/bench/rankings?collection=core")
    assert status == 200, got
    models = got["models"]
    assert [m["model"] for m in models] == ["a", "b", "c"]
    for m in models:
        lo, hi = m["interval"]
        assert lo < m["rating"] < hi and m["comparisons"] > 0
    assert models[0]["interval"][0] > models[2]["interval"][1]      # the best and the worst told apart
    assert [m["model"] for m in got["length_controlled"]["models"]][0] == "a"
    assert "length_effect" in got["length_controlled"]
    assert api("GET", "/bench/rankings")[2]["models"][0]["model"] == "a"          # overall
    page = Session(served.url).request("GET", "/collections")[2]     # each member's plain rating beside its record
    assert f"{models[0]['rating']:,.0f} <span class=\"muted\">(" in page
    assert api("GET", "/bench/rankings?blind=1")[2]["models"] == []              # none given blind
    from benchwarmers.core.choose import rank
    stats = served.bench.rankings.models("core")           # route choice reads the picks as evidence
    assert stats["a"].evidence[0] > 0 and stats["a"].judged == 0
    assert rank(["c", "b", "a"], stats)[0].alias == "a" and "best picks won" in rank(["a"], stats)[0].why
    record = api("GET", "/bench/record?collection=core")[2]["models"]
    assert record["a"]["wins"] > record["c"]["wins"] and record["c"]["losses"] > record["a"]["losses"]
    assert api("GET", "/bench/rankings?blind=maybe")[0] == 400
