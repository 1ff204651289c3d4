"""The onboarding queue: one model at a time in order, refusals before anything runs, logs, restarts, the CLI."""
from __future__ import annotations

import io
import json
import threading
import time

import pytest

from benchwarmers.cli.main import main
from benchwarmers.store import Database
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.panel import wait_for

KEY = "sk-test-queue-0123456789abcdef"


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", "m-two", "m-three"]).expect_key(KEY)
    yield f
    f.stop()


def add_endpoint(http: Http, fake) -> None:
    assert http("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "key": KEY})[0] == 201


@pytest.fixture
def api(http, fake) -> Http:
    add_endpoint(http, fake)
    return http


def finished(http: Http, ids: list[int], timeout: float = 20) -> list[dict]:
    path = "/bench/onboard?ids=" + ",".join(map(str, ids))
    return wait_for(lambda: (lambda items: items if all(i["state"] in ("done", "failed") for i in items) else None)(
        http("GET", path)[2]["items"]), timeout)


def rows(home) -> list[dict]:
    db = Database(home / "bench.db")
    try:
        return [dict(r) for r in db.query("SELECT * FROM onboard_queue ORDER BY id")]
    finally:
        db.close()


def test_three_models_onboard_one_at_a_time_in_order(api, fake, home):
    fake.script("m-one", Reply(text="ready", delay=0.3))
    status, _, d = api("POST", "/bench/onboard", {"models": ["m-one", "m-two", "m-three"], "mode": "quick"})
    assert status == 202, d
    ids = [i["id"] for i in d["items"]]
    assert [i["served"] for i in d["items"]] == ["m-one", "m-two", "m-three"] and ids == sorted(ids)
    assert all(i["state"] == "queued" and i["mode"] == "quick" for i in d["items"])
    items = finished(api, ids)
    assert [i["state"] for i in items] == ["done"] * 3
    assert [i["model"] for i in items] == ["m-one", "m-two", "m-three"]
    for before, after in zip(items, items[1:]):
        assert after["started"] >= before["finished"]          # never two at once, and in order
    assert all(i["suite"].startswith("owed") and i["attempts"] == 1 for i in items)
    _, _, one = api("GET", f"/bench/onboard/{ids[0]}")
    log = "\n".join(one["log_lines"])
    assert "queued: m-one" in log and "probe answered" in log and "registered as m-one" in log and "suite: owed" in log
    assert (home / one["log"]).is_file()
    _, _, listed = api("GET", "/bench/onboard")
    assert [i["id"] for i in listed["items"]] == ids[::-1]       # newest first
    assert [m["alias"] for m in api("GET", "/bench/models")[2]["models"]] == ["m-one", "m-three", "m-two"]


def test_a_probe_answered_with_something_else_passes_and_says_so(api, fake):
    fake.script("m-one", Reply(text="Ready."))
    fake.script("m-two", Reply(text="The quick brown fox jumps over"))      # reaches it, but not what was asked
    items = finished(api, [i["id"] for i in api("POST", "/bench/onboard", {"models": ["m-one", "m-two"],
                                                                           "mode": "quick"})[2]["items"]])
    assert [i["state"] for i in items] == ["done", "done"]
    logs = ["\n".join(api("GET", f"/bench/onboard/{i['id']}")[2]["log_lines"]) for i in items]
    assert "not the word 'ready'" not in logs[0]
    assert "not the word 'ready' it was asked for" in logs[1] and "may not follow instructions" in logs[1]


def test_modes_say_what_happens_to_the_suite(api, fake, home):
    write(home, "settings.json", {"suite_gap_seconds": 0.1})
    _, _, d = api("POST", "/bench/onboard", {"models": ["m-one"]})
    _, _, q = api("POST", "/bench/onboard", {"models": ["m-three"], "mode": "quick"})
    _, _, a = api("POST", "/bench/onboard", {"models": ["m-two"], "mode": "adhoc", "alias": "two"})
    ids = [x["items"][0]["id"] for x in (d, q, a)]
    running = wait_for(lambda: [i for i in api("GET", f"/bench/onboard?ids={ids[0]}")[2]["items"]
                                if i["state"] == "suite" and i["progress"]], 20)[0]
    assert running["model"] == "m-one" and 1 <= running["progress"]["done"] < running["progress"]["total"]
    full, quick, adhoc = finished(api, ids, 60)
    _, _, runs = api("GET", "/bench/suite/runs")
    by_model = {r["model"]: r for r in runs["runs"]}
    played = by_model["m-one"]                                  # full: the suite ran for it, now
    assert played["status"] == "done" and played["reason"] == "full onboarding"
    assert full["suite"].startswith(f"done: {played['total']} of {played['total']} items (run {played['id']})")
    assert full["progress"] == {"run": played["id"], "done": played["total"], "total": played["total"], "failed": 0}
    asked = [r.body["model"] for r in fake.requests if r.path.endswith("/chat/completions")]
    assert asked.count("m-one") == 2 + played["total"]          # its probe, its speed, then one call per suite item
    assert by_model["m-three"]["status"] == "owed" and quick["suite"].startswith("owed: the scheduler's suite job")
    assert asked.count("m-three") == 2                          # quick: probed and timed, the suite owed
    assert asked.count("m-two") == 1                            # ad hoc: probed alone
    assert adhoc["model"] == "two" and adhoc["suite"].startswith("none") and "two" not in by_model
    assert api("GET", "/bench/models/two")[2]["model"]["ad_hoc"] is True
    log = "\n".join(api("GET", f"/bench/onboard/{ids[0]}")[2]["log_lines"])
    assert "running the suite for m-one" in log and "suite: done" in log


@pytest.mark.parametrize("body, status, words", [
    ({}, 400, "`models` is a list"),
    ({"models": []}, 400, "`models` is a list"),
    ({"models": ["m-one"], "mode": "slow"}, 400, "full, quick or adhoc"),
    ({"models": ["m-one", "m-two"], "alias": "x"}, 400, "one model"),
    ({"models": ["m-one", "m-one"]}, 400, "named twice"),
    ({"models": [""]}, 400, "non-empty string"),
    ({"models": ["m-one"], "alias": "bad alias"}, 400, "not a valid name"),
    ({"models": ["m-one"], "endpoint": "nope"}, 404, "No endpoint named 'nope'"),
    ({"models": ["m-one"], "wait": True}, 400, "Unknown field"),
])
def test_bad_requests_are_refused_before_anything_is_queued(api, home, body, status, words):
    code, _, d = api("POST", "/bench/onboard", body)
    assert code == status and words in d["error"]["message"], d
    assert rows(home) == []


def test_duplicates_are_refused_before_anything_runs(api, fake, home):
    probed = threading.Event()                             # m-one stays on the queue until the test has asked again
    fake.script("m-one", Reply(text="ready", hold=probed))
    _, _, d = api("POST", "/bench/onboard", {"models": ["m-one"], "mode": "quick"})
    status, _, err = api("POST", "/bench/onboard", {"models": ["m-two", "m-one"]})
    probed.set()
    assert status == 409 and f"already queued (item {d['items'][0]['id']})" in err["error"]["message"]
    finished(api, [d["items"][0]["id"]])
    status, _, err = api("POST", "/bench/onboard", {"models": ["m-two", "m-one"]})
    assert status == 409 and "already on the bench as 'm-one'" in err["error"]["message"]
    assert [r["served"] for r in rows(home)] == ["m-one"]        # m-two was not queued either time
    assert len([r for r in fake.requests if r.path.endswith("/chat/completions")]) == 2   # probed and timed once


def test_failures_carry_their_reason_and_register_nothing(api, fake):
    fake.script("m-two", Reply.error(500))
    _, _, d = api("POST", "/bench/onboard", {"models": ["not-served", "m-two", "m-three"], "mode": "quick"})
    missing, broken, fine = finished(api, [i["id"] for i in d["items"]])
    assert missing["state"] == "failed" and "No endpoint serves 'not-served'" in missing["reason"]
    assert broken["state"] == "failed" and "Nothing was registered" in broken["reason"]
    assert fine["state"] == "done"                                # a failure does not stop the queue
    assert [m["alias"] for m in api("GET", "/bench/models")[2]["models"]] == ["m-three"]
    assert any("failed:" in line for line in api("GET", f"/bench/onboard/{broken['id']}")[2]["log_lines"])
    assert api("GET", "/bench/onboard/999")[0] == 404 and api("GET", "/bench/onboard/x")[0] == 400
    assert api("GET", "/bench/onboard?ids=1,zz")[0] == 400


def test_a_restart_in_the_middle_of_an_item_retries_it_once(make_service, fake, home):
    first = make_service()
    add_endpoint(Http(first.url), fake)
    fake.script("m-one", [Reply(text="ready", hold=threading.Event())])   # only the first call: out until the end
    _, _, d = Http(first.url)("POST", "/bench/onboard", {"models": ["m-one", "m-two"], "mode": "quick"})
    ids = [i["id"] for i in d["items"]]
    wait_for(lambda: any(r.path.endswith("/chat/completions") for r in fake.requests))
    first.stop()                                                  # mid-probe
    assert [(r["state"], r["attempts"]) for r in rows(home)] == [("queued", 1), ("queued", 0)]
    assert "models" not in json.loads((home / "config" / "models.json").read_text()) or \
        json.loads((home / "config" / "models.json").read_text())["models"] == {}

    second = make_service()
    items = finished(Http(second.url), ids)
    assert [(i["state"], i["attempts"]) for i in items] == [("done", 2), ("done", 1)]
    log = "\n".join(Http(second.url)("GET", f"/bench/onboard/{ids[0]}")[2]["log_lines"])
    assert "interrupted: the service stopped" in log and "started (attempt 2)" in log


def test_a_restart_in_the_suite_step_resumes_the_suite_not_the_registration(make_service, fake, home):
    write(home, "settings.json", {"suite_gap_seconds": 0})
    first = make_service()
    add_endpoint(Http(first.url), fake)
    fake.script("m-one", [Reply(text="ready"), Reply(text="one, two"), Reply(text="no idea"),
                          Reply(text="no idea", hold=threading.Event())])     # the fourth: out until the end
    _, _, d = Http(first.url)("POST", "/bench/onboard", {"models": ["m-one"]})
    item = d["items"][0]["id"]
    wait_for(lambda: Http(first.url)("GET", f"/bench/onboard/{item}")[2]["state"] == "suite"
             and len([r for r in fake.requests if r.path.endswith("/chat/completions")]) == 4)
    first.stop()                                                  # mid-suite: the fourth call is in flight
    assert [(r["state"], r["model"]) for r in rows(home)] == [("queued", "m-one")]

    second = make_service()
    [done] = finished(Http(second.url), [item], 60)
    assert (done["state"], done["attempts"], done["model"]) == ("done", 2, "m-one") and done["suite"].startswith("done")
    runs = Http(second.url)("GET", "/bench/suite/runs?model=m-one")[2]["runs"]
    assert len(runs) == 1 and runs[0]["status"] == "done"          # the same run, resumed
    asked = [r.body["model"] for r in fake.requests if r.path.endswith("/chat/completions")]
    # one probe and one speed measure, each item once, and at most the ones cut off asked again (whether the
    # stopping service waited for its answer or not): the one in flight, and the next, which the suite may send
    # between the seat's hang-up and its own stop
    assert 2 + runs[0]["total"] <= asked.count("m-one") <= 4 + runs[0]["total"]
    probes = second.bench.db.query("SELECT kind FROM probes WHERE model = 'm-one'")
    assert [p["kind"] for p in probes] == ["onboard"]
    log = "\n".join(Http(second.url)("GET", f"/bench/onboard/{item}")[2]["log_lines"])
    assert "registered by the earlier attempt" in log


def test_a_crashed_worker_is_noticed_by_its_stale_heartbeat(home, fake, make_service, monkeypatch):
    monkeypatch.setenv("BENCHWARMERS_KEY_OA", KEY)
    write(home, "endpoints.json", {"endpoints": {"oa": {"base_url": fake.url, "api": "openai"}}})
    db = Database(home / "bench.db")
    old = time.time() - 3600
    for served, attempts in (("m-one", 1), ("m-two", 2)):
        db.execute("INSERT INTO onboard_queue (served, endpoint, mode, state, attempts, owner, heartbeat, created, "
                   "started) VALUES (?, NULL, 'quick', 'probing', ?, 'w_gone', ?, ?, ?)",
                   (served, attempts, old, old, old), wait=True)
    db.close()
    retried, given_up = finished(Http(make_service().url), [1, 2])
    assert (retried["state"], retried["attempts"]) == ("done", 2)
    assert given_up["state"] == "failed" and "interrupted twice" in given_up["reason"]


def test_two_services_on_one_folder_never_onboard_at_once(make_service, fake):
    a, b = make_service(), make_service()
    add_endpoint(Http(a.url), fake)
    fake.script("*", Reply(text="ready", delay=0.4))
    _, _, d = Http(a.url)("POST", "/bench/onboard", {"models": ["m-one", "m-two", "m-three"], "mode": "quick"})
    items = finished(Http(b.url), [i["id"] for i in d["items"]])
    assert [i["state"] for i in items] == ["done"] * 3
    for before, after in zip(items, items[1:]):
        assert after["started"] >= before["finished"]
    asked = [r.body["model"] for r in fake.requests if r.path.endswith("/chat/completions")]
    assert sorted(asked) == ["m-one"] * 2 + ["m-three"] * 2 + ["m-two"] * 2   # each probed and timed once, by one


# ---- the CLI ----------------------------------------------------------------------------------------

@pytest.fixture
def cli(service, capsys, monkeypatch):
    def run(*argv):
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = main(["--url", service.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_cli_returns_the_ids_at_once_then_waits_with_plain_lines(cli, http, fake):
    add_endpoint(http, fake)
    fake.script("m-one", Reply(text="ready", delay=0.5))
    code, out, err = cli("onboard", "m-one", "m-two", "--quick")
    assert code == 0 and "queued" in out and "m-one" in out and "m-two" in out
    assert "follow them with: bench onboard --wait," in err
    code, out, err = cli("onboard", "--wait")                            # the command the hint names follows them
    assert code == 0 and "Onboarded m-one (m-one)" in out and "Onboarded m-two (m-two)" in out
    assert "m-one" in err and "done" in err
    code, out, err = cli("onboard", "--wait")
    assert code == 0 and out == "" and "Nothing on the queue is waiting or running" in err
    code, out, err = cli("onboard", "--json")
    assert code == 0 and [i["served"] for i in json.loads(out)["items"]] == ["m-two", "m-one"]
    code, out, err = cli("onboard", "m-three", "not-served", "--wait", "--quick")
    assert code == 1
    assert "Onboarded m-three (m-three); suite owed: the scheduler's suite job plays it" in out
    assert "Failed not-served: No endpoint" in out
    assert "\x1b[" not in err and "m-three" in err and "done" in err      # plain progress lines, no terminal codes
    code, out, _ = cli("onboard")
    assert code == 0 and "as m-one" in out and "No endpoint serves" in out
    assert cli("onboard", "a", "b", "--alias", "x")[0] == 2


def test_cli_on_a_terminal_redraws_one_line_per_model(cli, http, fake, monkeypatch):
    add_endpoint(http, fake)

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    code, out, _ = cli("onboard", "m-one", "m-two", "--wait", "--ad-hoc")
    assert code == 0 and out.count("Onboarded") == 2
    assert "\x1b[2K" in term.getvalue() and "done" in term.getvalue()


def test_a_model_the_other_services_worker_onboarded_is_answered_with(make_service, fake):
    """POST /bench/models waits for its item and answers with the model: also when the other service on the data
    folder took the item (it was a 404 naming the models this request had read before it waited)."""
    a, b = make_service(), make_service()
    add_endpoint(Http(a.url), fake)
    held = threading.Event()
    fake.script("m-one", Reply(text="ready", hold=held))
    _, _, d = Http(b.url)("POST", "/bench/onboard", {"models": ["m-one"], "mode": "quick"})
    wait_for(lambda: Http(b.url)("GET", f"/bench/onboard/{d['items'][0]['id']}")[2]["state"] == "probing")
    answered = []
    asking = threading.Thread(target=lambda: answered.append(Http(a.url)("POST", "/bench/models", {
        "served": "m-two", "alias": "two", "quick": True})))
    asking.start()
    wait_for(lambda: len(Http(a.url)("GET", "/bench/onboard")[2]["items"]) == 2)
    held.set()                      # b's worker, awake as its item ends, takes a's item next
    asking.join(60)
    status, _, body = answered[0]
    assert status == 201, body
    assert body["model"]["alias"] == "two" and body["item"] == d["items"][0]["id"] + 1
