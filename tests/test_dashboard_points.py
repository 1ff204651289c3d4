"""A panel's points on the dashboard: the call page's card (HTML and .json) while the referee reads and once its points
are in, judging a point by form, the quotes marked in the columns, the proposal confirmed in one post, the Ask
stream's points line, and points unavailable."""
from __future__ import annotations

import json
import re
import threading

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.dashboard import Session
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench, wait_for  # noqa: F401  (the fake fixture)
from tests.test_points_wired import ANSWERS, COLS, WAITS


def serve(home, fake, make_service, referee: FakeReferee):
    setup_bench(home, fake, COLS)
    for served, text in ANSWERS.items():
        fake.script(served, text)
    fake.script("m-merge", referee.reply())
    return make_service()


@pytest.fixture
def served(home, fake, make_service):
    return serve(home, fake, make_service, FakeReferee())


def ask(url, **kw) -> dict:
    """A panel asked; by default it waits for its points (`bench.points`)."""
    status, _, data = Http(url)("POST", "/v1/chat/completions", body(**{"bench": WAITS, **kw}))
    assert status == 200, data
    return data["bench"]


def test_the_call_page_shows_the_points_above_the_columns_and_judges_one_by_form(served):
    bench = ask(served.url)
    panel, [point] = bench["panel"], bench["points"]
    s = Session(served.url)
    d = s.json(f"/calls/{panel}.json")
    assert d["points"]["points"][0]["id"] == point["id"] and d["points"]["proposals"] == []
    status, _, page = s.get(f"/calls/{panel}")
    assert status == 200
    assert page.index('id="points"') < page.index('class="seats"')
    assert "The cache is stale." in page and 'value="cant"' in page and 'action="/calls/point"' in page
    assert "Seat 1 · a: “The cache is stale”" in page and "Seat 3 · c" in page
    assert "<mark>The cache is stale</mark>" in page and "<mark>The cache is fresh</mark>" in page
    assert 'class="proposal"' not in page
    status, _, said = s.form("/calls/point", {"point": point["id"], "verdict": "true", "back": f"/calls/{panel}"},
                             script=True)
    assert status == 200 and said["message"] == "Point judged true." and said["point"]["true"] is True
    d = s.json(f"/calls/{panel}.json")
    assert d["points"]["points"][0]["verdict"]["true"] is True
    proposals = {p["seat"]: p["useful"] for p in d["points"]["proposals"]}
    assert proposals == {1: True, 2: False}
    page = s.get(f"/calls/{panel}")[2]
    assert "judged: <strong>true</strong>" in page and page.count('class="proposal"') == 2
    assert "Confirm: useful" in page and "Confirm: not useful" in page
    calls = {x["seat"]: x["call"] for x in bench["seats"]}
    status, _, saved = s.form("/calls/verdict", {"call": calls[2], "useful": "no", "from_points": "1",
                                                 "back": f"/calls/{panel}"}, script=True)
    assert status == 200 and saved["verdict"]["useful"] is False and saved["verdict"]["from_points"] is True
    # can't tell: kept, no proposal left; withdrawn: no verdict; a bad choice is a 400 with what to do
    s.form("/calls/point", {"point": point["id"], "verdict": "cant"}, script=True)
    d = s.json(f"/calls/{panel}.json")
    assert d["points"]["points"][0]["verdict"]["true"] is None and d["points"]["proposals"] == []
    status, _, said = s.form("/calls/point", {"point": point["id"], "verdict": "withdraw"}, script=True)
    assert status == 200 and said["point"]["withdrawn"] is True
    assert s.json(f"/calls/{panel}.json")["points"]["points"][0]["verdict"] is None
    status, _, said = s.form("/calls/point", {"point": point["id"], "verdict": "maybe"}, script=True)
    assert status == 400 and "Can't tell" in said["error"]["message"]
    status, _, said = s.form("/calls/point", {"point": "pt_nope", "verdict": "true"}, script=True)
    assert status == 404


def test_without_script_a_point_verdict_posts_and_comes_back_to_the_page(served):
    bench = ask(served.url)
    panel, [point] = bench["panel"], bench["points"]
    s = Session(served.url)
    status, headers, _ = s.form("/calls/point", {"point": point["id"], "verdict": "false",
                                                 "back": f"/calls/{panel}"})
    assert status == 303 and headers["location"] == f"/calls/{panel}"
    page = s.get(f"/calls/{panel}")[2]
    assert "Point judged false." in page and "judged: <strong>false</strong>" in page


def test_the_ask_stream_says_the_referee_is_reading_and_the_page_shows_the_points_once_in(home, fake, make_service):
    gate = threading.Event()
    svc = serve(home, fake, make_service, FakeReferee())
    fake.script("m-merge", FakeReferee().reply(hold=gate))
    s = Session(svc.url)
    try:
        text = s.request("POST", "/ask/stream", f"collection=core&prompt=hello&csrf={s.csrf}".encode(),
                         {"Content-Type": "application/x-www-form-urlencoded"})[2]
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
        info = next(x["points"] for x in lines if "points" in x)
        assert info["pending"] is True and info["referee"] == "merger"
        assert "done" in lines[-1] and lines.index(next(x for x in lines if "points" in x)) == len(lines) - 2
        panel = lines[0]["panel"]
        page = s.get(f"/calls/{panel}")[2]
        assert "data-points-pending" in page and "The referee merger is reading the answers" in page
        assert s.json(f"/calls/{panel}.json")["points"]["info"]["pending"] is True
    finally:
        gate.set()
    wait_for(lambda: "data-points-pending" not in s.get(f"/calls/{panel}")[2])
    page = s.get(f"/calls/{panel}")[2]
    assert "Seat 1 · a: “The cache is stale”" in page and "<mark>The cache is stale</mark>" in page


def test_points_unavailable_say_why_on_the_page_and_the_answers_stay(home, fake, make_service):
    svc = serve(home, fake, make_service, FakeReferee("prose"))
    bench = ask(svc.url)
    assert "merger" in bench["points_info"]["unavailable"]
    s = Session(svc.url)
    d = s.json(f"/calls/{bench['panel']}.json")
    assert d["points"]["info"]["unavailable"] and d["points"]["points"] == []
    status, _, page = s.get(f"/calls/{bench['panel']}")
    assert status == 200 and re.search(r"points: unavailable, \w", page)
    assert page.count('class="seat"') == 3 and "The cache is fresh." in page and "<mark>" not in page


def test_a_panel_without_a_referee_shows_no_points_card(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0, "points": "off"}})
    svc = make_service()
    bench = ask(svc.url, bench={})
    page = Session(svc.url).get(f"/calls/{bench['panel']}")[2]
    assert 'id="points"' not in page and page.count('class="seat"') == 2
