"""The dashboard's pages for the bench looking after itself, without a browser: the scheduler's section of Settings
and its run pages, speed, suite scores, retirement evidence and catalog facts on the model pages, the Suite page
and its forms, and the onboarding queue's suite step."""
from __future__ import annotations

import json
import re
import threading

import pytest

from benchwarmers.dashboard.render import secs, when
from tests.fakes import FakeOpenAI, Reply
from tests.helpers.dashboard import Session
from tests.helpers.data import configure, write
from tests.helpers.panel import wait_for
from tests.helpers.suite import Oracle, plant, wait_run
from tests.helpers.http import Http


@pytest.fixture
def oracle(home):
    """right, eager and silent, in the collection core; the suite's own four test tasks; no pauses."""
    oracle = Oracle(plant(home)).start()
    configure(home, {"fake": (oracle, "openai")},
              {"right": ("fake", "right"), "eager": ("fake", "eager"), "silent": ("fake", "silent")},
              {"core": {"members": ["right", "eager"], "explore": 0, "description": "review"}})
    write(home, "settings.json", {"suite_gap_seconds": 0, "scheduler_gap_seconds": 0})
    yield oracle
    oracle.stop()


@pytest.fixture
def s(oracle, make_service) -> Session:
    svc = make_service()
    session = Session(svc.url)
    session.service = svc
    return session


def roster_row(page: str, alias: str) -> str:
    """The Models page's table row of one model."""
    return next(row for row in page.split("<tr")[1:] if f'href="/models/{alias}"' in row)


def note(s: Session, path: str) -> str:
    flash = re.search(r'<div class="flash flash-(?:ok|error)"[^>]*>(.*?)</div>', s.get(path)[2])
    return flash.group(1) if flash else ""


# ---- the scheduler on Settings -----------------------------------------------------------------

def test_the_scheduler_section_switches_saves_only_changes_and_runs_now(s, home):
    d = s.json("/settings.json")["scheduler"]
    assert d["enabled"] is False and [j["name"] for j in d["jobs"]] == ["probe", "perf", "suite", "catalog",
                                                                               "compact"]
    page = s.get("/settings")[2]
    assert 'id="scheduler"' in page and "Switch the scheduler on" in page and 'form="run-probe"' in page
    assert s.form("/settings/scheduler", {"enabled": "on"})[1]["location"] == "/settings#scheduler"
    assert "The scheduler is on" in note(s, "/settings") and s.json("/settings.json")["scheduler"]["enabled"]
    before = {j["name"]: j for j in d["jobs"]}
    # the times are past 05:59, so never a job's random default (02:00 to 05:59): each is a change
    fields = [("shown", n) for n in before] + [("on", "perf"), ("on", "suite"),       # probe off, catalog still off
                                              ("at-probe", before["probe"]["at"]), ("at-suite", "06:45:00"),
                                              ("day-perf", "sun"), ("at-perf", "06:12"),
                                              ("at-catalog", before["catalog"]["at"]),
                                              ("on", "compact"), ("at-compact", before["compact"]["at"])]
    s.form("/settings/scheduler/jobs", fields)
    assert note(s, "/settings") == "Saved: perf at sun 06:12, probe off, suite at 06:45."
    saved = json.loads((home / "config" / "settings.json").read_text())["scheduler"]
    assert saved["enabled"] is True and saved["jobs"]["probe"]["on"] is False
    assert saved["jobs"]["perf"]["at"] == "sun 06:12" and saved["jobs"]["suite"]["at"] == "06:45"
    s.form("/settings/scheduler/jobs", fields)
    assert note(s, "/settings") == "Nothing changed."
    s.form("/settings/scheduler/jobs", [("shown", "probe"), ("at-probe", "25:00")])
    assert "is not a time" in note(s, "/settings")
    status, _, d = s.form("/settings/jobs/probe/run", {}, script=True)
    assert status == 200 and d["message"].startswith("Started probe (run ")
    s.service.bench.scheduler.settle()
    run = d["run"]["id"]
    page = s.get(f"/settings/jobs/{run}")[2]
    assert "probe run" in page and "Answered" in page and "right" in page and "probed 3 models" in page
    assert s.json(f"/settings/jobs/{run}.json")["run"]["detail"]["ok"] == ["eager", "right"]   # silent says nothing
    assert f'href="/settings/jobs/{run}"' in s.get("/settings")[2]
    assert s.get("/settings/jobs/999")[0] == 404
    status, _, d = s.form("/settings/jobs/nope/run", {}, script=True)
    assert status == 404 and "probe, perf" in d["error"]["message"]
    s.form("/settings/scheduler", {"enabled": "off"})
    assert "The scheduler is off" in note(s, "/settings") and not s.json("/settings.json")["scheduler"]["enabled"]


# ---- the model pages ---------------------------------------------------------------------------

def test_models_show_speed_and_suite_scores_and_the_model_page_its_evidence(s, oracle):
    s.form("/settings/jobs/perf/run", {})
    s.service.bench.scheduler.settle()
    _, _, d = s.form("/suite/runs", {"model": "right", "tasks": "t-*", "back": "/models/right"}, script=True)
    wait_run(Http(s.url), d["runs"][0]["id"])
    roster = {m["alias"]: m for m in s.json("/models.json")["models"]}
    assert roster["right"]["perf"]["ttft"] is not None and roster["right"]["suite"]["review"]["score"] == 1.0
    page = s.get("/models")[2]
    assert "review 100% <span class=\"muted\">of 4</span>" in page and "to first token" in page
    model = s.json("/models/right.json")["model"]
    assert [f["prompt"] for f in model["perf_history"]] == ["short", "long"]
    page = s.get("/models/right")[2]
    speed = page[page.index('id="speed"'):page.index("Latency per day")]
    assert '<svg class="chart"' in speed and "Seconds to the first token" in speed
    assert "<td data-label=\"Prompt\">long</td>" in speed                      # the numbers beside the charts
    verdicts = page[page.index("Your verdicts"):page.index("The suite&#x27;s scores")]
    suite = page[page.index("The suite&#x27;s scores"):page.index('id="speed"')]
    assert "100%" not in verdicts and "2 of 2 bugs found" in suite            # never mixed
    assert "Facts and where they come from" in page and "Source" in page
    assert 'action="/suite/runs"' in page and 'value="/models/right"' in page   # run the suite from here
    oracle.script("silent", [Reply.error(500), Reply.error(500)])
    s.form("/models/silent/probe", {})
    probed = s.json("/models.json")["models"]
    last = next(m["last_probe"] for m in probed if m["alias"] == "silent")
    row = roster_row(s.get("/models")[2], "silent")
    assert 'data-label="Last probe"><span class="chip chip-failed">failed</span>' in row
    assert f"({when(last['created'])})" in row and secs(last["seconds"]) in row
    assert "never probed" in roster_row(s.get("/models")[2], "eager")
    page = s.get("/models/silent")[2]
    evidence = page[page.index("Why the bench retired it"):page.index("Your verdicts")]
    assert "stopped answering" in evidence and evidence.count("<td data-label=\"HTTP\">500</td>") == 2
    assert "listed 3 models and still listed it" in evidence
    assert s.json("/models/silent.json")["model"]["retirement"]["evidence"]["probes"]


def test_the_model_page_saves_your_own_facts_and_roles_and_only_what_changed(s, home):
    page = s.get("/models/right")[2]
    assert 'action="/models/right/facts"' in page and 'action="/models/right/roles"' in page
    fields = {"context_window": "128000", "vision": "yes", "price_in": "0.15", "back": "/models/right#yours"}
    assert s.form("/models/right/facts", fields)[1]["location"] == "/models/right#yours"
    assert note(s, "/models/right") == "Saved your facts for right: context window 128,000, price in $0.15, " \
                                       "reads images yes."
    facts = s.json("/models/right.json")["model"]["catalog"]["facts"]
    assert facts["context_window"] == {"value": 128000, "source": "override"} and facts["vision"]["value"] is True
    saved = json.loads((home / "config" / "overrides.json").read_text())["models"]["right"]
    assert saved == {"context_window": 128000, "vision": True, "price_in": 0.15}
    page = s.get("/models/right")[2]
    assert 'name="context_window" type="number" step="1" min="1" value="128000"' in page
    s.form("/models/right/facts", fields)
    assert note(s, "/models/right") == "Nothing changed."
    s.form("/models/right/facts", {**fields, "context_window": "", "vision": "no"})
    assert note(s, "/models/right") == "Saved your facts for right: context window from the catalog again, reads " \
                                       "images no."
    s.form("/models/right/facts", {**fields, "max_output": "many"})
    assert "max_output must be a whole number above 0, not &#x27;many&#x27;" in note(s, "/models/right")
    assert "max_output" not in json.loads((home / "config" / "overrides.json").read_text())["models"]["right"]
    s.form("/models/right/facts", {"max_output": "4096"})                 # a field left out stays as it is
    assert note(s, "/models/right") == "Saved your facts for right: longest answer 4,096."
    saved = json.loads((home / "config" / "overrides.json").read_text())["models"]["right"]
    assert saved == {"vision": False, "price_in": 0.15, "max_output": 4096}
    s.form("/models/right/roles", [("roles", "code"), ("roles", "reasoning")])
    assert note(s, "/models/right") == "Roles of right: code, reasoning (set by you)."
    catalog = s.json("/models/right.json")["model"]["catalog"]
    assert catalog["roles"] == ["code", "reasoning"] and catalog["roles_set_by"] == "user"
    assert "Use the roles its facts give" in s.get("/models/right")[2]
    s.form("/models/right/roles", {})
    assert "non-empty list" in note(s, "/models/right")
    _, _, d = s.form("/models/right/roles", {"auto": "1"}, script=True)
    assert d["ok"] and d["roles_set_by"] != "user" and "(from its facts)" in d["message"]


# ---- the suite page ----------------------------------------------------------------------------

def test_the_suite_page_starts_follows_and_cancels_runs(s, oracle):
    out = threading.Event()                  # eager's answers wait until its run has been cancelled
    oracle.script("eager", Reply(hold=out))
    page = s.get("/suite")[2]
    assert '<option value="model:right">' in page and '<option value="collection:core">' in page
    assert 'src="/static/suite.js"' in page and "data-follow" not in page          # nothing moving: no polling
    assert 'name="target" value="collection:core"' in s.get("/collections/core")[2]   # its own button there too
    status, headers, _ = s.form("/suite/runs", {"target": "collection:core", "tasks": "t-*"})
    assert status == 303 and headers["location"] == "/suite#open"
    assert note(s, "/suite").startswith("Started the suite for right (run 1), eager (run 2)")
    d = s.json("/suite.json")
    assert "eager" in {r["model"] for r in d["open"]}                          # slow: still open
    page = s.get("/suite")[2]
    assert 'data-follow="/suite.json"' in page and 'data-run="2"' in page
    s.form("/suite/runs/2/cancel", {})
    assert "Cancelling run 2 (eager)" in note(s, "/suite")
    out.set()
    for rid in (1, 2):                       # one run at a time: right's may still be going when eager's is cancelled
        wait_run(Http(s.url), rid)
    d = s.json("/suite.json")
    assert d["open"] == [] and {r["status"] for r in d["recent"]} == {"done", "cancelled"}
    assert d["scores"]["right"]["review"]["score"] == 1.0
    page = s.get("/suite/runs/1")[2]
    assert "Suite run 1: right" in page and page.count("<tr><td") == 6 and "data-follow" not in page
    for fields, words in (({"target": "model:nobody"}, "nobody"), ({"target": "nothing"}, "Choose a model"),
                          ({"target": "model:right", "tasks": "zzz-*"}, "No ready suite task")):
        s.form("/suite/runs", fields)
        assert words in note(s, "/suite"), fields
    status, _, d = s.form("/suite/runs/1/cancel", {}, script=True)
    assert status == 409 and "only open runs" in d["error"]["message"]


def test_drafts_from_verdicts_are_accepted_or_rejected_on_the_suite_page(s, home):
    http = Http(s.url)
    asked = http("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "Review:\n```py\nx = 1\n```"}]})[2]["bench"]
    http("POST", "/bench/verdict", {"call": asked["seats"][0]["call"], "useful": True, "real": ["x is one"],
                                    "false": ["x is two"]})
    assert "No drafts waiting" in s.get("/suite")[2]
    s.form("/suite/mine", {})
    assert note(s, "/suite") == "Drafted 2 claim tasks from your verdicts."
    drafts = {t["answer"]["claim"]: t for t in s.json("/suite.json")["drafts"]}
    assert set(drafts) == {"x is one", "x is two"} and drafts["x is one"]["answer"]["truth"] is True
    s.form(f"/suite/tasks/{drafts['x is one']['id']}/accept", {})
    assert note(s, "/suite").startswith("Accepted mined-")
    s.form(f"/suite/tasks/{drafts['x is two']['id']}/reject", {})
    assert note(s, "/suite").startswith("Rejected mined-")
    assert s.json("/suite.json")["drafts"] == []
    assert http("GET", f"/bench/suite/tasks/{drafts['x is one']['id']}")[2]["task"]["status"] == "ready"
    s.form("/suite/mine", {})
    assert note(s, "/suite") == "Drafted 0 claim tasks from your verdicts."       # a rejected one stays gone
    s.form("/suite/tasks/claim-record-wilson-no-trials/reject", {})
    assert "starter task" in note(s, "/suite")


# ---- onboarding in full, from the dashboard ----------------------------------------------------

def test_full_onboarding_from_the_dashboard_shows_the_suite_step(home, make_service):
    fake = FakeOpenAI().start().set_models(["m-new"])
    try:
        configure(home, {"fake": (fake, "openai")}, {})
        write(home, "settings.json", {"suite_gap_seconds": 0.2})
        s = Session(make_service().url)
        page = s.get("/onboard")[2]
        assert 'name="mode" value="full"' in page and 'value="quick" checked' in page
        s.form("/onboard", [("pick", "fake|m-new"), ("mode", "full")])
        seen = wait_for(lambda: (lambda c: c if c["item"] and c["item"]["state"] == "suite" and c["item"]["progress"]
                                 else None)(s.json("/onboard.json")["candidates"][0]), 20)
        assert seen["item"]["mode"] == "full"
        assert "running the suite" in s.get("/onboard")[2] and 'data-state="suite"' in s.get("/onboard")[2]
        done = wait_for(lambda: (lambda c: c if c["item"]["state"] == "done" else None)(
            s.json("/onboard.json")["candidates"][0]), 60)
        assert done["item"]["suite"].startswith("done:")
    finally:
        fake.stop()
