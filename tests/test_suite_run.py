"""A whole suite run through the real service and its gateway, against fake models with known behaviour."""
from __future__ import annotations

import json
import shutil
import threading
import time

import pytest

from benchwarmers.cli.main import main
from benchwarmers.service.lifecycle import Service
from benchwarmers.store.pending import pending
from benchwarmers.suite import history
from benchwarmers.suite.tasks import data_dir, load_all, write as write_task
from tests.fakes import Reply
from tests.helpers.catalog import map_endpoints
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure, write
from tests.helpers.gitrepo import fix_repo
from tests.helpers.http import Http
from tests.helpers.jobs import run_job
from tests.helpers.panel import wait_for as poll
from tests.helpers.suite import Oracle, plant, wait_run
from tests.test_scheduler import track


@pytest.fixture
def oracle(home):
    """The data folder with the four test tasks, three fake models and no pause between suite calls."""
    known = plant(home)
    oracle = Oracle(known).start()
    configure(home, {"fake": (oracle, "openai")},
              {"right": ("fake", "right"), "eager": ("fake", "eager"), "silent": ("fake", "silent")},
              {"core": {"members": ["right", "eager", "silent"], "explore": 0}})
    write(home, "settings.json", {"suite_gap_seconds": 0})
    yield oracle
    oracle.stop()


def test_three_known_models_get_the_expected_scores(oracle, make_service):
    svc = make_service()
    http = Http(svc.url)
    status, _, d = http("POST", "/bench/suite/runs", {"collection": "core", "tasks": "t-*"})
    assert status == 202 and [r["model"] for r in d["runs"]] == ["right", "eager", "silent"]
    for run in d["runs"]:
        done = wait_run(http, run["id"])
        assert done["run"]["status"] == "done" and done["run"]["done"] == done["run"]["total"] == 6
    _, _, s = http("GET", "/bench/suite/scores")
    right, eager, silent = (s["scores"][m] for m in ("right", "eager", "silent"))
    assert right["review"] | {"interval": None} == {
        "bugs": 2, "hits": 2, "hit_rate": 1.0, "controls": 2, "false_alarms": 0, "false_alarm_rate": 0.0,
        "clean": 2, "unanswered": 0, "score": 1.0, "interval": None}
    assert right["claims"]["right"] == 2 and right["claims"]["score"] == 1.0
    assert right["parse"] == {"json": 4, "prose": 2}          # bugs answered in JSON, claims in prose
    assert eager["review"]["hits"] == 2 and eager["review"]["false_alarms"] == 2 and eager["review"]["score"] == 0.5
    assert eager["claims"]["right"] == 1 and eager["claims"]["wrong"] == 1 and eager["claims"]["score"] == 0.5
    assert eager["confidently_wrong"] == 3                    # two false alarms and one wrong claim, all at 0.9
    assert silent["review"]["hits"] == 0 and silent["review"]["false_alarms"] == 0
    assert silent["review"]["unanswered"] == 4 and silent["review"]["score"] == 0.0
    assert silent["claims"]["unanswered"] == 2 and silent["claims"]["score"] == 0.0
    assert silent["parse"] == {"empty": 6}
    assert [b["stated"] for b in right["calibration"]] == [[0.7, 0.9], [0.9, 1.0]]


def test_every_suite_call_is_a_recorded_direct_call(oracle, make_service):
    svc = make_service()
    http = Http(svc.url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-claim-*"})
    results = wait_run(http, d["runs"][0]["id"])["results"]
    assert {r["outcome"] for r in results} == {"right"} and all(r["call"] for r in results)
    for r in results:
        _, _, call = http("GET", f"/bench/calls/{r['call']}")
        assert call["model"] == "right" and call["mode"] == "direct" and call["answer"] == r["answer"]
    sent = [q.body for q in oracle.requests if q.path.endswith("/chat/completions")]
    assert len(sent) == 2 and all(b["messages"][0]["role"] == "system" for b in sent)
    assert all('"verdict"' in b["messages"][-1]["content"] for b in sent)     # the machine-readable shape asked


def test_models_show_suite_scores_beside_the_verdicts_never_mixed(oracle, make_service):
    svc = make_service()
    http = Http(svc.url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "eager", "tasks": "t-*"})
    wait_run(http, d["runs"][0]["id"])
    _, _, models = http("GET", "/bench/models")
    eager = next(m for m in models["models"] if m["alias"] == "eager")
    assert eager["suite"]["review"]["score"] == 0.5
    assert eager["record"] is None or eager["record"]["judged"] == 0       # suite calls are no verdicts
    _, _, record = http("GET", "/bench/record")
    assert "suite" not in record["models"].get("eager", {})


def test_the_cli_runs_with_progress_and_prints_scores(oracle, make_service, capsys):
    svc = make_service()
    code = main(["suite", "run", "--model", "right", "--tasks", "t-bug-*", "--url", svc.url])
    out, err = capsys.readouterr()
    assert code == 0
    assert "right   1/4" in err and "t-bug-guard (bug): hit [json]" in err
    assert "right" in out and "100% (hits 2/2, false alarms 0/2)" in out
    assert main(["models", "--url", svc.url]) == 0
    assert "review 100%" in capsys.readouterr().out


def test_a_run_owed_and_cut_off_resumes_after_a_restart_without_asking_twice(oracle, home):
    first = Service(home).start()
    try:
        owed = first.bench.suite.owe("right")
        assert owed["status"] == "owed"
        assert Http(first.url)("GET", "/bench/suite/runs")[2]["runs"][0]["id"] == owed["id"]
        played = first.bench.suite.run_owed(max_items=2)       # a scheduler round with a budget of two calls
        assert played[0]["status"] == "owed" and played[0]["done"] == 2
    finally:
        first.stop()
    second = Service(home).start()
    try:
        progress = []
        played = second.bench.suite.run_owed(progress=lambda run, item: progress.append(item["task"]))
        assert played[0]["status"] == "done" and played[0]["done"] == played[0]["total"]
        assert len(progress) == played[0]["total"] - 2
        asked = [q for q in oracle.requests if q.path.endswith("/chat/completions")]
        assert len(asked) == played[0]["total"]                          # no item was asked twice
        assert second.bench.suite.run_owed() == []                  # nothing owed any more
    finally:
        second.stop()


def test_run_for_model_reports_progress_and_scores(oracle, make_service):
    svc = make_service()
    seen = []
    done = svc.bench.suite.run_for_model("right", tasks="t-*", progress=lambda run, item: seen.append(run["done"]))
    assert done["status"] == "done" and seen == [1, 2, 3, 4, 5, 6]
    assert done["scores"]["review"]["score"] == 1.0 and done["scores"]["claims"]["score"] == 1.0


def test_a_failing_model_stops_the_run_after_three_failures(oracle, make_service):
    oracle.script("right", Reply.error(500))
    svc = make_service()
    http = Http(svc.url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-*"})
    done = wait_run(http, d["runs"][0]["id"])
    assert done["run"]["status"] == "failed" and "3 calls in a row failed" in done["run"]["error"]
    assert [r["outcome"] for r in done["results"]] == ["failed"] * 3
    oracle.reset()                                                       # the model answers again: a new run
    _, _, again = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-*"})
    assert again["runs"][0]["id"] != d["runs"][0]["id"]
    done = wait_run(http, again["runs"][0]["id"])
    assert done["run"]["status"] == "done" and done["run"]["failed"] == 0


@pytest.mark.parametrize("body, words", [
    ({}, "Name one model or one collection"),
    ({"model": "right", "collection": "core"}, "Name one model or one collection"),
    ({"model": "nobody"}, "nobody"),
    ({"model": "right", "tasks": "nothing-*"}, "No ready suite task matches"),
    ({"model": "right", "tasks": 3}, "glob patterns"),
    ({"model": "right", "extra": 1}, "Unknown field"),
    ({"collection": "missing"}, "missing"),
])
def test_bad_run_requests_are_clear_400s_or_404s(oracle, make_service, body, words):
    http = Http(make_service().url)
    status, _, d = http("POST", "/bench/suite/runs", body)
    assert status in (400, 404) and words in d["error"]["message"]


def test_unknown_runs_and_tasks_are_404_and_cancel_is_409_when_finished(oracle, make_service):
    http = Http(make_service().url)
    assert http("GET", "/bench/suite/runs/999")[0] == 404
    assert http("GET", "/bench/suite/runs/abc")[0] == 404
    assert http("GET", "/bench/suite/tasks/nope")[0] == 404
    assert http("GET", "/bench/suite/runs?limit=0")[0] == 400
    _, _, d = http("POST", "/bench/suite/runs", {"model": "silent", "tasks": "t-claim-true"})
    wait_run(http, d["runs"][0]["id"])
    status, _, err = http("POST", f"/bench/suite/runs/{d['runs'][0]['id']}/cancel", {})
    assert status == 409 and "done" in err["error"]["message"]


def held_after(oracle, answered: int) -> threading.Event:
    """`right` answers `answered` calls at once, then the next waits until the event returned is set (the answers
    themselves stay right)."""
    gate = threading.Event()
    oracle.script("right", [Reply(text=None) for _ in range(answered)] + [Reply(hold=gate, text=None)])
    return gate


def wait_for(http, rid: int, done: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if http("GET", f"/bench/suite/runs/{rid}")[2]["run"]["done"] >= done:
            return
        time.sleep(0.02)
    raise AssertionError(f"run {rid} did not reach {done} answers")


def test_cancel_stops_a_running_run_after_the_call_in_flight(oracle, make_service):
    in_flight = held_after(oracle, 1)
    http = Http(make_service().url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-*"})
    rid = d["runs"][0]["id"]
    wait_for(http, rid, 1)
    status, _, c = http("POST", f"/bench/suite/runs/{rid}/cancel", {})
    in_flight.set()
    assert status == 200
    done = wait_run(http, rid)
    assert done["run"]["status"] == "cancelled" and done["run"]["done"] < done["run"]["total"]


def test_a_run_cut_off_by_a_restart_is_interrupted_and_resumes_where_it_stopped(oracle, home):
    in_flight = held_after(oracle, 2)
    first = Service(home).start()
    http = Http(first.url)
    _, _, d = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-*"})
    rid = d["runs"][0]["id"]
    wait_for(http, rid, 2)
    first.stop()                                                          # with the third call in flight
    in_flight.set()
    oracle.reset()                                                        # fast again, and count afresh
    second = Service(home).start()
    try:
        http = Http(second.url)
        _, _, before = http("GET", f"/bench/suite/runs/{rid}")
        assert before["run"]["status"] == "interrupted" and before["run"]["error"] == "the service stopped"
        answered = before["run"]["done"]
        _, _, again = http("POST", "/bench/suite/runs", {"model": "right", "tasks": "t-*"})
        assert again["runs"][0]["id"] == rid                             # the same run, resumed
        done = wait_run(http, rid)
        assert done["run"]["status"] == "done" and done["run"]["done"] == 6
        asked = [q for q in oracle.requests if q.path.endswith("/chat/completions")]
        assert len(asked) == 6 - answered                                # only what was left
    finally:
        second.stop()


def test_run_owed_leaves_ad_hoc_and_retired_models_alone(oracle, home, make_service):
    models = json.loads((home / "config" / "models.json").read_text())
    models["models"]["silent"]["ad_hoc"] = True
    (home / "config" / "models.json").write_text(json.dumps(models))
    svc = make_service()
    svc.bench.suite.owe("silent")
    owed = svc.bench.suite.owe("right")
    played = svc.bench.suite.run_owed(max_items=1)
    assert [r["model"] for r in played] == ["right"] and played[0]["id"] == owed["id"]
    assert played[0]["status"] == "owed" and played[0]["done"] == 1
    _, _, runs = Http(svc.url)("GET", "/bench/suite/runs?model=silent")
    assert runs["runs"][0]["status"] == "owed" and runs["runs"][0]["done"] == 0
    assert not [q for q in oracle.requests if (q.body or {}).get("model") == "silent"]


def test_a_held_model_is_not_run_by_the_suite(oracle, home, make_service):
    """A free model that turned paid (the catalog holds it) is refused a run and skipped when owed."""
    models = json.loads((home / "config" / "models.json").read_text())
    models["models"]["paid"] = {"endpoint": "fake", "served": "right:free", "facts": {}}
    (home / "config" / "models.json").write_text(json.dumps(models))
    map_endpoints(home, {"fake": "some-hub"})             # a provider the catalog has no prices for
    svc = make_service()
    http = Http(svc.url)
    assert http("GET", "/bench/status")[2]["held"] == []
    models["models"]["paid"]["served"] = "right"          # it lost ':free'
    (home / "config" / "models.json").write_text(json.dumps(models))
    assert [h["model"] for h in http("GET", "/bench/status")[2]["held"]] == ["paid"]
    status, _, d = http("POST", "/bench/suite/runs", {"model": "paid", "tasks": "t-*"})
    assert status == 409 and d["error"]["code"] == "model_held" and "bench model confirm paid" in d["error"]["message"]
    svc.bench.suite.owe("paid")
    assert svc.bench.suite.run_owed() == []
    assert not [q for q in oracle.requests if (q.body or {}).get("model") == "right"]


def test_the_scheduler_suite_job_plays_owed_runs_within_its_call_budget(oracle, home, make_service):
    write(home, "settings.json", {"suite_gap_seconds": 0, "suite_job_calls": 4})
    svc = make_service(clock=FakeClock())
    right, eager = svc.bench.suite.owe("right"), svc.bench.suite.owe("eager")
    first = run_job(svc, "suite")                                  # the oldest owed run first, four calls
    assert (first["status"], first["calls"], first["models"]) == ("done", 4, 1)
    assert [(r["id"], r["status"], r["done"]) for r in first["detail"]["runs"]] == [(right["id"], "owed", 4)]
    assert "the rest owed to the next run" in first["outcome"] and "at most 4" in first["outcome"]
    write(home, "settings.json", {"suite_gap_seconds": 0, "suite_job_calls": 500})
    second = run_job(svc, "suite")
    runs = {r["model"]: r for r in Http(svc.url)("GET", "/bench/suite/runs")[2]["runs"]}
    assert runs["right"]["status"] == runs["eager"]["status"] == "done" and runs["eager"]["id"] == eager["id"]
    assert second["calls"] == runs["right"]["total"] - 4 + runs["eager"]["total"] and second["models"] == 2
    asked = [q for q in oracle.requests if q.path.endswith("/chat/completions")]
    assert len(asked) == first["calls"] + second["calls"]            # every call counted in the job's record
    assert run_job(svc, "suite")["outcome"] == "no suite run was owed"
    assert Http(svc.url)("GET", "/bench/suite/scores")[2]["scores"]["right"]["claims"]["score"] is not None


def test_with_require_keys_on_the_bench_s_own_suite_work_still_runs(oracle, home, make_service, capsys):
    """require_keys guards the gateway's clients; the suite asks through the panel in this process, so a full
    onboarding, the scheduler's suite job and `bench suite run` all get answers with no key and no admin token."""
    configure(home, {"fake": (oracle, "openai")}, {"eager": ("fake", "eager"), "silent": ("fake", "silent")})
    write(home, "settings.json", {"suite_gap_seconds": 0, "require_keys": True})
    svc = make_service(clock=FakeClock())
    http = Http(svc.url)
    status, _, refused = http("POST", "/v1/chat/completions", {"model": "eager", "messages": [
        {"role": "user", "content": "hi"}]})
    assert status == 401 and "gateway key" in refused["error"]["message"]         # keys are enforced
    _, _, d = http("POST", "/bench/onboard", {"models": ["right"], "mode": "full"})
    item = poll(lambda: (lambda i: i if i["state"] in ("done", "failed") else None)(
        http("GET", f"/bench/onboard/{d['items'][0]['id']}")[2]), 60)
    assert item["state"] == "done" and item["suite"].startswith("done: "), item
    played = http("GET", "/bench/suite/runs?model=right")[2]["runs"][0]
    assert played["status"] == "done" and played["failed"] == 0 and played["done"] == played["total"] > 0
    svc.bench.suite.owe("eager")
    job = run_job(svc, "suite")
    (owed,) = job["detail"]["runs"]
    assert job["status"] == "done" and owed["status"] == "done" and job["calls"] == owed["total"], job
    assert main(["suite", "run", "--model", "silent", "--tasks", "t-claim-*", "--url", svc.url]) == 0
    assert "silent" in capsys.readouterr().out
    runs = http("GET", "/bench/suite/runs?model=silent")[2]["runs"]
    assert runs[0]["status"] == "done" and runs[0]["failed"] == 0
    assert http("GET", "/bench/keys")[2]["keys"] == []                             # no key was made for it
    assert pending(svc.bench.db)["total"] == 0                 # the suite scores its own answers: none wait for a verdict


def chats(oracle) -> list:
    return [q for q in list(oracle.requests) if q.path.endswith("/chat/completions")]


def user_ask(svc, oracle, model: str) -> threading.Thread:
    """The user's own ask to `model`, started in a thread; returns once it has reached the upstream."""
    asked = threading.Thread(target=lambda: Http(svc.url)("POST", "/v1/chat/completions", {
        "model": model, "messages": [{"role": "user", "content": "hi"}]}))
    asked.start()
    poll(lambda: chats(oracle), 10, 0.01)
    return asked


def test_the_suite_job_is_paced_like_every_scheduled_job(oracle, home, make_service):
    """Its calls wait for the user's own asks on the endpoint, one at a time; a busy endpoint holds them back."""
    write(home, "settings.json", {"suite_gap_seconds": 0, "suite_job_calls": 2})
    svc = make_service(clock=FakeClock())
    seen = track(oracle)
    run = svc.bench.suite.owe("eager")
    oracle.script("right", [Reply(delay=0.6, text=None)])
    asked = user_ask(svc, oracle, "right")
    job = run_job(svc, "suite")
    asked.join(10)
    assert seen["most"] == 1 and job["calls"] == 2 and len(chats(oracle)) == 3
    write(home, "settings.json", {"suite_gap_seconds": 0, "suite_job_calls": 2, "scheduler_yield_seconds": 0.3})
    oracle.reset()
    answer = threading.Event()                            # the user's ask is out until the job has given up
    oracle.script("right", [Reply(hold=answer, text=None)])
    asked = user_ask(svc, oracle, "right")
    try:
        job = run_job(svc, "suite")
    finally:
        answer.set()
    asked.join(10)
    assert job["calls"] == 0 and len(chats(oracle)) == 1
    assert "the rest owed to the next run (not asked: its endpoint stayed busy with your asks for 0.3 s)" \
        in job["outcome"], job["outcome"]
    again = Http(svc.url)("GET", f"/bench/suite/runs/{run['id']}")[2]["run"]
    assert again["status"] == "owed" and again["done"] == 2            # nothing recorded for the call held back


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_whole_run_over_real_bugs_and_the_starter_claims_scores_review_and_claims_apart(home, tmp_path,
                                                                                         make_service, capsys):
    """A real-bug task built from a clone's history beside the starter pack's claims, against fakes: every model
    gets a review score and a claims score, each with its interval, and a full onboarding's suite step asks both."""
    repo, shas = fix_repo(tmp_path)
    write_task(history.from_commit(repo, "example/widgets", shas["fix"]), data_dir(home))
    known = list(load_all(home)[0].values())
    claims = [t for t in known if t.kind == "claim"]
    oracle = Oracle(known).start()
    try:
        configure(home, {"fake": (oracle, "openai")}, {"right": ("fake", "right"), "eager": ("fake", "eager"),
                                                       "silent": ("fake", "silent")})
        write(home, "settings.json", {"suite_gap_seconds": 0})
        svc = make_service()
        for model in ("right", "eager"):            # this real-bug task and the claims (shipped ones may join)
            assert main(["suite", "run", "--model", model, "--tasks", "rebench-example-*,claim-*", "--url",
                         svc.url]) == 0
        assert "right  100% (hits 1/1, false alarms 0/1)" in capsys.readouterr().out
        scores = Http(svc.url)("GET", "/bench/suite/scores")[2]["scores"]
        right, eager = scores["right"], scores["eager"]
        assert (right["review"]["bugs"], right["review"]["hits"], right["review"]["clean"]) == (1, 1, 1)
        assert right["claims"]["right"] == len(claims) and right["claims"]["score"] == 1.0
        assert eager["review"]["score"] == 0.5 and eager["review"]["false_alarms"] == 1
        assert eager["claims"]["right"] == sum(1 for t in claims if t.answer["truth"])
        for s in (right, eager):
            low, high = s["review"]["interval"]
            assert 0 <= low <= s["review"]["score"] <= high <= 1 and s["claims"]["interval"]
        onboarded = svc.bench.suite.run_for_model("silent")          # what a full onboarding's suite step calls
        bugs = [t for t in known if t.kind == "bug"]
        assert onboarded["total"] == 2 * len(bugs) + len(claims)
        assert onboarded["scores"]["review"]["unanswered"] == 2 * len(bugs)
    finally:
        oracle.stop()
