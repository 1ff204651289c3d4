"""Exhaustion: bodies past the limit by every framing, a request refused before its body is read, one hanging
upstream against the shared seat pool, and prompts too large to keep whole."""
from __future__ import annotations

import json
import threading

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.helpers.data import configure, write
from tests.helpers.panel import chat_requests, wait_for
from tests.security.attack import (TOKEN, bench_data, concrete, label, raw, routes, status_of,
                                   wire, writes)

WRITING = [r for r in routes() if writes(r)]     # JSON bodies and the dashboard's forms alike


def small_limit(home) -> None:
    write(home, "settings.json", {"max_body_mb": 0.001})   # about 1 KB


def post_head(path: str, port_url: str, extra: str = "") -> bytes:
    host = port_url.split("//", 1)[1]
    return (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n{extra}").encode()


@pytest.mark.parametrize("size", [b"-1", b"-0x10", b"+10", b"0x10", b" 1 0", b"fffffffffffffffff", b"1_0"])
def test_a_chunk_size_that_is_not_plain_hex_is_400_at_once(service, size):
    """A size of -1 once made the handler read until the client hung up, past every limit and check."""
    request = post_head("/v1/chat/completions", service.url, "Transfer-Encoding: chunked\r\n\r\n")
    reply = wire(service.url, request + size + b"\r\n" + b"x" * 2000, wait=5)
    assert status_of(reply) == 400, reply[:300]


def test_chunked_bytes_all_count_against_the_limit(home, service):
    small_limit(home)
    chunks = b"".join(b"1;" + b"e" * 900 + b"\r\nx\r\n" for _ in range(4))   # tiny chunks, long extensions
    request = post_head("/v1/chat/completions", service.url, "Transfer-Encoding: chunked\r\n\r\n")
    reply = wire(service.url, request + chunks + b"0\r\n\r\n")
    assert status_of(reply) in (400, 413), reply[:300]


@pytest.mark.parametrize("length", ["+5", "1_0", " 5x", "-3", "99999999999999999999"])
def test_a_content_length_that_is_not_digits_is_400(service, length):
    request = post_head("/v1/chat/completions", service.url, f"Content-Length: {length}\r\n\r\n")
    assert status_of(wire(service.url, request + b"{}")) in (400, 413)


@pytest.mark.parametrize("route", WRITING, ids=label)
def test_every_route_refuses_a_body_past_the_limit(home, fake, make_service, route):
    bench_data(home, fake)
    small_limit(home)
    svc = make_service()
    if route.shape == "html":
        big, kind = b"csrf=x&pad=" + b"x" * 5000, "application/x-www-form-urlencoded"
    else:
        big, kind = json.dumps({"model": "bench/core", "pad": "x" * 5000}).encode(), "application/json"
    status, headers, body = raw(svc.url, route.method, concrete(route), big, {"Content-Type": kind})
    assert status == 413, (label(route), status, body[:200])
    assert headers.get("connection") == "close"


@pytest.mark.parametrize("route", [r for r in WRITING if r.auth != "public"], ids=label)
def test_a_request_without_credentials_is_refused_before_its_body_is_read(home, fake, make_service, route):
    """With the admin token set, a 20 MB promise from a stranger is answered 401 at once; its body never sent."""
    bench_data(home, fake)
    svc = make_service(admin_token=TOKEN)
    request = post_head(concrete(route), svc.url, "Content-Length: 20000000\r\n\r\n").replace(
        b"POST", route.method.encode(), 1)
    reply = wire(svc.url, request, wait=5)
    assert status_of(reply) == 401, (label(route), reply[:300])


def test_a_refused_host_is_answered_before_the_body_too(service):
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n"
    assert status_of(wire(service.url, request, wait=5)) == 403


def test_a_hanging_upstream_cannot_starve_the_seat_pool(home, make_service):
    """Panels on an upstream that never answers once held every seat worker, so a panel on a healthy upstream
    failed too. Each endpoint now holds at most its share of the workers; the rest of its seats wait for it."""
    with FakeOpenAI() as stuck, FakeOpenAI() as healthy:
        stuck.script("*", Reply(delay=30))
        configure(home, {"stuck": (stuck, "openai"), "good": (healthy, "openai")},
                  {**{f"s{i}": ("stuck", f"m{i}") for i in range(4)}, "g": ("good", "m-g")},
                  {"hang": {"members": [f"s{i}" for i in range(4)], "explore": 0},
                   "fine": {"members": ["g"], "explore": 0}})
        write(home, "settings.json", {"seat_timeout": 4, "panel_workers": 8})
        svc = make_service()
        ask = lambda c: json.dumps({"model": f"bench/{c}", "messages": [{"role": "user", "content": "hi"}]}).encode()
        threads = [threading.Thread(target=raw, args=(svc.url, "POST", "/v1/chat/completions", ask("hang"),
                                                      {"Content-Type": "application/json"}), daemon=True)
                   for _ in range(6)]
        for t in threads:
            t.start()
        # 24 seats on the stuck upstream, far more than the 8 workers: wait until its share of them is stuck
        wait_for(lambda: len(chat_requests(stuck)) >= 4)
        status, _, body = raw(svc.url, "POST", "/v1/chat/completions", ask("fine"),
                              {"Content-Type": "application/json"})
        seats = json.loads(body)["bench"]["seats"]
        assert status == 200 and seats[0]["status"] == "ok", body[:400]
        for t in threads:
            t.join(timeout=30)


def test_a_huge_prompt_is_kept_only_up_to_the_cap(home, fake, make_app):
    bench_data(home, fake)
    write(home, "settings.json", {"record_max_kb": 16})
    app = make_app()
    prompt = "word " * 200_000                                 # a 1 MB prompt
    fake.script("*", Reply(text=prompt, chunk_chars=1 << 16))  # and a 1 MB answer, in 64 KB frames (not 200,000)
    status, _, reply = app("POST", "/v1/chat/completions", {"model": "bench/core",
                                                            "messages": [{"role": "user", "content": prompt}]})
    assert status == 200
    call = reply["bench"]["seats"][0]["call"]
    row = app.bench.db.one("SELECT length(COALESCE(c.request, p.request)) AS req, length(c.answer) AS ans "
                           "FROM calls c LEFT JOIN panels p ON p.id = c.panel WHERE c.id = ?", (call,))
    assert row["req"] < 40_000 and row["ans"] < 40_000, dict(row)
    status, _, stored = app("GET", f"/bench/calls/{call}")
    assert stored["request"]["truncated"]["chars"] > 1_000_000
    assert "more characters not stored" in stored["request"]["messages"][0]["content"]
    assert stored["answer"].endswith("more characters not stored]")


def test_listing_calls_streams_them(home, fake, make_app):
    """A listing of up to 1,000 large calls once sat in memory whole; it is written a page at a time."""
    bench_data(home, fake)
    app = make_app()
    for _ in range(3):
        app("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}]})
    resp = app.app.handle(__import__("benchwarmers.server.messages", fromlist=["Request"]).Request(
        "GET", "/bench/calls", {"limit": "1000"}, {"host": "127.0.0.1"}))
    assert resp.stream is not None and resp.headers["Content-Type"] == "application/json"
    listed = json.loads(b"".join(resp.stream))["calls"]
    assert len(listed) == 6 and listed[0]["created"] >= listed[-1]["created"]
