"""One seat of a panel stopped or asked again (issue 42): POST /bench/panels/{id}/stop and /retry, and the Ask page's
/ask/stop and /ask/retry; what the record keeps; bad input answered with a clear 4xx."""
from __future__ import annotations

import json
import threading
from contextlib import contextmanager

import pytest

from benchwarmers.canonical import Ask, Message, Text
from benchwarmers.core import again
from benchwarmers.core.panelrun import PanelRun
from benchwarmers.core.seating import Plan
from benchwarmers.errors import Conflict
from tests.fakes import Reply
from tests.helpers.dashboard import Session
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench, wait_for  # noqa: F401
from tests.test_panel_stream import open_stream

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def chats(fake) -> list:
    """The chat requests the fake was sent, in order."""
    return [r for r in list(fake.requests) if "/chat/completions" in r.path]


@contextmanager
def streaming(svc, fake):
    """duo asked streamed, both seats sent (h held): (the admin API, the open response, the panel's id)."""
    conn, resp = open_stream(svc.url, body("bench/duo"))
    try:
        wait_for(lambda: len(chats(fake)) == 2)
        yield Http(svc.url), resp, resp.getheader("x-bench-panel")
    finally:
        conn.close()


@pytest.fixture
def duo(home, fake, make_service):
    """duo = h (held until the test lets it go) and f (answers at once)."""
    setup_bench(home, fake, {"duo": {"members": ["h", "f"], "explore": 0, "points": "off"}},
                {"stream_seats": "none"}, h=("fake", "m-h"), f=("fake", "m-f"))
    gate = threading.Event()
    fake.script("m-h", Reply(text="h took its time.", hold=gate))
    fake.script("m-f", Reply(text="f is sure."))
    svc = make_service()
    yield svc, gate
    gate.set()


def test_a_seat_stopped_while_out_is_hung_up_and_recorded_as_stopped_then_retried(duo, fake):
    svc, gate = duo
    with streaming(svc, fake) as (api, resp, panel):
        status, _, d = api("POST", f"/bench/panels/{panel}/stop", {"seat": 1})
        assert status == 200 and d["panel"] == panel and d["seat"] == 1 and d["status"] == "stopped"
        text = resp.read().decode()
    assert "stopped by the user" in text and "f is sure." in text
    item = api("GET", f"/bench/history/{panel}")[2]
    h = item["seats"][0]
    assert (h["model"], h["status"], h["call"]) == ("h", "stopped", d["call"])
    assert "stopped by the user" in h["error"]
    # stopping it again: it is not out any more
    status, _, err = api("POST", f"/bench/panels/{panel}/stop", {"seat": 1})
    assert status == 409 and "not running" in err["error"]["message"]
    # retried: the same model and ask, a new call in the seat's place; the stopped call is kept beside it
    gate.set()
    status, _, d = api("POST", f"/bench/panels/{panel}/retry", {"seat": 1})
    assert status == 200 and d["retry_of"] == h["call"] and d["seat"]["status"] == "ok"
    assert d["seat"]["answer"] == "h took its time." and d["seat"]["seat"] == 1
    asked = [c.body["messages"] for c in chats(fake) if c.body["model"] == "m-h"]
    assert len(asked) == 2 and asked[0] == asked[1]
    item = api("GET", f"/bench/history/{panel}")[2]
    assert [(s["model"], s["call"], s["status"]) for s in item["seats"]] == \
        [("h", d["seat"]["call"], "ok"), ("f", item["seats"][1]["call"], "ok")]
    assert item["seats"][0]["retry_of"] == h["call"]
    assert [(s["call"], s["status"]) for s in item["replaced"]] == [(h["call"], "stopped")]
    # a second retry replaces the first
    status, _, d2 = api("POST", f"/bench/panels/{panel}/retry", {"seat": 1})
    assert status == 200 and d2["retry_of"] == d["seat"]["call"]
    item = api("GET", f"/bench/history/{panel}")[2]
    assert item["seats"][0]["call"] == d2["seat"]["call"] and len(item["replaced"]) == 2


def test_a_seat_cannot_be_retried_while_it_is_out(duo, fake):
    svc, gate = duo
    with streaming(svc, fake) as (api, resp, panel):
        status, _, err = api("POST", f"/bench/panels/{panel}/retry", {"seat": 1})
        assert status == 409 and "still running" in err["error"]["message"] and "Stop it first" in json.dumps(err)
        gate.set()
        resp.read()


@pytest.mark.parametrize("payload, code, words", [
    ({"seat": 9}, 404, "has no seat 9: its seats are 1, 2"),
    ({"seat": "1"}, 400, "seat must be the seat's number"),
    ({"seat": True}, 400, "seat must be the seat's number"),
    ({}, 400, "seat must be the seat's number"),
    ({"seat": 1, "model": "x"}, 400, "naming one seat"),
    ([1], 400, "must be a JSON object"),
])
def test_bad_seats_are_refused_with_what_to_send(duo, payload, code, words):
    svc, gate = duo
    gate.set()
    api = Http(svc.url)
    status, headers, _ = api("POST", "/v1/chat/completions", body("bench/duo"))
    panel = headers["x-bench-panel"]
    for action in ("stop", "retry"):
        status, _, err = api("POST", f"/bench/panels/{panel}/{action}", payload)
        assert status == code and words in err["error"]["message"], (action, err)


def test_an_unknown_panel_is_a_404_and_one_no_longer_held_a_409(duo):
    svc, gate = duo
    gate.set()
    api = Http(svc.url)
    for action in ("stop", "retry"):
        status, _, err = api("POST", f"/bench/panels/p_nothing/{action}", {"seat": 1})
        assert status == 404 and "No panel 'p_nothing'" in err["error"]["message"]
    with pytest.raises(Conflict, match="no longer held"):
        again.held(again.Recent(), "p_known", known=True)
    runs = [PanelRun(f"p_{n}", Ask(messages=[Message("user", [Text("x" * 100)])]), None, Plan(), 0.0)
            for n in range(4)]
    recent = again.Recent(most=2)
    for run in runs[:3]:
        recent.add(run)
    assert recent.get("p_0") is None and recent.get("p_1") is runs[1] and recent.get("p_2") is runs[2]
    recent = again.Recent(most_bytes=250)     # held by size too: the newest always
    for run in runs:
        recent.add(run)
    assert [recent.get(r.id) is r for r in runs] == [False, False, True, True] and recent.size == 200


def test_the_ask_pages_stop_and_retry(duo, fake):
    svc, gate = duo
    s = Session(svc.url)
    s.get("/ask")
    lines, stopped = [], {}

    def on_data(data: bytes):
        if b'"panel"' in data and not stopped and len(chats(fake)) == 2:
            panel = json.loads(data.split(b"\n")[0])["panel"]
            stopped.update(panel=panel, answer=s.request("POST", "/ask/stop", f"panel={panel}&seat=1&csrf={s.csrf}"
                                                         .encode(), FORM))
    status, _, text = s.request("POST", "/ask/stream", f"collection=duo&prompt=hi&csrf={s.csrf}".encode(), FORM,
                                on_data=on_data)
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    assert stopped["answer"][0] == 200
    seats = {x["seat"]["model"]: x["seat"] for x in lines if "seat" in x}
    assert seats["h"]["status"] == "stopped" and seats["f"]["answer"] == "f is sure."
    gate.set()
    status, _, text = s.request("POST", "/ask/retry", f"panel={stopped['panel']}&seat=1&csrf={s.csrf}".encode(), FORM)
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    assert status == 200 and lines[0]["retry"]["retry_of"] == seats["h"]["call"]
    new = lines[0]["retry"]["seat"]["call"]
    done = next(x["seat"] for x in lines if "seat" in x)
    assert done["call"] == new and done["status"] == "ok" and done["answer"] == "h took its time."
    assert lines[-1] == {"done": {"answered": 1, "seats": 1}}
    # bad input: a seat that is no number, no CSRF token
    status, _, text = s.request("POST", "/ask/retry", f"panel={stopped['panel']}&seat=x&csrf={s.csrf}".encode(), FORM)
    assert status == 400 and "Name the seat by its number" in json.loads(text)["error"]["message"]
    status, _, text = s.request("POST", "/ask/stop", f"panel={stopped['panel']}&seat=1".encode(), FORM)
    assert status == 403


def test_a_follow_up_goes_on_from_a_retried_seats_answer(duo, fake):
    svc, gate = duo
    gate.set()
    api = Http(svc.url)
    fake.script("m-f", Reply(text="f's first try."))
    _, headers, _ = api("POST", "/v1/chat/completions", body("bench/duo"))
    panel = headers["x-bench-panel"]
    fake.script("m-f", Reply(text="f's second try."))
    status, _, d = api("POST", f"/bench/panels/{panel}/retry", {"seat": 2})
    assert status == 200 and d["seat"]["answer"] == "f's second try."
    status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/duo", "bench": {"continue": panel},
                                                         "messages": [{"role": "user", "content": "and then?"}]})
    assert status == 200 and d["bench"]["previous"] == panel
    followed = [c.body["messages"] for c in chats(fake) if c.body["model"] == "m-f"][-1]
    assert [m["content"] for m in followed if m["role"] == "assistant"] == ["f's second try."]


def test_a_retried_seats_replaced_call_leaves_the_verdict_backlog(duo, fake):
    svc, gate = duo
    gate.set()
    api = Http(svc.url)
    _, headers, _ = api("POST", "/v1/chat/completions", body("bench/duo"))
    panel = headers["x-bench-panel"]
    first = {s["seat"]: s["call"] for s in api("GET", f"/bench/history/{panel}")[2]["seats"]}
    waiting = {p["call"] for p in api("GET", "/bench/pending")[2]["pending"]}
    assert waiting == set(first.values())
    status, _, d = api("POST", f"/bench/panels/{panel}/retry", {"seat": 2})
    assert status == 200 and d["retry_of"] == first[2]
    found = api("GET", "/bench/pending")[2]
    assert {p["call"] for p in found["pending"]} == {first[1], d["seat"]["call"]} and found["total"] == 2
    assert {p["call"] for p in api("GET", f"/bench/pending?calls={first[2]}")[2]["pending"]} == set()
