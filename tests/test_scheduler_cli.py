"""bench settings scheduler and bench jobs, run in-process against a real service and a fake upstream."""
from __future__ import annotations

import json
from datetime import datetime

import pytest

from benchwarmers.cli.main import main
from benchwarmers.cli.output import when
from tests.fakes.openai import FakeOpenAI
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one"])
    yield f
    f.stop()


@pytest.fixture
def svc(home, fake, make_service):
    configure(home, {"oa": (fake, "openai")}, {"uno": ("oa", "m-one")})
    return make_service(clock=FakeClock())


@pytest.fixture
def bench(svc, capsys):
    def run(*argv):
        code = main(["--url", svc.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_show_switch_and_choose_jobs(bench):
    code, out, _ = bench("settings", "scheduler")
    assert code == 0 and "Scheduler: off" in out and "bench settings scheduler on" in out
    assert "suite" in out and "not available" not in out
    code, out, _ = bench("settings", "scheduler", "on")
    assert code == 0 and "Scheduler: on" in out and "UTC+01:00" in out
    code, out, _ = bench("settings", "scheduler", "jobs", "--off", "perf", "--at", "probe=04:10")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines() if line.split() and line.split()[0] in ("probe", "perf")}
    next_probe = when(FakeClock().epoch(datetime(2025, 3, 4, 4, 10)))      # shown in the CLI's own local time
    assert "daily 04:10" in rows["probe"] and " off " in rows["perf"] and next_probe in rows["probe"]
    code, out, _ = bench("settings", "scheduler", "run", "--on", "perf", "--at", "perf=sun 05:30", "--json")
    perf = {j["name"]: j for j in json.loads(out)["jobs"]}["perf"]
    assert code == 0 and perf["on"] is True and perf["at"] == "sun 05:30"
    code, out, _ = bench("settings", "scheduler", "off", "--json")
    assert code == 0 and json.loads(out)["enabled"] is False


@pytest.mark.parametrize("argv, code, words", [
    (["settings", "scheduler", "jobs"], 2, "Say what to change"),
    (["settings", "scheduler", "on", "--off", "perf"], 2, "go with `jobs`"),
    (["settings", "scheduler", "jobs", "--at", "probe"], 2, "JOB=TIME"),
    (["settings", "scheduler", "run", "--on", "perf", "--off", "perf"], 2, "pick one"),
    (["settings", "scheduler", "run", "--at", "probe=noon"], 1, "'HH:MM'"),
    (["settings", "scheduler", "run", "--at", "suite=sun 05:00"], 1, "'HH:MM'"),
    (["settings", "scheduler", "maybe"], 2, "invalid choice"),
    (["jobs", "run", "nope"], 1, "no job named"),
    (["jobs", "show", "404"], 1, "No job run 404"),
])
def test_bad_input_says_what_to_fix(bench, argv, code, words):
    got, out, err = bench(*argv)
    assert got == code and words in err and "Traceback" not in err, (out, err)


def test_jobs_run_now_and_list(bench, svc, fake):
    code, out, _ = bench("jobs")
    assert code == 0 and out == ""
    code, out, err = bench("jobs", "run", "probe", "--wait")
    assert code == 0 and "probe (now), done" in out and "1 model, 2 calls: probed 1 model: 1 answered" in out
    code, out, _ = bench("jobs", "run", "probe", "--json")
    run = json.loads(out)["run"]
    assert code == 0 and run["status"] == "running" and run["trigger"] == "now"
    svc.bench.scheduler.settle()
    code, out, _ = bench("jobs", "--name", "probe")
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:4] == ["ID", "JOB", "TRIGGER", "STATUS"] and len(lines) == 3
    code, out, _ = bench("jobs", "--json", "--limit", "1")
    assert code == 0 and [r["id"] for r in json.loads(out)["runs"]] == [run["id"]]
    code, out, _ = bench("jobs", "show", str(run["id"]))
    assert code == 0 and f"Run {run['id']}: probe" in out


@pytest.mark.parametrize("argv", [["settings", "--help"], ["settings", "scheduler", "--help"], ["jobs", "--help"],
                                  ["jobs", "run", "--help"], ["jobs", "show", "--help"]])
def test_every_command_has_help_with_an_example(argv, capsys):
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "example" in out and "--json" in out



@pytest.mark.parametrize("argv, names", [
    (["settings", "scheduler", "--help"], ("daily probe", "daily suite job", "catalog refresh", "speed test")),
    (["jobs", "run", "--help"], ("probe", "perf", "suite", "catalog")),
])
def test_the_help_names_every_job(capsys, argv, names):
    assert main(argv) == 0
    words = " ".join(capsys.readouterr().out.split())
    assert all(name in words for name in names), words
