"""Blind panels: a blind collection (or one ask with `bench.blind`) shows its seats as Seat 1..N in a random order
with no model named in any client format's reply, its `bench.seats`, headers, the record's pages or MCP, until it is
judged (a best pick, a verdict or a point's verdict); then GET /bench/panels/{id}/best, the call page and MCP say who
sat where, and the record marks the judgement as given blind."""
from __future__ import annotations

import json
import re

import pytest

from tests.helpers.http import Http
from tests.helpers.panel import fake, setup_bench  # noqa: F401  (the fake fixture)

NAMES = {"alpha-model": "srv-alpha", "bravo-model": "srv-bravo", "charlie-model": "srv-charlie"}
EXTRA = {alias: ("fake", served) for alias, served in NAMES.items()}
COLS = {"blindcol": {"members": list(NAMES), "explore": 0, "merge_model": "merger", "blind": True},
        "open": {"members": list(NAMES), "explore": 0, "merge_model": "merger"}}
FORBIDDEN = re.compile("|".join(re.escape(n) for n in [*NAMES, *NAMES.values()]), re.I)
USER = [{"role": "user", "content": "Who are you?"}]


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS, **EXTRA)
    for alias, srv in NAMES.items():   # each answer names its own model: the reply must not
        fake.script(srv, f"I am {srv}, also known as {alias}. The cache is stale.")
    return make_service()


ASKS = [   # (path, body) of every client format, whole and streamed
    ("/v1/chat/completions", {"model": "bench/blindcol", "messages": USER}),
    ("/v1/chat/completions", {"model": "bench/blindcol", "messages": USER, "stream": True}),
    ("/v1/completions", {"model": "bench/blindcol", "prompt": "Who are you?"}),
    ("/v1/responses", {"model": "bench/blindcol", "input": "Who are you?"}),
    ("/v1/responses", {"model": "bench/blindcol", "input": "Who are you?", "stream": True}),
    ("/v1/messages", {"model": "bench/blindcol", "max_tokens": 100, "messages": USER}),
    ("/v1/messages", {"model": "bench/blindcol", "max_tokens": 100, "messages": USER, "stream": True}),
    ("/v1beta/models/bench/blindcol:generateContent", {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}),
    ("/v1beta/models/bench/blindcol:streamGenerateContent?alt=sse",
     {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}),
    ("/api/chat", {"model": "bench/blindcol", "messages": USER, "stream": False}),
    ("/api/chat", {"model": "bench/blindcol", "messages": USER}),
    ("/api/generate", {"model": "bench/blindcol", "prompt": "Who are you?", "stream": False}),
]


def raw(url: str, path: str, body: dict) -> tuple[int, dict, str]:
    import urllib.request
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read().decode()


@pytest.mark.parametrize("path,body", ASKS, ids=[f"{p}{' stream' if b.get('stream') or 'stream' in p else ''}"
                                                 for p, b in ASKS])
def test_a_blind_collection_names_no_model_in_any_format(served, path, body):
    status, headers, text = raw(served.url, path, body)
    assert status == 200, text
    assert not FORBIDDEN.search(text), text
    assert not FORBIDDEN.search(json.dumps(headers)), headers
    panel = headers["x-bench-panel"]
    assert "Seat 1" in text and "a model" in text         # the seats by number, the names in their texts replaced
    assert "I am srv-alpha" not in text
    revealed = Http(served.url)("GET", f"/bench/panels/{panel}/best")[2]
    assert revealed["best"] is None
    whole = Http(served.url)("GET", f"/bench/panels/{panel}")
    assert whole[0] == 200 and not FORBIDDEN.search(json.dumps(whole[2])), whole


def seat_rows(svc, panel: str) -> list:
    """A panel's seats' calls (id, seat, model), read from the record itself (the API names no model of a blind panel
    until it is judged)."""
    svc.bench.db.sync()
    return svc.bench.db.query("SELECT id, seat, model FROM calls WHERE panel = ? AND seat > 0", (panel,))


def seats_of(svc, panel: str) -> dict:
    """Who sat where: seat -> model."""
    return {r["seat"]: r["model"] for r in seat_rows(svc, panel)}


def test_the_seats_come_in_a_random_order_and_a_pick_reveals_them(served):
    api = Http(served.url)
    orders = set()
    for _ in range(12):
        status, _, data = api("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": USER})
        assert status == 200
        bench = data["bench"]
        assert bench["blind"] is True and [s["model"] for s in bench["seats"]] == ["Seat 1", "Seat 2", "Seat 3"]
        orders.add(tuple(m for _, m in sorted(seats_of(served, bench["panel"]).items())))
    assert len(orders) > 1                                  # not the collection's order every time
    panel = bench["panel"]
    page = api("GET", f"/calls/{panel}")[2]
    assert not FORBIDDEN.search(page) and "Blind: the seats are Seat 1..N" in page
    listed = api("GET", "/bench/history")[2]["items"][0]
    assert listed["id"] == panel and {s["model"] for s in listed["seats"]} == {"Seat 1", "Seat 2", "Seat 3"}
    waiting = api("GET", "/bench/pending")[2]["pending"]
    assert waiting and not FORBIDDEN.search(json.dumps(waiting))
    status, _, got = api("POST", f"/bench/panels/{panel}/best", {"seat": 2})
    assert status == 200 and got["blind"] is True
    truth = seats_of(served, panel)
    assert {s["seat"]: s["model"] for s in got["seats"]} == truth
    assert got["comparisons"][0]["winner"] == truth[2]
    page = api("GET", f"/calls/{panel}")[2]
    assert all(name in page for name in NAMES) and "Blind: judged" in page
    shown = api("GET", f"/bench/panels/{panel}")[2]             # the panel's GET says who sat where now
    assert {s["seat"]: s["model"] for s in shown["seats"]} == truth and shown["revealed"]
    assert api("GET", f"/bench/history/{panel}")[2]["seats"][0]["model"] in NAMES
    assert api("GET", "/bench/rankings?blind=1")[2]["models"][0]["model"] == truth[2]


def test_a_verdict_reveals_too_and_is_marked_blind_and_an_open_ask_can_be_blind(served):
    api = Http(served.url)
    data = api("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": USER})[2]
    call = data["bench"]["seats"][0]["call"]
    assert api("POST", "/bench/verdict", {"call": call, "useful": True})[0] == 200
    again = api("POST", "/bench/verdict", {"call": data["bench"]["seats"][1]["call"], "useful": False})
    assert again[0] == 200
    served.bench.db.sync()
    marks = [r["blind"] for r in served.bench.db.query("SELECT blind FROM verdicts ORDER BY id")]
    assert marks == [1, None]                               # the first was given blind; it showed the names
    assert all(n in api("GET", f"/calls/{data['bench']['panel']}")[2] for n in NAMES)
    status, _, one = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": USER,
                                                          "bench": {"blind": True}})
    assert status == 200 and one["bench"]["blind"] is True
    assert not FORBIDDEN.search(one["choices"][0]["message"]["content"])
    status, _, plain = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": USER})
    assert "blind" not in plain["bench"] and FORBIDDEN.search(plain["choices"][0]["message"]["content"])
    assert api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": USER,
                                                "bench": {"blind": "yes"}})[0] == 400


def test_blind_is_saved_on_a_collection_and_by_the_cli(served, capsys, monkeypatch):
    import io
    from benchwarmers.cli.main import main
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    api = Http(served.url)
    assert api("PUT", "/bench/collections/open", {"blind": True})[2]["blind"] is True
    assert api("PUT", "/bench/collections/open", {"blind": "on"})[0] == 400
    assert main(["--url", served.url, "collection", "save", "open", "--no-blind"]) == 0
    assert "blind" not in api("GET", "/bench/collections/open")[2]
    assert main(["--url", served.url, "collection", "save", "open", "--blind"]) == 0
    assert api("GET", "/bench/collections/open")[2]["blind"] is True
    capsys.readouterr()
    assert main(["--url", served.url, "ask", "open", "Who are you?"]) == 0
    out = capsys.readouterr()
    assert not FORBIDDEN.search(out.out + out.err) and "(blind: no model named" in out.err


def test_mcp_names_no_model_until_the_best_pick(served):
    from benchwarmers.mcp.reach import HttpReach
    from benchwarmers.mcp.tools import Tools
    tools = Tools(HttpReach(served.url, {}))
    asked = tools.call("ask", {"collection": "blindcol", "prompt": "Who are you?"}, "2025-06-18")
    assert not asked["isError"] and not FORBIDDEN.search(json.dumps(asked)), asked
    panel = asked["structuredContent"]["panel"]
    waiting = tools.call("pending_verdicts", {}, "2025-06-18")
    assert not FORBIDDEN.search(json.dumps(waiting))
    picked = tools.call("verdict", {"panel": panel, "best": 1}, "2025-06-18")
    assert not picked["isError"] and "Who sat where: seat 1 " in picked["content"][0]["text"]
    assert any(name in picked["content"][0]["text"] for name in NAMES)
    one = tools.call("ask", {"collection": "open", "prompt": "Who are you?", "blind": True}, "2025-06-18")
    assert not one["isError"] and not FORBIDDEN.search(json.dumps(one))


def test_the_points_block_of_a_blind_panel_names_no_model(home, fake, make_service):
    from tests.fakes.referee import FakeReferee
    cols = {"blindcol": dict(COLS["blindcol"], referee="merger", points="contested")}
    setup_bench(home, fake, cols, **EXTRA)
    fake.script("srv-alpha", "I am srv-alpha. The cache is stale.")
    fake.script("srv-bravo", "I am srv-bravo. The cache is fresh.")
    fake.script("srv-charlie", "I am charlie-model. The lock is held.")
    fake.script("m-merge", FakeReferee().reply())
    svc = make_service()
    status, _, data = Http(svc.url)("POST", "/v1/chat/completions", {"model": "bench/blindcol", "messages": USER,
                                                                     "bench": {"points": "contested"}})
    assert status == 200, data
    text = data["choices"][0]["message"]["content"]
    assert "## Where they disagree" in text and "The cache is stale." in text
    assert not FORBIDDEN.search(text) and not FORBIDDEN.search(json.dumps(data["bench"])), text


def test_a_follow_up_of_a_blind_panel_stays_blind_with_each_model_in_its_seat(served):
    """An open collection asked blind once: its follow-ups (by the history sent back and by `bench.continue`) are
    blind too, each model keeps its seat number, and a wrong seat number's refusal names no model."""
    api = Http(served.url)

    def sat(panel: str) -> dict:   # who sat where, from the record itself
        served.bench.db.sync()
        return {r["seat"]: r["model"] for r in served.bench.db.query(
            "SELECT seat, model FROM calls WHERE panel = ? AND seat IS NOT NULL", (panel,))}
    first = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": USER,
                                                 "bench": {"blind": True}})[2]
    panel = first["bench"]["panel"]
    status, _, wrong = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": USER,
                                                            "bench": {"continue": panel, "seat": 9}})
    assert status == 400 and not FORBIDDEN.search(json.dumps(wrong))
    more = [{"role": "user", "content": "And then?"}]
    history = USER + [{"role": "assistant", "content": first["choices"][0]["message"]["content"]}] + more
    by_history = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": history})[2]
    by_id = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": more,
                                                 "bench": {"continue": panel}})[2]
    for turn in (by_history, by_id):
        assert turn["bench"]["blind"] is True and turn["bench"]["previous"] == panel
        assert not FORBIDDEN.search(turn["choices"][0]["message"]["content"])
        assert sat(turn["bench"]["panel"]) == sat(panel)      # Seat N is the same model all through
    one = api("POST", "/v1/chat/completions", {"model": "bench/open", "messages": more,
                                               "bench": {"continue": panel, "seat": 2}})[2]
    assert one["bench"]["blind"] is True and not FORBIDDEN.search(one["choices"][0]["message"]["content"])
    assert sat(one["bench"]["panel"]) == {2: sat(panel)[2]}
