"""Two processes, one bench: the dashboard service and a `benchwarmers gateway` process on one data folder share
their limits' counts, the rests a rate limit imposes and route mode's pins through the database."""
from __future__ import annotations

import threading

import pytest

from tests.fakes import Reply
from tests.helpers.data import write
from tests.helpers.gateway import start_gateway, stop_gateway
from tests.helpers.http import Http
from tests.helpers.panel import body, chat_requests, fake, requests_for, setup_bench  # noqa: F401 (fake is a fixture)


@pytest.fixture
def gateway(home):
    """start() -> the URL of `python gateway.py --port 0` on the test's data folder: another process, as a user runs
    it; stopped after the test."""
    started = []

    def start() -> str:
        proc, url = start_gateway(home)
        started.append(proc)
        return url
    yield start
    for proc in started:
        stop_gateway(proc)


def test_a_limit_holds_across_two_processes(home, fake, make_service, gateway):
    setup_bench(home, fake, settings={"limit_wait_seconds": 0})
    write(home, "limits.json", {"limits": {"connections": {"fake": {"rpm": 5}}, "models": {}}})
    urls = [make_service().url, gateway()]
    out, threads = [], []

    def ask(url: str, i: int) -> None:
        out.append(Http(url)("POST", "/v1/chat/completions", body("a", f"ask {i}"), timeout=120)[0])
    for i in range(20):                                   # ten asks to each process, all at once
        threads.append(threading.Thread(target=ask, args=(urls[i % 2], i)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(chat_requests(fake)) == 5                  # counted at the upstream: the limit held for both
    assert sorted(out).count(200) == 5 and len(out) == 20


def test_a_pin_and_a_rest_made_in_one_process_hold_in_the_other(home, fake, make_service, gateway):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}, "pair": {"members": ["x", "a"], "explore": 0}})
    service = make_service()
    one, other = Http(service.url), Http(gateway())
    headers = {"x-claude-code-session-id": "conversation-1"}
    status, first, d = one("POST", "/v1/chat/completions", body("bench/core:route"), headers)
    assert status == 200, d
    pinned = first["x-bench-model"]
    assert one("POST", "/bench/verdict", {"call": first["x-bench-call"], "useful": False})[0] == 200
    service.bench.db.sync()
    # the verdict would send a new conversation to the other member; this one stays where the first process pinned it
    assert other("POST", "/v1/chat/completions", body("bench/core:route"), {"x-claude-code-session-id": "new"})[1][
        "x-bench-model"] != pinned
    assert other("POST", "/v1/chat/completions", body("bench/core:route"), headers)[1]["x-bench-model"] == pinned
    fake.script("m-x", Reply.error(429, style="openai", retry_after=600))
    status, _, d = one("POST", "/v1/chat/completions", body("bench/pair"))   # the first process meets a rate limit
    assert status == 200 and d["bench"]["seats"][0]["status"] == "failed", d
    sent = len(requests_for(fake, "m-x"))

    # the other process rests it too, from its very next call (no wait for a refresh)
    seat = other("POST", "/v1/chat/completions", body("bench/pair"))[2]["bench"]["seats"][0]
    assert seat["status"] == "skipped" and "resting until" in (seat["error"] or ""), seat
    assert len(requests_for(fake, "m-x")) == sent
