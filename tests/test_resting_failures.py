"""A model whose calls keep failing rests a while, whatever the scheduler does (it is off here): after
REST_AFTER failures running (nothing answered, a 5xx, a timeout) an explore candidate is passed over and a member's
seat is skipped, each with the reason, and the model's status says resting; an answer ends the count and the rest."""
from __future__ import annotations

import socket
from types import SimpleNamespace

from benchwarmers.roster.limits.resting import REST_AFTER
from tests.fakes import Reply
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.panel import body, fake  # noqa: F401  (the fake fixture)


def dead_endpoint() -> SimpleNamespace:
    """An endpoint whose port nothing listens on: every connection is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return SimpleNamespace(url=f"http://127.0.0.1:{port}/v1")


def seats(data: dict) -> dict:
    return {s["model"]: s for s in data["bench"]["seats"]}


def test_an_explore_candidate_on_a_dead_endpoint_is_rested_after_its_failures(home, fake, make_service):
    configure(home, {"live": (fake, "openai"), "dead": (dead_endpoint(), "openai")},
              {"a": ("live", "m-a"), "x": ("dead", "m-x")}, {"core": {"members": ["a"], "explore": 1}})
    svc = make_service()
    api = Http(svc.url)
    assert api("GET", "/bench/scheduler")[2]["enabled"] is False            # no probe will retire it
    for i in range(REST_AFTER):
        data = api("POST", "/v1/chat/completions", body(content=f"question {i}"))[2]
        x = seats(data)["x"]
        assert x["status"] == "failed" and "refused the connection" in x["error"]
        assert "passed_over" not in data["bench"]
    assert api("GET", "/bench/models/x")[2]["model"]["status"] == "resting"
    data = api("POST", "/v1/chat/completions", body(content="once more"))[2]
    assert list(seats(data)) == ["a"]                                    # passed over, not asked
    [passed] = data["bench"]["passed_over"]
    assert passed["model"] == "x" and passed["reason"].startswith("failing, resting until ")
    assert f"its last {REST_AFTER} calls failed (connection: " in passed["reason"]
    assert "refused the connection" in passed["reason"]
    shown = api("GET", "/bench/models/x")[2]["model"]
    assert shown["status"] == "resting" and f"as its last {REST_AFTER} calls failed" in shown["status_text"]


def test_a_failing_member_is_skipped_with_the_reason_and_a_panel_of_them_is_no_rate_limit(home, fake, make_service):
    configure(home, {"live": (fake, "openai"), "dead": (dead_endpoint(), "openai")},
              {"a": ("live", "m-a"), "b": ("dead", "m-b")},
              {"core": {"members": ["a", "b"], "explore": 0}, "gone": {"members": ["b"], "explore": 0},
               "solo": {"members": ["a"], "explore": 0}})
    svc = make_service()
    api = Http(svc.url)
    for i in range(REST_AFTER):
        assert seats(api("POST", "/v1/chat/completions", body(content=f"q {i}"))[2])["b"]["status"] == "failed"
    data = api("POST", "/v1/chat/completions", body(content="again"))[2]
    b = seats(data)["b"]
    assert b["status"] == "skipped" and b["error"].startswith("failing, resting until ")
    assert seats(data)["a"]["status"] == "ok"
    status, _, err = api("POST", "/v1/chat/completions", body(model="bench/gone"))
    assert status == 502 and "Every seat rests: b: failing, resting until" in err["error"]["message"], err
    named = api("POST", "/v1/chat/completions", body(model="b"))          # asked by name, it is tried: still dead
    assert named[0] == 502 and "refused the connection" in named[2]["error"]["message"]
    with_b = seats(api("POST", "/v1/chat/completions", body(model="bench/solo", bench={"with": ["b"]}))[2])
    assert with_b["b"]["status"] == "failed"                     # named with bench.with: tried, so not skipped


def test_an_answer_ends_the_count_and_a_probe_that_answers_ends_the_rest(home, fake, make_service):
    configure(home, {"live": (fake, "openai")}, {"a": ("live", "m-a"), "y": ("live", "m-y")},
              {"core": {"members": ["a"], "explore": 1}})
    svc = make_service()
    api = Http(svc.url)
    down = Reply.error(503, "overloaded")

    def ask() -> dict:
        return seats(api("POST", "/v1/chat/completions", body())[2])
    fake.script("m-y", [down] * (REST_AFTER - 1) + [Reply()] + [down] * (REST_AFTER - 1))
    states = [ask()["y"]["status"] for _ in range(2 * REST_AFTER - 1)]
    assert states == ["failed"] * (REST_AFTER - 1) + ["ok"] + ["failed"] * (REST_AFTER - 1)
    assert api("GET", "/bench/models/y")[2]["model"]["status"] == "active"     # the answer began the count again
    fake.script("m-y", down)
    assert ask()["y"]["status"] == "failed"
    assert "y" not in ask() and api("GET", "/bench/models/y")[2]["model"]["status"] == "resting"
    fake.script("m-y", "ready")
    status, _, probed = api("POST", "/bench/models/y/probe")
    assert status == 200, probed
    assert api("GET", "/bench/models/y")[2]["model"]["status"] == "active"
    assert ask()["y"]["status"] == "ok"
