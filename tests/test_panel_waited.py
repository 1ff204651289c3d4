"""A panel's seats on kept-alive connections are waited for by one thread (the waiter), not a thread each: the
answers, the record and every fault come out as they do for a seat a worker waits for. The fakes listen on loopback,
where seats are asked streamed by default (tests/test_panel_local.py): `stream_seats` none asks them whole, as seats
on a remote provider are."""
from __future__ import annotations

import time

import pytest

from tests.fakes import Reply
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, headings, setup_bench, stream_bench, stream_chunks, stream_text  # noqa: F401

CORE = {"core": {"members": ["a", "b", "c"], "explore": 0}}


@pytest.fixture
def warmed(home, fake, make_service):
    """core = a, b, c; one panel asked already, so three kept-alive connections wait in the pool: (service, api)."""
    setup_bench(home, fake, CORE, settings={"seat_timeout": 1.5, "stream_seats": "none"})
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body())[0] == 200
    return svc, api


def seats(data: dict) -> dict:
    return {s["model"]: s for s in data["bench"]["seats"]}


def rows(svc, panel: str) -> dict:
    svc.bench.db.sync()
    return {r["model"]: dict(r) for r in svc.bench.db.query(
        "SELECT model, status, error, output_tokens FROM calls WHERE panel = ?", (panel,))}


def test_seats_on_kept_alive_connections_are_heard_by_the_waiter(warmed, fake):
    svc, api = warmed
    waiter, whole_panels = svc.bench.dialer.dispatch.waiter, 0
    for _ in range(6):
        heard = waiter.passed_on
        status, _headers, data = api("POST", "/v1/chat/completions", body(content="again"))
        assert status == 200 and all(s["status"] == "ok" for s in data["bench"]["seats"])
        text = data["choices"][0]["message"]["content"]
        assert [h[1] for h in headings(text)] == ["a", "b", "c"] and "m-b says: again" in text
        recorded = rows(svc, data["bench"]["panel"])
        assert {m: r["status"] for m, r in recorded.items()} == {"a": "ok", "b": "ok", "c": "ok"}
        assert all(r["output_tokens"] > 0 for r in recorded.values())
        # a seat finding no idle connection (the service's own calls may hold one a moment) waits in a worker
        whole_panels += waiter.passed_on - heard == 3
    assert whole_panels >= 1 and fake.connections <= 4   # no thread a seat; connections kept (3 seats at once)


def test_a_seat_with_no_answer_times_out_and_the_rest_answer(warmed, fake):
    svc, api = warmed
    fake.script("m-b", Reply(delay=4))
    started = time.monotonic()
    status, _headers, data = api("POST", "/v1/chat/completions", body())
    assert status == 200 and time.monotonic() - started < 3.5
    told = seats(data)
    assert told["b"]["status"] == "timeout" and told["a"]["status"] == told["c"]["status"] == "ok"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "closed" not in (rows(svc, data["bench"]["panel"])["b"]["error"] or ""):
        time.sleep(0.1)
    b = rows(svc, data["bench"]["panel"])["b"]
    # the panel gave up on it and hung up (the waiter's own timeout may have come first, on a slow machine)
    assert b["status"] == "timeout" and ("the panel stopped waiting and closed its call" in b["error"]
                                         or "no response within 1.5s" in b["error"]), b


def test_errors_stale_connections_and_refused_parameters_go_to_a_worker(warmed, fake):
    svc, api = warmed
    fake.script("m-a", [Reply.error(400, message="Unsupported parameter: 'max_tokens' is not supported with this "
                                                  "model. Use 'max_completion_tokens' instead."), Reply()])
    fake.script("m-c", Reply.error(500, message="upstream broke"))
    status, _headers, data = api("POST", "/v1/chat/completions", body(max_tokens=50))
    told = seats(data)
    assert status == 200 and told["a"]["status"] == "ok" and told["b"]["status"] == "ok"
    assert told["c"]["status"] == "failed" and "upstream broke" in told["c"]["error"]
    asked_a = [r.body for r in fake.requests if r.body.get("model") == "m-a"]
    assert asked_a[-2]["max_tokens"] == 50 and asked_a[-1]["max_completion_tokens"] == 50
    fake.script("m-c", Reply())
    fake.drop_connections()                       # every kept-alive connection died while idle
    status, _headers, data = api("POST", "/v1/chat/completions", body())
    assert status == 200 and all(s["status"] == "ok" for s in data["bench"]["seats"])


def test_a_streamed_panel_gives_each_seat_block_as_it_is_heard(warmed, fake):
    svc, api = warmed
    fake.script("m-a", Reply(delay=0.6))
    chunks = stream_chunks(svc.url, body(stream=True))
    order = [h[1] for h in headings(stream_text(chunks))]
    assert sorted(order) == ["a", "b", "c"] and order[-1] == "a"   # the slow seat's block comes last
    assert all(s["status"] == "ok" for s in stream_bench(chunks)["seats"])
