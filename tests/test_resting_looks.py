"""Whether another process rested a model is looked up in the database once a request, not at each of its seats'
questions (each look takes a reader and runs a PRAGMA): a panel's seating asks a dozen and more. Outside a request
(the CLI, the scheduler) every question looks, so what another process rested is seen at once."""
from __future__ import annotations

import sqlite3
import threading
import time

from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401  (the fake fixture)

FIVE = {"core": {"members": ["a", "b", "c", "x", "y"], "explore": 0}}


def counting(monkeypatch, db) -> list:
    """The threads of each Database.changed call from now on (Resting's look: nothing else calls it)."""
    calls, real = [], db.changed

    def changed(seen):
        calls.append(threading.current_thread().name)
        return real(seen)
    monkeypatch.setattr(db, "changed", changed)
    return calls


def rest_from_another_process(home, served: str, seconds: float = 600) -> None:
    """A rest committed on another connection to the data folder's database, as another process writes it."""
    with sqlite3.connect(home / "bench.db") as other:
        other.execute("INSERT INTO ratelimits (endpoint, model, facts, resting_until, updated) VALUES (?, ?, ?, ?, ?) "
                      "ON CONFLICT DO UPDATE SET resting_until = excluded.resting_until",
                      ("fake", served, "{}", time.time() + seconds, time.time()))
    other.close()


def test_a_five_seat_panel_looks_for_other_processes_rests_once_or_twice_not_at_every_question(home, fake,
                                                                                               make_service,
                                                                                               monkeypatch):
    setup_bench(home, fake, FIVE)
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body())[0] == 200     # a first ask's one-off work done
    calls = counting(monkeypatch, svc.bench.db)
    status, _, data = api("POST", "/v1/chat/completions", body(content="and again"))
    assert status == 200, data
    assert sorted(s["model"] for s in data["bench"]["seats"]) == ["a", "b", "c", "x", "y"]
    # fifteen before: every seat's every question (seating, sending, the quota's look) went to the database
    assert 1 <= len(calls) <= 3, f"{len(calls)} looks for one panel"


def test_outside_a_request_every_question_looks_and_sees_another_processes_rest_at_once(home, fake, make_service,
                                                                                       monkeypatch):
    setup_bench(home, fake, FIVE)
    svc = make_service()
    resting = svc.bench.resting
    calls = counting(monkeypatch, svc.bench.db)
    assert resting.until("fake", "m-a") is None and resting.until("fake", "m-a") is None
    assert len(calls) == 2                      # no request's memo: each question looked
    rest_from_another_process(home, "m-a")
    assert resting.until("fake", "m-a") > time.time() + 500          # seen at the very next question
    assert len(calls) == 3


def test_inside_a_request_another_processes_rest_counts_from_the_next_request(home, fake, make_service):
    setup_bench(home, fake, FIVE)
    svc = make_service()
    resting, config = svc.bench.resting, svc.bench.config
    with config.steady():
        assert resting.until("fake", "m-b") is None                  # looked once for this request ...
        rest_from_another_process(home, "m-b")
        assert resting.until("fake", "m-b") is None                  # ... and not again within it
    with config.steady():
        assert resting.until("fake", "m-b") > time.time() + 500      # the next request sees it
