"""Blind panels in the record's other answers: GET /bench/calls and /bench/calls/{id}, the models passed over (for an
explore seat, as referee), a seat retried through the API or the Ask page name no model of a blind panel until it is
judged, and name them once it is."""
from __future__ import annotations

import json
import re

from tests.fakes.referee import FakeReferee
from tests.helpers.dashboard import Session
from tests.helpers.http import Http
from tests.helpers.panel import MEMBERS, OTHERS, fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.test_blind import COLS, EXTRA, FORBIDDEN, NAMES, USER, seat_rows, served  # noqa: F401  (the served fixture)

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def asked(api: Http, **bench) -> str:
    status, _, data = api("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": USER,
                                                           **({"bench": bench} if bench else {})})
    assert status == 200, data
    assert not FORBIDDEN.search(json.dumps(data)), data
    return data["bench"]["panel"]


def test_the_calls_of_a_blind_panel_name_no_model_until_it_is_judged(served):
    api = Http(served.url)
    panel = asked(api)
    listed = api("GET", f"/bench/calls?panel={panel}")[2]["calls"]
    seats = [c for c in listed if c["seat"]]
    assert len(seats) == 3 and {c["model"] for c in seats} == {"Seat 1", "Seat 2", "Seat 3"}
    assert not FORBIDDEN.search(json.dumps(listed)), listed
    assert all(c["served"] is None and "a model" in c["answer"] for c in seats)
    assert not FORBIDDEN.search(json.dumps(api("GET", "/bench/calls")[2]))
    one = api("GET", f"/bench/calls/{seats[0]['id']}")
    assert one[0] == 200 and one[2]["model"] == f"Seat {seats[0]['seat']}" and not FORBIDDEN.search(json.dumps(one[2]))
    for name in NAMES:   # a listing of one model's calls or asks would name it: the blind panel is left out
        assert panel not in json.dumps(api("GET", f"/bench/calls?model={name}")[2])
        assert panel not in api("GET", f"/models/{name}")[2]
        assert panel not in json.dumps(api("GET", f"/bench/history?model={name}")[2])
        assert panel not in api("GET", f"/calls?model={name}")[2]
    assert panel in json.dumps(api("GET", "/bench/history?collection=blindcol")[2])
    assert api("POST", f"/bench/panels/{panel}/best", {"seat": 2})[0] == 200
    shown = api("GET", f"/bench/calls?panel={panel}")[2]["calls"]
    assert {c["model"] for c in shown if c["seat"]} == set(NAMES) and all(c["served"] for c in shown if c["seat"])
    assert api("GET", f"/bench/calls/{seats[0]['id']}")[2]["model"] in NAMES
    assert all(panel in json.dumps(api("GET", f"/bench/calls?model={name}")[2]) for name in NAMES)
    assert all(panel in json.dumps(api("GET", f"/bench/history?model={name}")[2]) for name in NAMES)


def test_the_models_passed_over_for_an_explore_seat_are_not_named_until_judged(home, fake, make_service):
    cols = {"blindcol": {"members": ["alpha-model", "bravo-model"], "explore": 1, "merge_model": "merger",
                         "blind": True}}
    blind = {"vision": False}     # no model but the members can read the image: every other one is passed over
    others = {alias: ("fake", f"m-{alias}", blind) for alias in MEMBERS + OTHERS}
    setup_bench(home, fake, cols, **{**EXTRA, **others, "charlie-model": ("fake", "srv-charlie", blind),
                                     "delta-model": ("fake", "srv-delta", blind)})
    for alias, srv in NAMES.items():
        fake.script(srv, f"I am {srv}, also known as {alias}.")
    api = Http(make_service().url)
    content = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "https://e.com/a.png"}}]
    status, _, data = api("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": [
        {"role": "user", "content": content}]})
    assert status == 200, data
    forbidden = re.compile(FORBIDDEN.pattern + "|delta-model|srv-delta", re.I)
    passed = data["bench"]["passed_over"]
    assert passed and {p["model"] for p in passed} == {"a model"}, passed
    assert not forbidden.search(json.dumps(data)), data
    panel = data["bench"]["panel"]
    for path in (f"/bench/history/{panel}", f"/bench/panels/{panel}", f"/calls/{panel}"):
        got = api("GET", path)[2]
        assert not forbidden.search(got if isinstance(got, str) else json.dumps(got)), path
    assert "/models/a model" not in api("GET", f"/calls/{panel}")[2]
    assert api("POST", f"/bench/panels/{panel}/best", {"seat": 1})[0] == 200
    named = {p["model"] for p in api("GET", f"/bench/panels/{panel}")[2]["passed_over"]}
    assert {"charlie-model", "delta-model"} <= named


def test_a_seat_passed_over_as_referee_is_not_named(home, fake, make_service):
    cols = {"blindcol": dict(COLS["blindcol"], referee="alpha-model", points="contested")}
    setup_bench(home, fake, cols, **EXTRA, **{"delta-model": ("fake", "srv-delta")})
    fake.script("srv-alpha", "The cache is stale.")
    fake.script("srv-bravo", "The cache is fresh.")
    fake.script("srv-charlie", "The lock is held.")
    fake.script("srv-delta", FakeReferee().reply())
    api = Http(make_service().url)
    status, _, data = api("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": USER,
                                                           "bench": {"points": "contested"}})
    assert status == 200, data
    text = data["choices"][0]["message"]["content"]
    assert "passed over: a model (a seat of this panel" in text, text
    assert data["bench"]["points_info"]["passed_over"][0]["model"] == "a model"
    assert not FORBIDDEN.search(text) and not FORBIDDEN.search(json.dumps(data["bench"])), data["bench"]
    panel = data["bench"]["panel"]
    points = api("GET", f"/bench/panels/{panel}/points")[2]
    assert points["info"]["passed_over"][0]["model"] == "a model" and not FORBIDDEN.search(json.dumps(points))
    assert not FORBIDDEN.search(api("GET", f"/calls/{panel}")[2])
    assert api("POST", f"/bench/panels/{panel}/best", {"seat": 1})[0] == 200
    assert api("GET", f"/bench/panels/{panel}/points")[2]["info"]["passed_over"][0]["model"] == "alpha-model"


def test_a_seat_retried_names_no_model_until_the_panel_is_judged(served):
    api = Http(served.url)
    panel = asked(api)
    status, _, retried = api("POST", f"/bench/panels/{panel}/retry", {"seat": 1})
    assert status == 200 and retried["seat"]["model"] == "Seat 1", retried
    assert not FORBIDDEN.search(json.dumps(retried)) and "a model" in retried["seat"]["answer"]
    stop = api("POST", f"/bench/panels/{panel}/stop", {"seat": 2})      # over already: a 409 that names none
    assert stop[0] == 409 and not FORBIDDEN.search(json.dumps(stop[2]))
    s = Session(served.url)
    s.get("/ask")
    status, _, text = s.request("POST", "/ask/retry", f"panel={panel}&seat=2&csrf={s.csrf}".encode(), FORM)
    assert status == 200 and '"Seat 2"' in text and not FORBIDDEN.search(text), text
    assert api("POST", f"/bench/panels/{panel}/best", {"seat": 3})[0] == 200
    status, _, retried = api("POST", f"/bench/panels/{panel}/retry", {"seat": 1})
    assert status == 200 and retried["seat"]["model"] in NAMES
    status, _, text = s.request("POST", "/ask/retry", f"panel={panel}&seat=2&csrf={s.csrf}".encode(), FORM)
    assert status == 200 and FORBIDDEN.search(text), text


def seat_calls(svc, panel: str) -> dict:
    """model -> its seat's call id on `panel`, from the record itself."""
    return {r["model"]: r["id"] for r in seat_rows(svc, panel)}


def test_the_useful_rate_from_blind_verdicts_alone(served):
    api = Http(served.url)
    first, second = (seat_calls(served, asked(api)) for _ in range(2))
    assert api("POST", "/bench/verdict", {"call": first["alpha-model"], "useful": True})[0] == 200      # blind
    assert api("POST", "/bench/verdict", {"call": first["bravo-model"], "useful": False})[0] == 200     # shown
    assert api("POST", "/bench/verdict", {"call": second["bravo-model"], "useful": False})[0] == 200    # blind
    assert api("POST", "/bench/verdict", {"call": second["alpha-model"], "useful": True})[0] == 200     # shown
    record = api("GET", "/bench/record?blind=1")[2]
    alpha, bravo = record["models"]["alpha-model"], record["models"]["bravo-model"]
    assert alpha["judged"] == 2 and alpha["blind"]["judged"] == 1 and alpha["blind"]["useful_rate"] == 1.0
    assert bravo["judged"] == 2 and bravo["blind"] == {"judged": 1, "useful": 0, "useful_rate": 0.0,
                                                       "useful_interval": bravo["blind"]["useful_interval"]}
    assert record["models"]["charlie-model"]["blind"] is None
    assert record["collections"]["blindcol"]["alpha-model"]["blind"]["judged"] == 1
    assert api("GET", "/bench/record?collection=blindcol&blind=1")[2]["models"]["bravo-model"]["blind"]["judged"] == 1
    assert "blind" not in api("GET", "/bench/record")[2]["models"]["alpha-model"]
    assert api("GET", "/bench/record?blind=yes")[0] == 400
    page = api("GET", "/models?blind=1")[2]
    assert "Useful (blind verdicts)" in page and "no blind verdict yet" in page
    assert "Useful (blind verdicts)" not in api("GET", "/models")[2]
    # the blind verdict revised once the models are shown: the current verdict is no longer a blind one
    assert api("POST", "/bench/verdict", {"call": first["alpha-model"], "useful": False})[0] == 200
    assert api("GET", "/bench/record?blind=1")[2]["models"]["alpha-model"]["blind"] is None
    kept = api("GET", "/bench/record?blind=1")[2]
    assert api("POST", "/bench/store/rebuild", {})[0] == 200       # the kept counts made again say the same
    assert api("GET", "/bench/record?blind=1")[2] == kept
