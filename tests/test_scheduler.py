"""The scheduler on a clock the tests control: off on a fresh install, runs at its time, catches up once, leased."""
from __future__ import annotations

import json
import threading
import time
from datetime import datetime

import pytest

from benchwarmers.errors import BadRequest
from benchwarmers.scheduler import Job, config as sched_config
from benchwarmers.store import Config
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure, write
from tests.helpers.http import Http

TUESDAY = datetime(2025, 3, 4, 4, 30)


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", "m-two"])
    yield f
    f.stop()


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def bench(home, fake):
    configure(home, {"oa": (fake, "openai")}, {"uno": ("oa", "m-one"), "dos": ("oa", "m-two")})
    return home


@pytest.fixture
def svc(bench, clock, make_service):
    return make_service(clock=clock)


def chats(fake) -> int:
    return sum(1 for r in list(fake.requests) if r.path.endswith("/chat/completions"))


def runs(svc, name: str = "probe") -> list[dict]:
    svc.bench.db.sync()
    return [dict(r) for r in svc.bench.db.query("SELECT * FROM jobs WHERE name = ? ORDER BY id", (name,))]


def enable(svc, probe: str = "04:30", perf: bool = False, suite: bool = False, compact: bool = False,
           **extra) -> dict:
    """The scheduler on with the probe at `probe`; perf, suite and compact off unless asked for."""
    body = {"enabled": True, "jobs": {"probe": {"on": True, "at": probe}, "perf": {"on": perf}, "suite": {"on": suite},
                                      "compact": {"on": compact}}, **extra}
    status, _, d = Http(svc.url)("POST", "/bench/scheduler", body)
    assert status == 200, d
    return d


# ---- off until enabled ---------------------------------------------------------------------------

def test_a_fresh_install_is_off_and_calls_nothing(svc, fake, clock, home):
    before = (home / "config" / "settings.json").read_text(encoding="utf-8")
    for _ in range(3):
        clock.advance(days=1)
        assert svc.bench.scheduler.settle() == []
    assert runs(svc) == [] and fake.requests == []
    assert (home / "config" / "settings.json").read_text(encoding="utf-8") == before   # nothing written either
    status, _, d = Http(svc.url)("GET", "/bench/scheduler")
    assert status == 200 and d["enabled"] is False and d["problems"] == []
    jobs = {j["name"]: j for j in d["jobs"]}
    assert jobs["probe"]["on"] is True and jobs["probe"]["next"] is None and jobs["probe"]["period"] == "daily"
    hour, minute = map(int, jobs["probe"]["at"].split(":"))
    assert 2 <= hour < 6 and 0 <= minute < 60                        # a random early-morning minute...
    day, _ = jobs["perf"]["at"].split()
    assert day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun") and jobs["perf"]["period"] == "weekly"
    saved = json.loads((home / "config" / "settings.json").read_text(encoding="utf-8"))["scheduler"]["jobs"]
    assert saved["probe"]["at"] == jobs["probe"]["at"]                # ...chosen once and saved
    assert Http(svc.url)("GET", "/bench/scheduler")[2]["jobs"] == d["jobs"]
    assert jobs["suite"]["available"] is True and jobs["suite"]["on"] is True and jobs["suite"]["period"] == "daily"
    assert "owe" in jobs["suite"]["what"] and saved["suite"]["at"] == jobs["suite"]["at"]
    assert jobs["catalog"]["available"] is True and jobs["catalog"]["on"] is False   # reads hosts you did not add


def test_it_runs_at_the_set_time_once_per_window(svc, fake, clock):
    d = enable(svc)
    assert d["enabled"] is True and d["jobs"][0]["next"] == clock.epoch(TUESDAY)
    clock.to(TUESDAY.replace(minute=29))
    assert svc.bench.scheduler.settle() == [] and runs(svc) == []
    clock.to(TUESDAY.replace(minute=31))
    svc.bench.scheduler.settle()
    [run] = runs(svc)
    assert (run["trigger"], run["status"], run["due"]) == ("schedule", "done", clock.epoch(TUESDAY))
    assert run["models"] == 2 and run["calls"] == 3 and chats(fake) == 2      # its model list, then two probes
    assert run["outcome"] == "probed 2 models: 2 answered"
    kinds = [r["kind"] for r in svc.bench.db.query("SELECT kind FROM probes")]
    assert kinds == ["probe", "probe"]
    for hours in (1, 5, 20):
        clock.to(TUESDAY).advance(hours=hours)
        svc.bench.scheduler.settle()
    assert len(runs(svc)) == 1 and chats(fake) == 2                  # never twice for one window
    clock.to(TUESDAY).advance(days=1, minutes=1)
    svc.bench.scheduler.settle()
    assert [r["due"] for r in runs(svc)] == [clock.epoch(TUESDAY), clock.epoch(TUESDAY.replace(day=5))]


def test_nothing_runs_while_off_and_a_job_counts_from_when_it_is_back_on(svc, fake, clock):
    enable(svc)
    assert Http(svc.url)("POST", "/bench/scheduler", {"enabled": False})[2]["enabled"] is False
    clock.to(TUESDAY).advance(minutes=1)
    svc.bench.scheduler.settle()
    clock.advance(days=2)
    svc.bench.scheduler.settle()
    assert runs(svc) == [] and chats(fake) == 0
    enable(svc, perf=False)                                          # Thursday 04:31: Thursday's time has passed
    svc.bench.scheduler.settle()
    assert runs(svc) == []
    Http(svc.url)("POST", "/bench/scheduler", {"jobs": {"probe": {"on": False}}})
    clock.advance(days=1)
    svc.bench.scheduler.settle()
    assert runs(svc) == []                                           # the job alone off: skipped too
    Http(svc.url)("POST", "/bench/scheduler", {"jobs": {"probe": {"on": True}}})
    clock.advance(days=1)
    svc.bench.scheduler.settle()
    [run] = runs(svc)
    assert run["trigger"] == "schedule" and run["due"] == clock.epoch(datetime(2025, 3, 8, 4, 30))


def test_a_miss_is_caught_up_once_after_3_days_and_not_after_8(bench, fake, clock, make_service):
    first = make_service(clock=clock)
    enable(first)
    clock.to(TUESDAY).advance(minutes=1)
    first.bench.scheduler.settle()
    first.stop()
    clock.to(datetime(2025, 3, 7, 12, 0))                            # down Wednesday to Friday noon
    second = make_service(clock=clock)
    second.bench.scheduler.settle()
    second.bench.scheduler.settle()
    friday = clock.epoch(datetime(2025, 3, 7, 4, 30))
    assert [(r["trigger"], r["due"]) for r in runs(second)][1:] == [("catch-up", friday)]
    assert chats(fake) == 4
    second.stop()
    clock.advance(days=8)                                            # down 8 days: the first miss is over a week old
    third = make_service(clock=clock)
    third.bench.scheduler.settle()
    third.bench.scheduler.settle()
    skipped = runs(third)[-1]
    assert skipped["status"] == "skipped" and "more than 7 days ago" in skipped["outcome"] and chats(fake) == 4
    assert skipped["due"] == clock.epoch(datetime(2025, 3, 15, 4, 30))
    clock.to(datetime(2025, 3, 16, 4, 31))                           # it waits for its next time
    third.bench.scheduler.settle()
    assert (runs(third)[-1]["trigger"], runs(third)[-1]["status"]) == ("schedule", "done") and chats(fake) == 6


def test_two_services_on_one_folder_never_run_a_job_twice(bench, fake, clock, make_service):
    one, two = make_service(clock=clock), make_service(clock=clock)
    enable(one)
    clock.to(TUESDAY).advance(minutes=1)
    threads = [threading.Thread(target=s.bench.scheduler.settle) for s in (one, two, one, two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    one.bench.scheduler.settle()
    two.bench.scheduler.settle()
    assert len(runs(one)) == 1 and chats(fake) == 2
    probing = threading.Event()                                         # the probe's answer waits for the test
    fake.script("m-one", Reply(text="ready", hold=probing))
    status, _, d = Http(one.url)("POST", "/bench/jobs/probe/run")
    assert status == 202 and d["run"]["status"] == "running" and d["run"]["trigger"] == "now"
    status, _, busy = Http(two.url)("POST", "/bench/jobs/probe/run")   # the lease is the folder's, not the service's
    probing.set()
    assert status == 409 and f"run {d['run']['id']}" in busy["error"]["message"]
    one.bench.scheduler.settle()
    assert Http(two.url)("GET", f"/bench/jobs/{d['run']['id']}")[2]["run"]["status"] == "done"
    assert Http(two.url)("POST", "/bench/jobs/probe/run")[0] == 202
    two.bench.scheduler.settle()


def test_a_run_whose_service_died_is_marked_interrupted(svc, clock):
    db = svc.bench.db
    old = db.call(lambda c: c.execute("INSERT INTO jobs (name, started, status, trigger) VALUES "
                                      "('probe', ?, 'running', 'now')", (clock.now() - 7200,)).lastrowid)
    db.call(lambda c: c.execute("INSERT INTO leases (name, holder, run, until) VALUES ('probe', 'gone:1', ?, ?)",
                                (old, clock.now() - 60)))
    status, _, d = Http(svc.url)("POST", "/bench/jobs/probe/run")
    assert status == 202 and d["run"]["id"] != old
    svc.bench.scheduler.settle()
    assert Http(svc.url)("GET", f"/bench/jobs/{old}")[2]["run"]["status"] == "interrupted"


# ---- the API -------------------------------------------------------------------------------------

def test_run_now_and_the_runs_list(svc, fake):
    http = Http(svc.url)
    status, _, d = http("POST", "/bench/jobs/probe/run")             # the user asked: runs while the scheduler is off
    assert status == 202 and d["run"]["name"] == "probe"
    svc.bench.scheduler.settle()
    run = http("GET", f"/bench/jobs/{d['run']['id']}")[2]["run"]
    assert run["status"] == "done" and run["finished"] >= run["started"] and run["detail"]["ok"] == ["dos", "uno"]
    _, _, listed = http("GET", "/bench/jobs?limit=5&name=probe")
    assert [r["id"] for r in listed["runs"]] == [run["id"]] and listed["name"] == "probe"
    assert http("GET", "/bench/scheduler")[2]["jobs"][0]["last_run"]["id"] == run["id"]


@pytest.mark.parametrize("method, path, body, status, words", [
    ("POST", "/bench/jobs/nope/run", None, 404, "probe, perf"),
    ("GET", "/bench/jobs/999", None, 404, "bench jobs"),
    ("GET", "/bench/jobs/abc", None, 404, "numbers"),
    ("GET", "/bench/jobs?limit=0", None, 400, "from 1"),
    ("POST", "/bench/scheduler", {"enabled": "yes"}, 400, "true or false"),
    ("POST", "/bench/scheduler", {"enable": True}, 400, "Unknown field"),
    ("POST", "/bench/scheduler", {"jobs": {"probe": {"at": "25:00"}}}, 400, "'HH:MM'"),
    ("POST", "/bench/scheduler", {"jobs": {"perf": {"at": "05:00"}}}, 400, "'DAY HH:MM'"),
    ("POST", "/bench/scheduler", {"jobs": {"suite": {"at": "sun 05:00"}}}, 400, "'HH:MM'"),
    ("POST", "/bench/scheduler", {"jobs": {"probes": {"on": True}}}, 400, "no job named"),
    ("POST", "/bench/scheduler", {"jobs": {"probe": {"on": 1}}}, 400, "true or false"),
    ("POST", "/bench/scheduler", {"jobs": ["probe"]}, 400, "object"),
])
def test_bad_input_is_a_clear_4xx(svc, method, path, body, status, words):
    got, _, d = Http(svc.url)(method, path, body)
    assert got == status and words in d["error"]["message"], d


def test_a_job_without_a_function_is_listed_as_not_available(home):
    jobs = {"later": Job("later", False, "a job for a later version", why_not="it needs a later version")}
    assert sched_config.load(Config(home), jobs).jobs == {}
    with pytest.raises(BadRequest, match="not available: it needs a later version"):
        sched_config.update(Config(home), jobs, {"jobs": {"later": {"on": True}}})


def test_times_and_switches_are_saved_in_settings_json(svc, home):
    d = enable(svc, probe="3:05", perf=True)
    assert Http(svc.url)("POST", "/bench/scheduler", {"jobs": {"perf": {"at": "Sunday 05:40"}}})[0] == 200
    saved = json.loads((home / "config" / "settings.json").read_text(encoding="utf-8"))["scheduler"]
    assert saved["enabled"] is True and saved["jobs"]["probe"] == {"at": "03:05", "on": True}
    assert saved["jobs"]["perf"] == {"at": "sun 05:40", "on": True} and d["timezone"] == "UTC+01:00"


def test_a_bad_hand_edit_is_reported_and_never_overwritten(svc, home):
    write(home, "settings.json", {"seat_timeout": 9, "scheduler": {"enabled": "yes", "jobs": {"probe": {"at": "4pm"}}}})
    d = Http(svc.url)("GET", "/bench/scheduler")[2]
    assert d["enabled"] is False and len(d["problems"]) == 2 and "'4pm' is not a time" in d["problems"][1]
    assert d["jobs"][0]["at"] == "04:00"
    saved = json.loads((home / "config" / "settings.json").read_text(encoding="utf-8"))
    assert saved["scheduler"]["jobs"]["probe"] == {"at": "4pm"} and saved["seat_timeout"] == 9
    (home / "config" / "settings.json").write_text("{broken", encoding="utf-8")
    d = Http(svc.url)("GET", "/bench/scheduler")[2]
    assert d["enabled"] is False and "settings.json:1:" in d["problems"][0]
    assert svc.bench.scheduler.settle() == []


# ---- pacing --------------------------------------------------------------------------------------

def track(fake) -> dict:
    """Count the fake's requests in progress; `most` is the largest number at once. A request is over once its
    answer starts going out: the client may have all of it (and send its next request) before the fake's handler
    returns, so counting until then would see overlaps that never happened."""
    seen, lock, route = {"now": 0, "most": 0}, threading.Lock(), fake.route

    def tracked(h, rec):
        with lock:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
        answering, over = h.send_response, []

        def end() -> None:
            if not over:
                over.append(True)
                with lock:
                    seen["now"] -= 1

        def ends(*args, **kw):
            end()
            answering(*args, **kw)
        h.send_response = ends
        try:
            route(h, rec)
        finally:
            end()
    fake.route = tracked
    return seen


def test_one_call_at_a_time_per_endpoint_with_a_gap(home, clock, make_service):
    fakes = [FakeOpenAI().start().set_models(["m-a", "m-b", "m-c"]) for _ in range(2)]
    try:
        configure(home, {"e0": (fakes[0], "openai"), "e1": (fakes[1], "openai")},
                  {f"{e}{m}": (e, f"m-{m}") for e in ("e0", "e1") for m in "abc"})
        write(home, "settings.json", {"scheduler_gap_seconds": 3})
        seen = [track(f) for f in fakes]
        for f in fakes:
            f.script("*", Reply(text="ready", delay=0.05))
        svc = make_service(clock=clock)
        Http(svc.url)("POST", "/bench/jobs/probe/run")
        svc.bench.scheduler.settle()
        assert [s["most"] for s in seen] == [1, 1] and [len(f.requests) for f in fakes] == [4, 4]
        assert len(clock.slept) >= 3 and all(0 < s <= 3 for s in clock.slept)   # the gap, on the clock
        assert runs(svc)[0]["calls"] == 8
    finally:
        for f in fakes:
            f.stop()


def ask_in_flight(svc, fake) -> threading.Thread:
    """The user's own ask to `uno`, started in a thread; returns once it has reached the upstream."""
    asked = threading.Thread(target=lambda: Http(svc.url)("POST", "/v1/chat/completions", {
        "model": "uno", "messages": [{"role": "user", "content": "hi"}]}))
    asked.start()
    deadline = time.monotonic() + 30
    while not chats(fake) and time.monotonic() < deadline:
        time.sleep(0.01)
    return asked


def test_scheduled_calls_wait_for_the_users_own_asks(svc, fake):
    seen = track(fake)
    fake.script("m-one", Reply(text="ask answered", delay=0.6))
    asked = ask_in_flight(svc, fake)
    fake.script("m-one", Reply(text="ready"))
    Http(svc.url)("POST", "/bench/jobs/probe/run")
    svc.bench.scheduler.settle()
    asked.join(10)
    assert seen["most"] == 1                 # the probe's calls came only once the ask was answered
    assert runs(svc)[0]["status"] == "done" and chats(fake) == 3


def test_a_scheduled_call_gives_up_on_a_busy_endpoint_until_the_next_run(svc, fake, home):
    write(home, "settings.json", {"scheduler_yield_seconds": 0.3})
    answer = threading.Event()                       # the user's ask is out until the probe job has given up
    fake.script("m-one", Reply(text="slow ask", hold=answer))
    asked = ask_in_flight(svc, fake)
    try:
        Http(svc.url)("POST", "/bench/jobs/probe/run")
        svc.bench.scheduler.settle()
    finally:
        answer.set()
    asked.join(10)
    run = runs(svc)[0]
    assert run["calls"] == 0 and chats(fake) == 1
    skipped = json.loads(run["detail"])["skipped"]
    assert [s["model"] for s in skipped] == ["dos", "uno"] and "busy with your asks for 0.3 s" in skipped[0]["why"]
    assert run["outcome"] == "probed 0 models: 0 answered, 2 skipped"


# ---- the thread, in either role --------------------------------------------------------------------

@pytest.mark.parametrize("role", ["dashboard", "gateway"])
def test_the_thread_ticks_on_its_own_in_either_role(role, bench, fake, clock, make_service):
    svc = make_service(clock=clock, role=role)
    assert any(t.name == "bench-scheduler" and t.is_alive() for t in threading.enumerate())
    enable(svc)
    clock.to(TUESDAY).advance(minutes=1)
    deadline = time.monotonic() + 20
    while not [r for r in runs(svc) if r["status"] == "done"] and time.monotonic() < deadline:
        time.sleep(0.05)                     # no explicit tick: the service's own thread must start it
    assert runs(svc)[0]["status"] == "done" and chats(fake) == 2
    svc.stop()
    assert not any(t.name == "bench-scheduler" and t.is_alive() for t in threading.enumerate())
