"""Shared setup for the panel tests: a fake OpenAI upstream, a bench of models and collections, small helpers."""
from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.request
from typing import Callable

import pytest

from tests.helpers.data import configure, write
from tests.helpers.sse import sse_events
from tests.helpers.http import Http
from tests.fakes import FakeOpenAI

MEMBERS = ["a", "b", "c"]
OTHERS = ["x", "y", "z"]
HEADING = re.compile(r"^## Seat (\d+) · (\S+) · (\w+)(?: · (\w+))?$", re.M)


def models(**extra) -> dict:
    """Members a, b, c; explore candidates x, y, z; `merger` (ad hoc, never explored) writes merges."""
    out = {alias: ("fake", f"m-{alias}") for alias in MEMBERS + OTHERS}
    out["merger"] = {"endpoint": "fake", "served": "m-merge", "ad_hoc": True, "facts": {}}
    out.update(extra)
    return out


def setup_bench(home, fake, collections: dict | None = None, settings: dict | None = None, **extra_models) -> None:
    cols = {"core": {"members": list(MEMBERS), "explore": 1, "merge_model": "merger",
                     "description": "reviewers"}} if collections is None else collections
    configure(home, {"fake": (fake, "openai")}, models(**extra_models), cols)
    if settings is not None:
        write(home, "settings.json", settings)


@pytest.fixture
def fake():
    f = FakeOpenAI().start()
    yield f
    f.stop()


@pytest.fixture
def bench(home, fake, make_service):
    """The standard bench served: core = a, b, c + one explore seat."""
    setup_bench(home, fake)
    return make_service()


@pytest.fixture
def api(bench) -> Http:
    return Http(bench.url)


def body(model: str = "bench/core", content: str = "hi there", **kw) -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}], **kw}


def headings(text: str) -> list[tuple]:
    """(seat number, model, kind, status or None) for each seat heading, in the order they appear."""
    return [(int(n), m, k, s) for n, m, k, s in HEADING.findall(text)]


def stream_raw(url: str, payload: dict, headers: dict | None = None, timeout: float = 30,
               on_data: Callable[[bytes], object] | None = None) -> bytes:
    """The streamed body; on_data(what has arrived so far) is called as it comes in."""
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(payload).encode(),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        if on_data is None:
            return resp.read()
        data = b""
        while chunk := resp.read1(65536):
            data += chunk
            on_data(data)
        return data


def stream_chunks(url: str, payload: dict, headers: dict | None = None,
                  on_chunks: Callable[[list], object] | None = None) -> list:
    """The stream's events; on_chunks(the whole events so far) is called as they come in."""
    def on_data(raw: bytes) -> None:
        on_chunks(sse_events(raw[:raw.rfind(b"\n\n") + 2]))
    return sse_events(stream_raw(url, {**payload, "stream": True}, headers, on_data=on_data if on_chunks else None))


def stream_text(chunks: list) -> str:
    return "".join((c["choices"][0]["delta"].get("content") or "") for c in chunks
                   if isinstance(c, dict) and c.get("choices"))


def stream_bench(chunks: list) -> dict:
    found = [c["bench"] for c in chunks if isinstance(c, dict) and "bench" in c]
    assert len(found) == 1, chunks
    return found[0]


def chat_requests(fake) -> list:
    """What reached the fake's chat endpoint (FakeOpenAI.calls is its own tool-call helper, so filter here)."""
    return [r for r in list(fake.requests) if r.path.endswith("/chat/completions")]


def requests_for(fake, served: str) -> list:
    return [r for r in chat_requests(fake) if isinstance(r.body, dict) and r.body.get("model") == served]


def at_once(count: int, ask) -> list:
    """ask(i) for i in range(count), each on its own thread started together; what each returned, in order."""
    out: list = [None] * count

    def one(i: int) -> None:
        out[i] = ask(i)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def wait_for(predicate, timeout: float = 30.0, every: float = 0.05):
    """Poll until `predicate()` is truthy (returned) or fail after `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(every)


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
