"""A seat still out when the panel stops waiting at seat_timeout: its call recorded (timed out) before the reply names
it and hung up, then that one record amended by its worker: a call never sent loses its ledger line, a verdict given
meanwhile is kept. The seat is kept out by a rate limit on a held clock (it waits to be sent until the test moves
time), so it is still out when the panel answers however slow the machine; the race of a worker against the deadline
is run over many seats. (An explore seat out at the end of the grace is tests/test_panel_slow.py's.)"""
from __future__ import annotations

import sqlite3
import threading
from datetime import datetime

import pytest

from tests.fakes import Reply
from tests.helpers.clock import HeldClock
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import (body, fake, requests_for, setup_bench, stream_bench, stream_chunks,  # noqa: F401
                                 wait_for)

LATE = "answered after the panel stopped waiting"
CLOSED = "no answer within 2 s: the panel stopped waiting and closed its call"


def limit_b(home) -> None:
    """Model b may be sent one request a minute; its day's tokens are limited too, far above use, to read their
    count."""
    write(home, "limits.json", {"limits": {"connections": {}, "models": {"b": {"rpm": 1, "tpd": 10 ** 6}}}})


@pytest.fixture
def held(home, fake, make_service):
    """Core = a, b; b has used its request of this minute, so its next seat waits for the clock: (service, api,
    clock)."""
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0, "merge_model": "merger"}},
                settings={"seat_timeout": 2, "limit_wait_seconds": 150})
    limit_b(home)
    clock = HeldClock(start=datetime(2026, 11, 3, 10, 0))
    svc = make_service(clock=clock)
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("b", "the first"))[0] == 200
    return svc, api, clock


def seats(bench: dict) -> dict:
    return {s["model"]: s for s in bench["seats"]}


def committed(home, call: str) -> list:
    """The call's rows as another process would read them: committed ones only."""
    conn = sqlite3.connect(str(home / "bench.db"))
    try:
        return conn.execute("SELECT status, error FROM calls WHERE id = ?", (call,)).fetchall()
    finally:
        conn.close()


def lines(svc, call: str) -> list:
    svc.bench.db.sync()
    return [tuple(r) for r in svc.bench.db.query("SELECT input_tokens, output_tokens FROM usage WHERE call = ?",
                                                 (call,))]


def ask_panel(api, url: str, how: str) -> dict:
    """The panel's `bench` block, asked whole, streamed, or merged."""
    if how == "stream":
        return stream_bench(stream_chunks(url, body(content="late one")))
    status, _, data = api("POST", "/v1/chat/completions",
                          body("bench/core:merged" if how == "merged" else "bench/core", "late one"), timeout=60)
    assert status == 200, data
    return data["bench"]


@pytest.mark.parametrize("how", ["whole", "stream", "merged"])
def test_a_seat_still_out_is_in_the_record_when_the_panel_answers(home, held, how):
    svc, api, clock = held
    b = seats(ask_panel(api, svc.url, how))["b"]
    assert b["status"] == "timeout" and b["error"] == "no answer within 2 s"
    assert clock.waiting == 1                                    # b's worker has not even sent its request
    assert committed(home, b["call"]) == [("timeout", "no answer within 2 s")]
    status, _, rec = api("GET", f"/bench/calls/{b['call']}")
    assert status == 200 and rec["status"] == "timeout" and rec["seconds"] == 2 and rec["answer"] is None
    assert api("POST", "/bench/verdict", {"call": b["call"], "useful": False, "note": "never came"})[0] == 200
    clock.advance(seconds=60)                                    # let it go, so the service stops cleanly
    wait_for(lambda: api("GET", f"/bench/calls/{b['call']}")[2]["error"] == CLOSED)


def test_a_seat_given_up_is_never_sent_and_its_record_says_so(home, fake, held):
    svc, api, clock = held
    b = seats(ask_panel(api, svc.url, "whole"))["b"]
    assert lines(svc, b["call"]) == [(0, 0)]                     # sent as far as the panel knows; no tokens yet
    assert api("POST", "/bench/verdict", {"call": b["call"], "useful": False, "note": "never came"})[0] == 200
    clock.advance(seconds=60)                                    # its worker may send now: it finds it hung up
    rec = wait_for(lambda: (r := api("GET", f"/bench/calls/{b['call']}")[2])["error"] == CLOSED and r)
    assert rec["status"] == "timeout" and rec["answer"] is None and rec["output_tokens"] == 0
    assert rec["seat"] == 2 and rec["seconds"] > 1                # the worker's own time, the wait included
    assert [(v["useful"], v["note"]) for v in rec["verdicts"]] == [(False, "never came")]   # kept
    assert lines(svc, b["call"]) == []                           # never sent: no ledger line
    assert len(requests_for(fake, "m-b")) == 1                   # the first ask's only
    # the limits hold the first call's tokens only
    first = [r for r in api("GET", "/bench/calls?model=b")[2]["calls"] if r["id"] != b["call"]]
    spent = sum(r["input_tokens"] + r["output_tokens"] for r in first)
    used = next(m for m in api("GET", "/bench/limits")[2]["models"] if m["name"] == "b")["windows"]["tpd"]["used"]
    assert used == spent


def test_a_seat_that_never_went_out_loses_its_ledger_line(home, fake, make_service):
    """b and c share a connection that may hold one worker and send one request a minute: b holds the worker,
    waiting for the clock, so c is never started; the panel records both as sent when it stops waiting, and c's worker takes that back."""
    configure(home, {"fake": (fake, "openai"), "other": (fake, "openai")},
              {"a": ("fake", "m-a"), "b": ("other", "m-b"), "c": ("other", "m-c")},
              {"core": {"members": ["a", "b", "c"], "explore": 0}})
    write(home, "settings.json", {"seat_timeout": 2, "limit_wait_seconds": 150, "panel_workers": 2})
    # b's model and their connection may be sent one request a minute, both used by the first ask: b and c both
    # wait for a worker (none may write its request at once on a kept-alive connection, which a free one would let c)
    write(home, "limits.json", {"limits": {"connections": {"other": {"rpm": 1}},
                                           "models": {"b": {"rpm": 1, "tpd": 10 ** 6}}}})
    clock = HeldClock(start=datetime(2026, 11, 3, 10, 0))
    svc = make_service(clock=clock)
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("b", "the first"))[0] == 200
    by = seats(ask_panel(api, svc.url, "whole"))
    for model in "bc":
        assert by[model]["status"] == "timeout" and lines(svc, by[model]["call"]) == [(0, 0)]
    clock.advance(seconds=60)
    c = wait_for(lambda: (r := api("GET", f"/bench/calls/{by['c']['call']}")[2])["error"] != by["c"]["error"] and r)
    assert c["status"] == "timeout" and c["error"].startswith("not started: its endpoint 'other' was busy")
    assert lines(svc, by["c"]["call"]) == [] and requests_for(fake, "m-c") == []
    b = wait_for(lambda: (r := api("GET", f"/bench/calls/{by['b']['call']}")[2])["error"] == CLOSED and r)
    assert lines(svc, b["id"]) == [] and len(requests_for(fake, "m-b")) == 1


def test_a_worker_back_just_as_the_deadline_passes_is_recorded_once(home, fake, make_service):
    """Twelve seats answer at moments spread across the panel's deadline (the last ones past their own first-byte
    timeout): each worker comes back before the panel stops waiting, just as it does, or after. Whichever it was,
    the call has one row, there when the panel answers, ending with what the worker learned, and one ledger line
    with the row's tokens."""
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c"], "explore": 0}}, settings={"seat_timeout": 2})
    fake.script("m-b", [Reply(delay=1.95 + 0.02 * k) for k in range(6)])
    fake.script("m-c", [Reply(delay=1.96 + 0.02 * k) for k in range(6)])
    svc = make_service()
    replies: list = []

    def ask(i: int) -> None:
        replies.append(Http(svc.url)("POST", "/v1/chat/completions", body(content=f"race {i}"), timeout=60))
    threads = [threading.Thread(target=ask, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    told = {}
    for status, _, data in replies:
        assert status == 200, data
        by = seats(data["bench"])
        assert by["a"]["status"] == "ok"
        for model in "bc":
            assert committed(home, by[model]["call"]), by[model]
            told[by[model]["call"]] = by[model]
    assert len(told) == 12
    api = Http(svc.url)
    for call, seat in told.items():
        rec = wait_for(lambda: (r := api("GET", f"/bench/calls/{call}")[2])["error"] != "no answer within 2 s" and r)
        assert rec["status"] == seat["status"], (rec, seat)          # the status the client was told stays
        assert rec["answer"] or "sent no response" in rec["error"] or rec["error"] == CLOSED, rec
        assert lines(svc, call) == [(rec["input_tokens"], rec["output_tokens"])], rec
    for panel in {data["bench"]["panel"] for _, _, data in replies}:
        assert len(svc.bench.db.query("SELECT id FROM calls WHERE panel = ?", (panel,))) == 3
