"""Points in a panel's reply: the referee called after the seats, in the background (the answers never wait for it),
its points in the record and at GET /bench/panels/{id}/points; a request that asks for them gets them in the reply
(the block and `bench.points`); its call recorded."""
from __future__ import annotations

import json
import threading

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.panel import body, fake, requests_for, setup_bench, wait_for  # noqa: F401  (the fake fixture)
from tests.helpers.http import Http

ANSWERS = {"m-a": "The cache is stale. The lock is held.", "m-b": "The cache is fresh. The lock is held.",
           "m-c": "The lock is held."}
COLS = {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger", "referee": "merger",
                 "points": "contested"}}
WAITS = {"points": "contested"}        # `bench.points` in the body: the reply waits for them


def script(fake, referee=None):
    for served, text in ANSWERS.items():
        fake.script(served, text)
    referee = referee or FakeReferee()
    fake.script("m-merge", referee.reply() if isinstance(referee, FakeReferee) else referee)


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS)
    script(fake)
    return make_service()


def ask(url, **kw) -> dict:
    status, _, data = Http(url)("POST", "/v1/chat/completions", body(**kw))
    assert status == 200, data
    return data


def points_of(url, panel: str) -> dict:
    """GET /bench/panels/{panel}/points once the referee is over."""
    def over():
        got = Http(url)("GET", f"/bench/panels/{panel}/points")[2]
        return got if got["info"] and not got["info"].get("pending") else None
    return wait_for(over)


def asked(url, **kw) -> dict:
    """A panel asked, and its points once they are in."""
    return points_of(url, ask(url, **kw)["bench"]["panel"])


def test_a_whole_reply_goes_out_before_its_referee_and_the_points_land_later(home, fake, make_service):
    setup_bench(home, fake, COLS)
    gate = threading.Event()
    script(fake, FakeReferee().reply(hold=gate))         # the referee answers only once the test says so
    url = make_service().url
    try:
        data = ask(url)
        text, bench = data["choices"][0]["message"]["content"], data["bench"]
        panel = bench["panel"]
        assert "## Where they disagree" not in text and text.index("## Seat 3") < text.index("_Points: the referee")
        assert text.rstrip().endswith(f"will be at /bench/panels/{panel}/points (`bench points {panel}`) and on the "
                                      f"ask's page /calls/{panel}._")
        info = bench["points_info"]
        assert info["pending"] is True and info["referee"] == "merger" and "points" not in bench
        assert info["url"] == f"/bench/panels/{panel}/points" and info["command"] == f"bench points {panel}"
        assert "call" not in info                       # its call id is named once its record is kept
        got = Http(url)("GET", f"/bench/panels/{panel}/points")[2]
        assert got["info"]["pending"] is True and got["points"] == []
        wait_for(lambda: requests_for(fake, "m-merge"))     # the referee was asked after the seats
    finally:
        gate.set()
    got = points_of(url, panel)
    [point] = [p for p in got["points"] if p["shown"]]
    assert point["claim"] == "The cache is stale." and point["assert"] == [1] and point["deny"] == [2]
    assert point["silent"] == [3] and point["quotes"] == {"1": "The cache is stale", "2": "The cache is fresh"}
    assert got["info"]["referee"] == "merger" and got["info"]["found"] == 2 and "pending" not in got["info"]
    assert Http(url)("GET", f"/bench/calls/{got['info']['call']}")[2]["kind"] == "referee"


def test_a_request_that_asks_for_points_waits_for_them(served, fake):
    data = ask(served.url, bench=WAITS)
    text, bench = data["choices"][0]["message"]["content"], data["bench"]
    assert "## Where they disagree" in text and text.index("## Seat 3") < text.index("## Where they disagree")
    [point] = bench["points"]
    assert point["claim"] == "The cache is stale." and point["assert"] == [1] and point["deny"] == [2]
    assert point["silent"] == [3] and point["quotes"] == {"1": "The cache is stale", "2": "The cache is fresh"}
    assert bench["points_info"]["referee"] == "merger" and bench["points_info"]["found"] == 2
    assert "pending" not in bench["points_info"]
    assert len(requests_for(fake, "m-merge")) == 1
    # the call id it names is in the record already
    assert Http(served.url)("GET", f"/bench/calls/{bench['points_info']['call']}")[0] == 200


def record(url) -> dict:
    return Http(url)("GET", "/bench/record?collection=core")[2]["models"]


def claims(models: dict, alias: str) -> tuple:
    m = models.get(alias, {})
    return m.get("real_claims", 0), m.get("false_claims", 0)


def test_a_point_verdict_gives_claims_to_the_seats_that_took_a_side_and_withdrawing_takes_them_back(served):
    api = Http(served.url)
    data = ask(served.url, bench=WAITS)
    [point] = data["bench"]["points"]
    status, _, judged = api("POST", f"/bench/points/{point['id']}/verdict", {"true": True, "note": "checked"})
    assert status == 200, judged
    assert {(c["seat"], c["real"], c["stance"]) for c in judged["claims"]} == {(1, True, "assert"), (2, False, "deny")}
    seats = {s["seat"]: s["call"] for s in data["bench"]["seats"]}
    assert {c["seat"]: c["call"] for c in judged["claims"]} == {1: seats[1], 2: seats[2]}
    models = record(served.url)
    assert claims(models, "a") == (1, 0) and claims(models, "b") == (0, 1) and claims(models, "c") == (0, 0)
    proposals = {p["seat"]: p for p in judged["proposals"]}
    assert proposals[1]["useful"] is True and proposals[2]["useful"] is False and 3 not in proposals
    assert proposals[1]["call"] == seats[1]
    # judged again, the other way: the claims turn over, not add up
    api("POST", f"/bench/points/{point['id']}/verdict", {"true": False})
    models = record(served.url)
    assert claims(models, "a") == (0, 1) and claims(models, "b") == (1, 0)
    got = api("GET", f"/bench/panels/{data['bench']['panel']}/points")[2]
    assert got["points"][0]["verdict"]["true"] is False and got["info"]["referee"] == "merger"
    status, _, gone = api("DELETE", f"/bench/points/{point['id']}/verdict")
    assert status == 200 and gone["withdrawn"] is True and gone["proposals"] == []
    models = record(served.url)
    assert claims(models, "a") == (0, 0) and claims(models, "b") == (0, 0)
    assert api("GET", f"/bench/panels/{data['bench']['panel']}/points")[2]["points"][0]["verdict"] is None


def test_the_kept_claims_are_rebuilt_from_the_point_claims(served):
    api = Http(served.url)
    [point] = [p for p in asked(served.url)["points"] if p["shown"]]
    api("POST", f"/bench/points/{point['id']}/verdict", {"true": True})
    before = record(served.url)
    served.bench.db.call(lambda conn: conn.execute("UPDATE standings SET real_claims = 0, false_claims = 0"))
    assert api("POST", "/bench/store/rebuild", {})[0] == 200
    after = record(served.url)
    assert claims(after, "a") == claims(before, "a") == (1, 0) and claims(after, "b") == (0, 1)


def test_the_flag_and_the_route_choice_move_with_point_verdicts(served):
    from benchwarmers.core.choose import rank
    api = Http(served.url)
    points = [asked(served.url)["points"][0] for _ in range(3)]
    for p in points:
        api("POST", f"/bench/points/{p['id']}/verdict", {"true": True})
    models = record(served.url)
    assert models["b"]["confidently_wrong"] is True and models["a"]["confidently_wrong"] is False
    assert [r.alias for r in rank(["a", "b"], served.bench.rankings.models("core"))] == ["a", "b"]
    for p in points:
        api("POST", f"/bench/points/{p['id']}/verdict", {"true": False})
    models = record(served.url)
    assert models["a"]["confidently_wrong"] is True and models["b"]["confidently_wrong"] is False
    assert [r.alias for r in rank(["a", "b"], served.bench.rankings.models("core"))] == ["b", "a"]


def test_bad_point_verdicts_are_refused_clearly(served):
    api = Http(served.url)
    [point] = [p for p in asked(served.url)["points"] if p["shown"]]
    assert api("POST", "/bench/points/nope/verdict", {"true": True})[0] == 404
    assert api("POST", f"/bench/points/{point['id']}/verdict", {"true": "yes"})[0] == 400
    assert api("POST", f"/bench/points/{point['id']}/verdict", {"truth": True})[0] == 400
    assert api("GET", "/bench/panels/nope/points")[0] == 404
    status, _, judged = api("POST", f"/bench/points/{point['id']}/verdict", {"true": None})
    assert status == 200 and judged["claims"] == [] and judged["true"] is None


@pytest.mark.parametrize("lie", ["bad_quotes", "seat_nine", "huge", "prose", "empty"])
def test_a_lying_referee_leaves_the_answers_untouched_and_says_why(home, fake, make_service, lie):
    setup_bench(home, fake, COLS)
    script(fake, FakeReferee(lie))
    url = make_service().url
    data = ask(url, bench=WAITS)
    text, bench = data["choices"][0]["message"]["content"], data["bench"]
    for n, served in enumerate(ANSWERS, 1):
        assert ANSWERS[served] in text and bench["seats"][n - 1]["answer"] == ANSWERS[served]
    if lie == "seat_nine":   # seat 9 is dropped from each point; the points of the real seats stand
        assert all(9 not in p["assert"] for p in bench["points"]) and bench["points_info"]["dropped"] >= 1
        return
    assert bench["points"] == [] and bench["points_info"]["unavailable"]
    assert f"points: unavailable, {bench['points_info']['unavailable']}" in text
    assert "merger" in bench["points_info"]["unavailable"] and "--referee" in bench["points_info"]["unavailable"]


def test_a_referee_that_hangs_times_out_and_the_answers_go_out(home, fake, make_service):
    import threading
    setup_bench(home, fake, COLS, {"referee_timeout": 0.5})
    gate = threading.Event()
    script(fake, FakeReferee.hang(gate))
    try:
        url = make_service().url
        data = ask(url, bench=WAITS)
        text = data["choices"][0]["message"]["content"]
        assert "points: unavailable, the referee merger gave no answer within 0.5 s; raise referee_timeout" in text
        assert all(s["status"] == "ok" for s in data["bench"]["seats"])
        # one that did not ask for them is answered at once, and its points say the same later
        later = points_of(url, ask(url)["bench"]["panel"])
        assert later["info"]["unavailable"].startswith("the referee merger gave no answer within 0.5 s")
        assert Http(url)("GET", f"/bench/calls/{later['info']['call']}")[2]["status"] == "timeout"
    finally:
        gate.set()


def test_a_failing_referee_is_a_line_in_the_reply_never_a_500(home, fake, make_service):
    from tests.fakes.server import Reply
    setup_bench(home, fake, COLS)
    script(fake)
    fake.script("m-merge", Reply.error(500, "referee down"))
    data = ask(make_service().url, bench=WAITS)
    assert "points: unavailable," in data["choices"][0]["message"]["content"]
    assert data["bench"]["points_info"]["referee"] == "merger"


def test_the_referee_call_is_recorded_with_the_panel_and_in_the_ledger(served):
    api = Http(served.url)
    data = ask(served.url, bench=WAITS)
    call = data["bench"]["points_info"]["call"]
    status, _, rec = api("GET", f"/bench/calls/{call}")
    assert status == 200 and rec["kind"] == "referee" and rec["panel"] == data["bench"]["panel"]
    assert rec["model"] == "merger" and rec["status"] == "ok"
    usage = api("GET", "/bench/usage?by=kind")[2]
    assert "referee" in json.dumps(usage)
    item = api("GET", f"/bench/history/{data['bench']['panel']}")[2]
    assert [s["seat"] for s in item["seats"]] == [1, 2, 3] and item["referee"]["call"] == call


def test_which_points_a_request_asks_for(home, fake, make_service):
    cols = {"core": dict(COLS["core"], points="off")}
    setup_bench(home, fake, cols)
    script(fake)
    url = make_service().url
    assert "points" not in ask(url)["bench"] and not requests_for(fake, "m-merge")
    assert [p["claim"] for p in ask(url, model="bench/core:points")["bench"]["points"]] == \
        ["The cache is stale.", "The lock is held."]
    assert len(ask(url, bench={"points": "contested"})["bench"]["points"]) == 1
    merged = ask(url, model="bench/core:merged:points")
    assert merged["bench"]["mode"] == "merged" and len(merged["bench"]["points"]) == 2
    assert Http(url)("POST", "/v1/chat/completions", body(bench={"points": "some"}))[0] == 400


def test_route_mode_never_asks_the_referee(home, fake, make_service):
    setup_bench(home, fake, COLS)
    script(fake)
    url = make_service().url
    data = ask(url, model="bench/core:route", bench={"points": "all"})
    assert "points" not in data.get("bench", {}) and not requests_for(fake, "m-merge")
