"""Seats on a local server are asked streamed, so a seat given up stops the model's work; seats on a remote provider
keep the whole (one-body) path. The fakes log whether each request streamed; tests/fakes/slow.py, like llama.cpp's
server, goes on writing a whole answer for a client that left and stops a streamed one when its client closes. (A
client gone, and the service stopping, hang up a local seat too: tests/test_panel_slow.py.)"""
from __future__ import annotations

import socket
import urllib.request
from types import SimpleNamespace

import pytest

from benchwarmers import baseurls
from tests.fakes import FAKES, FakeOpenAI, FakeProxy, Reply, SlowModel
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import body


def streamed(request) -> bool:
    """Whether a fake's logged request asked for a stream (Gemini says so in its path, the others in the body)."""
    return request.path.endswith(":streamGenerateContent") or (request.body or {}).get("stream") is True


def seats(data: dict) -> dict:
    return {s["model"]: s for s in data["bench"]["seats"]}


def record(api, data: dict, alias: str) -> dict:
    return api("GET", f"/bench/calls/{seats(data)[alias]['call']}")[2]


@pytest.fixture
def resolves(monkeypatch):
    """Host names the test makes resolve to 127.0.0.1 (this machine has no DNS for them), as a LAN name would."""
    names, real = set(), socket.getaddrinfo

    def resolve(host, *args, **kw):
        return real("127.0.0.1" if host in names else host, *args, **kw)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(baseurls, "_known", {})     # nothing remembered from another test's names
    return names


@pytest.fixture
def proxied(monkeypatch):
    """A forward proxy from the environment, as on a company network: a host behind it is the proxy's to resolve.
    The test's own client goes direct (urllib builds its one opener from the environment once, and keeps it)."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setattr(urllib.request, "_opener", urllib.request.build_opener(urllib.request.ProxyHandler({})))
    with FakeProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        yield proxy


def remote(fake, host: str = "remote.test") -> SimpleNamespace:
    """The fake as an endpoint at a host name (configure() reads `.url`)."""
    return SimpleNamespace(url=fake.url.replace("127.0.0.1", host))


# ---- what is local -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("base, local", [
    ("http://127.0.0.1:11434", True), ("http://127.8.9.10:8080/v1", True), ("http://[::1]:1234/v1", True),
    ("http://localhost:11434", True), ("http://ollama.localhost:11434", True), ("http://gpu.local:8000/v1", True),
    ("http://10.1.2.3:8000/v1", True), ("http://172.16.0.9:8000/v1", True), ("http://192.168.1.20:1234/v1", True),
    ("http://[fd12:3456::7]:8000/v1", True), ("http://100.101.102.103:11434", True),    # an overlay (Tailscale)
    ("http://172.32.0.1:8000/v1", False), ("https://8.8.8.8/v1", False), ("http://[2001:4860::8888]/v1", False),
    ("https://api.openai.com/v1", False), ("http://2130706433:11434", True),           # 127.0.0.1 spelled as a number
])
def test_local_servers_are_told_by_their_address(base, local, resolves, monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    if base.startswith("https://api."):
        monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [(2, 1, 6, "", ("104.18.6.192", 443))])
    assert baseurls.local_server(base) is local


def test_a_name_is_local_when_all_it_resolves_to_is(resolves, monkeypatch):
    resolves.add("gpu-box.lan")
    assert baseurls.local_server("http://gpu-box.lan:8000/v1", look_up=False) is None   # not known without DNS
    assert baseurls.local_server("http://gpu-box.lan:8000/v1") is True
    assert baseurls.local_server("http://gpu-box.lan:8000/v1", look_up=False) is True    # remembered
    assert baseurls.local_server("http://no-such-host.invalid/v1") is False              # unresolved: remote
    answers = [(2, 1, 6, "", ("192.168.1.5", 80)), (2, 1, 6, "", ("203.0.113.9", 80))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: answers)
    assert baseurls.local_server("http://split.example/v1") is False                    # one public address: remote
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp:3128")
    assert baseurls.local_server("http://gpu-box.lan:8001/v1") is False   # behind a proxy: its name is the proxy's
    assert baseurls.local_server("http://127.0.0.1:11434") is True        # loopback never goes through one


# ---- which seats stream ---------------------------------------------------------------------------------------

def test_a_local_seat_is_asked_streamed_and_a_remote_one_whole(home, make_service, proxied):
    with FakeOpenAI() as local, FakeOpenAI() as far:
        configure(home, {"local": (local, "openai"), "far": (remote(far), "openai")},
                  {"l": ("local", "m-l"), "r": ("far", "m-r")}, {"core": {"members": ["l", "r"], "explore": 0}})
        api = Http(make_service().url)
        for _ in range(2):                       # the second: the remote seat may wait on the waiter's thread
            status, _, data = api("POST", "/v1/chat/completions", body(content="what is two plus two?"))
            assert status == 200 and {s["status"] for s in data["bench"]["seats"]} == {"ok"}
        assert [streamed(r) for r in local.requests] == [True, True]
        assert [streamed(r) for r in far.requests] == [False, False]
        assert proxied.seen and all(s["target"].startswith("http://remote.test:") for s in proxied.seen)
        near, away = record(api, data, "l"), record(api, data, "r")
        said = ("m-l says: what is two plus two?", "m-r says: what is two plus two?")
        assert (near["answer"], away["answer"]) == said
        assert 0 <= near["ttft"] <= near["seconds"] and away["ttft"] is None   # a stream is timed, one body is not


def test_a_name_resolved_to_a_private_address_is_local_from_its_first_seat(home, make_service, resolves):
    resolves.add("gpu-box.lan")
    with FakeOpenAI() as fake:
        configure(home, {"box": (remote(fake, "gpu-box.lan"), "openai")}, {"g": ("box", "m-g")},
                  {"core": {"members": ["g"], "explore": 0}})
        api = Http(make_service().url)
        for _ in range(2):                       # the first decided on its worker (DNS), the next from memory
            assert api("POST", "/v1/chat/completions", body())[0] == 200
        assert [streamed(r) for r in fake.requests] == [True, True]


@pytest.mark.parametrize("how, asked", [("all", True), ("none", False)])
def test_stream_seats_all_or_none(home, make_service, proxied, how, asked):
    with FakeOpenAI() as local, FakeOpenAI() as far:
        configure(home, {"local": (local, "openai"), "far": (remote(far), "openai")},
                  {"l": ("local", "m-l"), "r": ("far", "m-r")}, {"core": {"members": ["l", "r"], "explore": 0}})
        write(home, "settings.json", {"stream_seats": how})
        api = Http(make_service().url)
        assert api("POST", "/v1/chat/completions", body())[0] == 200
        assert [streamed(r) for r in local.requests + far.requests] == [asked, asked]
        status, _, data = api("POST", "/bench/settings", {"stream_seats": "sometimes"})
        assert status == 400 and "cannot be 'sometimes'" in data["error"]["message"], data


@pytest.mark.parametrize("api_name", sorted(FAKES))
def test_a_streamed_seat_answers_records_and_counts_as_a_whole_one(home, make_service, api_name):
    """The same answers asked whole (stream_seats none) and streamed (a local server): the reply's seats and their
    records hold the same answer, usage and finish reason."""
    with FAKES[api_name]() as fake:
        fake.script("m-a", Reply(text="four, as two and two make", usage={"input": 11, "output": 6}))
        fake.script("m-b", Reply(text="cut short here", finish="length", usage={"input": 9, "output": 3}))
        configure(home, {"ep": (fake, api_name)}, {"a": ("ep", "m-a"), "b": ("ep", "m-b")},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        api = Http(make_service().url)
        told = {}
        for how in ("none", "local"):
            assert api("POST", "/bench/settings", {"stream_seats": how})[0] == 200
            status, _, data = api("POST", "/v1/chat/completions", body(content="what is two plus two?"))
            assert status == 200, data
            told[how] = [(s["model"], s["status"], s["answer"], s["usage"], s["finish_reason"])
                         for s in sorted(data["bench"]["seats"], key=lambda s: s["model"])]
            told[how + " record"] = [{k: record(api, data, m)[k] for k in ("answer", "input_tokens", "output_tokens",
                                                                           "finish_reason", "status")}
                                     for m in ("a", "b")]
        assert [streamed(r) for r in fake.requests] == [False, False, True, True]
        assert told["none"] == told["local"] and told["none record"] == told["local record"]
        assert told["local"][1][4] == "length" and told["local record"][0]["output_tokens"] == 6


# ---- a seat given up stops the local model ----------------------------------------------------------------------

@pytest.fixture
def slow():
    s = SlowModel(first_byte=0.02, tokens_per_second=20, length=4000).start()    # 200 s of writing unless stopped
    yield s
    s.stop()


def one_slow_member(home, slow, **settings) -> None:
    configure(home, {"local": (slow, "openai")}, {"s": ("local", "llama")}, {"core": {"members": ["s"], "explore": 0}})
    write(home, "settings.json", settings)


def next_ask_is_served(api) -> None:
    """The one slot is free: a short ask is answered (it would queue behind 200 s of writing otherwise)."""
    status, _, data = api("POST", "/v1/chat/completions", body(content="short", max_tokens=3))
    assert status == 200 and seats(data)["s"]["status"] == "ok" and seats(data)["s"]["usage"]["output_tokens"] == 3


def test_a_seat_given_up_at_seat_timeout_stops_the_local_models_writing(home, make_service, slow):
    one_slow_member(home, slow, seat_timeout=1.0)
    api = Http(make_service().url)
    status, _, data = api("POST", "/v1/chat/completions", body(content="write a novel"))
    assert status == 502 and "timeout" in data["error"]["message"], data     # its one seat gave up
    written, how = slow.wait_served(1)[0]
    assert how == "closed" and written < 4000 and slow.streamed == [True]
    write(home, "settings.json", {"seat_timeout": 30.0})
    next_ask_is_served(api)


def test_asked_whole_the_local_model_writes_on_for_nobody(home, make_service, slow):
    """Why local seats stream: asked for a whole answer, a seat given up leaves the server writing, as llama.cpp's
    does, and its one slot busy."""
    one_slow_member(home, slow, seat_timeout=1.0, stream_seats="none")
    api = Http(make_service().url)
    assert api("POST", "/v1/chat/completions", body(content="write a novel"))[0] == 502
    assert slow.streamed == [False] and slow.generating == 1 and slow.served == []   # still writing
