"""A slow local model beside fast members (tests/fakes/slow.py: one request at a time, a long first byte, slow tokens,
generating until its client hangs up): the panel answers at its members plus the explore grace, the late seat's answer
reaches the record, a client going away (or the service stopping) hangs up the upstream call, seating passes a far
slower model over, output caps fit the measured speed, and a prompt too long for every window is a 4xx."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from benchwarmers.roster import speed
from tests.fakes import FakeOpenAI, SlowModel
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import body, wait_for


@pytest.fixture
def fast():
    f = FakeOpenAI().start()
    yield f
    f.stop()


@pytest.fixture
def gate():
    g = threading.Event()
    yield g
    g.set()


@pytest.fixture
def slow(gate):
    s = SlowModel(first_byte=0.05, tokens_per_second=200, length=40, hold=gate).start()
    yield s
    s.stop()


def bench_of(home, fast, slow, collection: dict, settings: dict | None = None, **facts) -> None:
    """a, b on the fast fake; s (the local model) on the slow one; `collection` is `core`."""
    configure(home, {"fast": (fast, "openai"), "local": (slow, "openai")},
              {"a": ("fast", "m-a", facts.get("a", {})), "b": ("fast", "m-b", facts.get("b", {})),
               "s": ("local", "llama", facts.get("s", {}))}, {"core": collection})
    write(home, "settings.json", {"explore_grace_seconds": 0.2, **(settings or {})})


def seats(data: dict) -> dict:
    return {s["model"]: s for s in data["bench"]["seats"]}


def figure(svc, alias: str, ttft: float, tps: float) -> None:
    """A measured speed, as the perf job records it."""
    for prompt in ("short", "long"):
        speed.record(svc.bench.db, speed.Figure(alias, prompt, "ok", ttft=ttft, seconds=ttft + 10,
                                                output_tokens=int(tps * 10) + 1, tokens_per_second=tps,
                                                created=time.time()))


# ---- a panel answers on time ----------------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True])
def test_the_panel_answers_at_its_members_plus_the_grace_and_the_late_answer_is_recorded(home, fast, slow, gate,
                                                                                          make_service, stream):
    bench_of(home, fast, slow, {"members": ["a", "b"], "explore": 1})
    svc = make_service()
    api = Http(svc.url)
    if stream:
        from tests.helpers.panel import stream_bench, stream_chunks
        said = stream_bench(stream_chunks(svc.url, body(content="hello")))
        told = {s["model"]: s for s in said["seats"]}
    else:
        status, _, data = api("POST", "/v1/chat/completions", body(content="hello"))
        assert status == 200, data
        told, said = seats(data), data["bench"]
        text = data["choices"][0]["message"]["content"]
        assert "## Seat 3 · s · explore · running" in text
    assert told["a"]["status"] == told["b"]["status"] == "ok"
    assert told["s"]["status"] == "running" and "its answer goes to the record" in told["s"]["error"]
    rec = api("GET", f"/bench/calls/{told['s']['call']}")[2]
    assert rec["status"] == "running" and rec["answer"] is None
    gate.set()                                           # the local model starts writing now
    rec = wait_for(lambda: (r := api("GET", f"/bench/calls/{told['s']['call']}")[2])["status"] != "running" and r)
    assert rec["status"] == "ok" and rec["answer"].startswith("tok tok") and rec["output_tokens"] == 40
    assert rec["finish_reason"] == "stop" and rec["extra"]["late"] is True and rec["error"] is None
    # an answer in the record like any other: it can be judged, and waits for a verdict until it is
    pending = api("GET", "/bench/pending")[2]
    assert told["s"]["call"] in [p["call"] for p in pending["pending"]]
    assert api("POST", "/bench/verdict", {"call": told["s"]["call"], "useful": True})[0] == 200
    page = api("GET", f"/calls/{said['panel']}")
    assert page[0] == 200 and "answered after the panel replied" in page[2]


def test_a_collections_own_grace_wins_and_members_are_always_waited_for(home, fast, slow, gate, make_service):
    bench_of(home, fast, slow, {"members": ["a", "s"], "explore": 0, "explore_grace": 0})
    svc = make_service()
    api = Http(svc.url)
    result = {}
    thread = threading.Thread(target=lambda: result.update(r=api("POST", "/v1/chat/completions", body())))
    thread.start()
    wait_for(lambda: slow.asked_max)                     # s is a member: the panel waits for it, grace or not
    thread.join(0.5)
    assert thread.is_alive()
    gate.set()
    thread.join(30)
    assert seats(result["r"][2])["s"]["status"] == "ok"
    assert api("GET", "/bench/collections/core")[2]["explore_grace"] == 0


def test_explore_grace_is_checked(home, fast, slow, make_service):
    bench_of(home, fast, slow, {"members": ["a"], "explore": 1})
    api = Http(make_service().url)
    for bad in (-1, "soon", 10 ** 9, True):
        status, _, data = api("PUT", "/bench/collections/core", {"explore_grace": bad})
        assert status == 400 and "explore_grace" in data["error"]["message"], data
    assert api("PUT", "/bench/collections/core", {"explore_grace": 2.5})[0] == 200
    assert api("GET", "/bench/collections/core")[2]["explore_grace"] == 2.5


# ---- hanging up -----------------------------------------------------------------------------------

def raw_ask(url: str, payload: dict) -> socket.socket:
    """Send the ask on a bare socket and leave it there (a client that will go away)."""
    host, port = url.split("//")[1].split(":")
    sock = socket.create_connection((host, int(port)))
    data = json.dumps(payload).encode()
    sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: " + f"{host}:{port}".encode() +
                 b"\r\nContent-Type: application/json\r\nContent-Length: " + str(len(data)).encode() +
                 b"\r\n\r\n" + data)
    return sock


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_going_away_closes_the_upstream_call(home, fast, make_service, stream):
    slow = SlowModel(first_byte=0.05, tokens_per_second=5, length=4000).start()
    try:
        bench_of(home, fast, slow, {"members": ["s"], "explore": 0})
        svc = make_service()
        sock = raw_ask(svc.url, body(content="write a novel", stream=stream))
        wait_for(lambda: slow.generating == 1)
        sock.close()                                     # the SDK's timeout: the client gives up
        served = slow.wait_served(1)
        assert served[0][1] == "closed" and served[0][0] < 4000   # it stopped writing for nobody
        assert slow.streamed == [True]                   # a local seat is asked streamed: closing it stops the model
        api = Http(svc.url)
        call = wait_for(lambda: next((c for c in api("GET", "/bench/calls?model=s")[2]["calls"]
                                      if c["status"] != "running"), None))
        assert call["status"] == "cancelled" and call["error"] == "the client went away before this seat answered"
        # the one slot is free: the next ask is answered
        status, _, data = api("POST", "/v1/chat/completions", body(content="short", max_tokens=3))
        assert status == 200 and seats(data)["s"]["status"] == "ok"
    finally:
        slow.stop()


def test_shutdown_hangs_up_the_seats_still_out(home, fast, make_service):
    slow = SlowModel(first_byte=0.05, tokens_per_second=5, length=4000).start()
    try:
        bench_of(home, fast, slow, {"members": ["a", "s"], "explore": 0})
        svc = make_service()
        replies = []
        asking = threading.Thread(target=lambda: replies.append(Http(svc.url)("POST", "/v1/chat/completions",
                                                                              body(), timeout=60)))
        asking.start()
        wait_for(lambda: slow.generating == 1)
        stopping = threading.Thread(target=svc.stop)
        stopping.start()
        stopping.join(20)                                # bounded: a hang fails here, not at the suite's timeout
        assert not stopping.is_alive()
        assert slow.wait_served(1)[0][1] == "closed" and slow.streamed == [True]
        asking.join(10)
        status, _, data = replies[0]
        assert status == 200 and seats(data)["s"]["status"] == "cancelled"
        assert seats(data)["s"]["error"] == "the service is stopping" and seats(data)["a"]["status"] == "ok"
    finally:
        slow.stop()


# ---- speed ----------------------------------------------------------------------------------------

def test_a_far_slower_model_is_passed_over_for_explore_seats_unless_asked_for(home, fast, slow, gate, make_service):
    gate.set()
    bench_of(home, fast, slow, {"members": ["a", "b"], "explore": 1})
    svc = make_service()
    figure(svc, "a", 0.3, 80)                             # about 7 s an answer
    figure(svc, "s", 5.0, 3)                              # about 172 s
    api = Http(svc.url)
    status, _, data = api("POST", "/v1/chat/completions", body())
    assert status == 200 and list(seats(data)) == ["a", "b"]
    passed = {p["model"]: p["reason"] for p in data["bench"]["passed_over"]}
    assert passed["s"].startswith("too slow for this collection: about 172 s for an answer where its members take "
                                  "about 7 s") and "bench.with" in passed["s"]
    status, _, data = api("POST", "/v1/chat/completions", body(bench={"with": ["s"]}, max_tokens=5))
    assert status == 200 and seats(data)["s"]["kind"] == "with" and seats(data)["s"]["status"] == "ok"


def test_the_output_cap_fits_the_measured_speed(home, fast, slow, gate, make_service):
    gate.set()
    bench_of(home, fast, slow, {"members": ["a", "s"], "explore": 0}, {"panel_seconds": 30})
    svc = make_service()
    figure(svc, "s", 2.0, 10)                             # 10 tokens a second, 2 s to start: 280 in 30 s
    api = Http(svc.url)
    status, _, data = api("POST", "/v1/chat/completions", body())
    assert status == 200
    assert slow.asked_max[-1] == 280
    assert fast.last.body["max_tokens"] == 1024          # never measured: a modest cap, not default_max_tokens
    rec = api("GET", f"/bench/calls/{seats(data)['s']['call']}")[2]
    assert rec["extra"]["max_tokens"] == 280
    status, _, data = api("POST", "/v1/chat/completions", body(max_tokens=7))   # the client's own cap wins
    assert slow.asked_max[-1] == 7
    assert "## Seat 2 · s · member · cut at 7 tokens" in data["choices"][0]["message"]["content"]
    assert seats(data)["s"]["finish_reason"] == "length" and seats(data)["a"]["finish_reason"] == "stop"
    figure(svc, "a", 0.3, 200)                            # measured, and fast: default_max_tokens
    assert api("POST", "/v1/chat/completions", body())[0] == 200 and fast.last.body["max_tokens"] == 4096


def test_a_prompt_longer_than_every_window_is_a_4xx_naming_the_largest(home, fast, slow, make_service):
    bench_of(home, fast, slow, {"members": ["a", "b"], "explore": 1}, a={"context_window": 1000},
             b={"context_window": 2000}, s={"context_window": 1500})
    api = Http(make_service().url)
    status, _, data = api("POST", "/v1/chat/completions", body(content="word " * 12000))
    assert status == 400, data
    message = data["error"]["message"]
    assert "longer than every seat's context window" in message and "the largest is 2,000 tokens" in message
    status, _, data = api("POST", "/v1/messages", {"model": "bench/core", "max_tokens": 10,
                                                   "messages": [{"role": "user", "content": "word " * 12000}]})
    assert status == 400 and data["type"] == "error" and "2,000 tokens" in data["error"]["message"]
