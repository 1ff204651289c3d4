"""Large bodies at once: the bytes of request bodies the service holds across requests are bounded
(bodies_in_flight_mb); past it a body gets 503 with Retry-After in its API's error shape, and one key's concurrent
7 MB asks no longer run a small machine out of memory."""
from __future__ import annotations

import http.client
import json
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.fakes import Reply
from tests.helpers.data import write
from tests.helpers.gateway import start_gateway, stop_gateway
from tests.helpers.panel import chat_requests, wait_for
from tests.security.attack import bench_data
from tests.test_formats_http import FORMATS, body_for, call, message_of, path_for

MB = 1024 * 1024


def padded(fmt: str, size: int) -> dict:
    """A good ask in `fmt` made about `size` bytes long by a pad field beside it (parsed, never asked)."""
    return {**body_for(fmt), "pad": "x" * size}


@pytest.fixture
def crowded(home, fake, make_service):
    """A service that holds 64 KB of bodies at once, with one 40 KB ask to collection core held in flight (its
    seats' answers wait for the test): (its URL, the event that lets the held ask finish, its result)."""
    bench_data(home, fake)
    write(home, "settings.json", {"bodies_in_flight_mb": 64 / 1024})
    release = threading.Event()
    fake.script("*", Reply(text="held", hold=release))
    url = make_service().url
    done: list = []
    held = threading.Thread(target=lambda: done.append(call(url, "POST", path_for("chat"), padded("chat", 40_000))))
    held.start()
    wait_for(lambda: len(chat_requests(fake)) == 2)       # both seats out: its body is held until it is answered
    yield url, release, done
    release.set()
    held.join(30)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_body_past_the_bodies_held_at_once_is_503_with_retry_after_in_its_shape(crowded, fmt):
    url, _, _ = crowded
    status, headers, data = call(url, "POST", path_for(fmt), padded(fmt, 40_000))
    assert status == 503 and int(headers["Retry-After"]) >= 1, (fmt, status, data[:300])
    message = message_of(FORMATS[fmt][2], json.loads(data), 503)
    assert "bodies_in_flight_mb" in message and "Try again in" in message, message


def test_the_bytes_are_given_back_when_the_request_ends(crowded):
    url, release, done = crowded
    assert call(url, "POST", path_for("chat"), padded("chat", 40_000))[0] == 503
    release.set()
    wait_for(lambda: done)
    assert done[0][0] == 200
    status, _, data = call(url, "POST", path_for("chat"), padded("chat", 40_000))
    assert status == 200, data[:300]


def test_a_request_alone_is_always_taken_up_to_max_body_mb(home, fake, make_service):
    bench_data(home, fake)
    write(home, "settings.json", {"bodies_in_flight_mb": 0.01})    # 10 KB held at once, far below one body
    status, _, data = call(make_service().url, "POST", path_for("chat"), padded("chat", 200_000))
    assert status == 200, data[:300]


def vm_hwm(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the child's peak memory from /proc")
def test_concurrent_7_mb_asks_stay_within_a_small_machines_memory(home, fake):
    """8 concurrent 7 MB asks from one client once took the service from 43 to 468 MB (16: 801 MB; the Fly
    template's machine has 512 MB). With the default bound the peak stays far below, and those refused are told to
    come back."""
    bench_data(home, fake)
    fake.script("*", "ok")               # a model's answer is capped by max_tokens: only the ask is large
    proc, url = start_gateway(home)
    try:
        ask = json.dumps({"model": "bench/core", "messages": [{"role": "user", "content": "x" * (7 * MB)}]}).encode()
        replies: list = []

        def send() -> None:
            parts = urlsplit(url)
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
            try:
                conn.request("POST", "/v1/chat/completions", ask, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                replies.append((resp.status, resp.getheader("Retry-After"), resp.read()))
            finally:
                conn.close()
        threads = [threading.Thread(target=send) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        peak = vm_hwm(proc.pid)
    finally:
        stop_gateway(proc)
    statuses = sorted(r[0] for r in replies)
    assert len(replies) == 8 and set(statuses) == {200, 503}, statuses
    for status, retry_after, data in replies:
        if status == 503:
            assert int(retry_after) >= 1 and json.loads(data)["error"]["code"] == "overloaded", data[:300]
    assert peak < 300 * MB, f"peak RSS {peak / MB:.0f} MB"
