"""Repository confinement: suite seeding reads only regular files inside the repository it was given (a link out of
it, to a private file or /proc, is refused; a FIFO never blocks it), mining writes only inside the data folder (a
`..` file name is refused; a claim that cannot be written is skipped, not fatal), and seeding is a job with caps
and a deadline that a shutdown stops at once, whatever it is doing."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from benchwarmers.suite import mine, seed
from benchwarmers.suite.tasks import TaskError, load_all
from tests.conftest import stopped
from tests.fakes import FakeOpenAI
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.helpers.suite import seed_job
from tests.test_server import drain, serve_env, start_serve, wait_for_url
from tests.test_suite_seed import CALC as CODE

SECRET = "PRIVATE_MARKER_4242"
PRIVATE = f'''def leak(token):
    if token == "{SECRET}":
        return True
    return False
'''


def link(target: Path, at: Path) -> None:
    try:
        at.symlink_to(target, target_is_directory=target.is_dir())
    except OSError:
        pytest.skip("this machine does not let this user make symbolic links")


def repo_with(tmp_path: Path, home: Path, **entry) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "app.py").write_text(CODE)
    write(home, "repos.json", {"repos": {"repo": {"path": str(folder), "tests": False, **entry}}})
    return folder


def test_seeding_never_follows_a_link_out_of_the_repository(tmp_path, home):
    outside = tmp_path / "private"
    (outside / "lib").mkdir(parents=True)
    (outside / "secret.py").write_text(PRIVATE)
    (outside / "lib" / "more.py").write_text(PRIVATE)
    folder = repo_with(tmp_path, home)
    link(outside / "secret.py", folder / "link.py")
    link(outside / "lib", folder / "lib")
    if Path("/proc/self/environ").exists():
        link(Path("/proc/self/environ"), folder / "environ.py")
    done = seed.seed_repo(home, "repo", count=500)
    assert {w["path"] for w in done["written"]} == {"app.py"}
    assert "link.py: a link to a file outside the repository" in done["refused"]
    if (folder / "environ.py").exists():
        assert "environ.py: a link to a file outside the repository" in done["refused"]
    tasks = load_all(home)[0]
    assert not [t.id for t in tasks.values() if any(SECRET in code for code in list(t.files.values())
                                                     + list(t.control.values()))]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_or_other_special_file_is_skipped_not_read(tmp_path, home):
    folder = repo_with(tmp_path, home)
    os.mkfifo(folder / "pipe.py")               # reading it would block until a writer came: forever
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(seed.seed_repo(home, "repo", count=3)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "seeding blocked on the FIFO"
    assert "pipe.py: not a regular file" in result["refused"] and result["written"]


def test_a_link_inside_the_repository_is_read_as_the_file_it_leads_to(tmp_path, home):
    folder = repo_with(tmp_path, home)
    (folder / "pkg").mkdir()
    link(folder / "app.py", folder / "pkg" / "alias.py")
    done = seed.seed_repo(home, "repo", count=500)
    assert {w["path"] for w in done["written"]} == {"app.py", "pkg/alias.py"} and not done["refused"]


@pytest.fixture
def asked(home, service):
    """A fake model and a function that asks it one prompt and records a verdict with one real claim."""
    fake = FakeOpenAI().start()
    configure(home, {"oa": (fake, "openai")}, {"m": ("oa", "m")})
    http = Http(service.url)

    def ask(prompt: str, claim: str) -> str:
        _, _, reply = http("POST", "/v1/chat/completions", {"model": "m", "messages": [
            {"role": "user", "content": prompt}]})
        call = reply["bench"]["seats"][0]["call"]
        assert http("POST", "/bench/verdict", {"call": call, "useful": True, "real": [claim]})[0] == 200
        return call
    yield http, ask
    fake.stop()


@pytest.mark.parametrize("name", ["..", ".", "a/..", "..\\\\..", "/", "x" * 300])
def test_a_file_name_that_names_no_file_never_stops_mining(asked, home, name):
    http, ask = asked
    ask(f'Look:\n\n<file name="{name}">\n{CODE.rstrip()}\n</file>', "clamp keeps x within bounds")
    status, _, d = http("POST", "/bench/suite/mine", {})
    assert status == 200 and len(d["drafted"]) == 1, d
    (task,) = [t for t in load_all(home)[0].values() if t.source.get("kind") == "mined"]
    ((path, code),) = task.files.items()
    assert path.strip(".") and "/" not in path and len(path) <= 100 and code == CODE
    assert (home / "suite" / "tasks" / task.id / "code" / path).resolve().is_relative_to(home.resolve())
    assert http("POST", "/bench/suite/mine", {})[0] == 200                       # and every later run works


def test_a_claim_that_cannot_be_written_is_skipped_and_not_tried_again(asked, home, monkeypatch):
    http, ask = asked
    ask(f'<file name="a.py">\n{CODE.rstrip()}\n</file>', "the bad one")
    ask(f'<file name="b.py">\n{CODE.rstrip()}\n</file>', "the good one")
    real_write = mine.write

    def refuse_one(task, root):
        if task.answer["claim"] == "the bad one":
            raise TaskError(f"task {task.id}: refused for this test.")
        return real_write(task, root)
    monkeypatch.setattr(mine, "write", refuse_one)
    status, _, d = http("POST", "/bench/suite/mine", {})
    assert status == 200 and [t["claim"] for t in d["drafted"]] == ["the good one"]
    assert [s["claim"] for s in d["skipped"]] == ["the bad one"] and "refused for this test" in d["skipped"][0]["why"]
    again = http("POST", "/bench/suite/mine", {})[2]
    assert again["drafted"] == [] and again["skipped"] == []                     # recorded as seen


def big_file(folder: Path, functions: int = 3000) -> None:
    (folder / "pkg").mkdir(parents=True, exist_ok=True)
    (folder / "pkg" / "big.py").write_text("".join(f"def f{i}(a, b=3):\n    if a > b:\n        return a - {i % 7}\n"
                                                   "    return b + a\n\n\n" for i in range(functions)))


def test_a_file_of_3000_functions_is_read_within_the_caps(tmp_path, home):
    folder = repo_with(tmp_path, home)
    big_file(folder)
    done = seed.seed_repo(home, "repo", count=5)
    assert f"pkg/big.py: {seed.MAX_FUNCTIONS_PER_FILE} of its 3000 functions read" in done["capped"]
    assert done["candidates"] <= seed.MAX_MUTANTS_PER_FILE + 50 and done["made"] == 5


def slow_tests(folder: Path, home: Path, pid_file: Path) -> None:
    """Tests that write their process id, then take a minute."""
    (folder / "tests").mkdir()
    (folder / "tests" / "test_app.py").write_text("def test_nothing():\n    pass\n")
    command = [sys.executable, "-c", f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
               "time.sleep(60)"]
    write(home, "repos.json", {"repos": {"repo": {"path": str(folder), "test": command, "test_seconds": 120}}})


def test_seeding_is_a_job_that_stops_at_its_deadline(tmp_path, home, make_service):
    slow_tests(repo_with(tmp_path, home), home, tmp_path / "pid")
    http = Http(make_service().url)
    job = seed_job(http, {"repo": "repo", "count": 3, "deadline_seconds": 1}, timeout=30)
    assert job["status"] == "stopped" and "deadline" in job["error"] and job["result"]["stopped"] == "past the deadline"
    assert http("POST", "/bench/suite/seed", {"repo": "repo", "deadline_seconds": 99999})[0] == 400


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def test_a_shutdown_stops_a_seeding_job_and_kills_its_tests(tmp_path, home, make_service):
    pid_file = tmp_path / "pid"
    slow_tests(repo_with(tmp_path, home), home, pid_file)
    svc = make_service()
    http = Http(svc.url)
    assert http("POST", "/bench/suite/seed", {"repo": "repo", "count": 3})[0] == 202
    wait_for(lambda: pid_file.exists() and pid_file.read_text(), timeout=60)
    assert http("POST", "/bench/suite/seed", {"repo": "repo"})[0] == 409           # one seeding at a time
    seeding = svc.bench.suite.seeding
    stopped(svc)
    assert not seeding.thread.is_alive()
    assert seeding.jobs[1]["status"] == "stopped" and "service stopped" in seeding.jobs[1]["error"]
    if os.name != "nt":
        assert gone(int(pid_file.read_text()))


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is a POSIX signal")
def test_sigterm_ends_the_service_at_once_while_a_seeding_runs(tmp_path, home):
    folder = repo_with(tmp_path, home)
    big_file(folder)
    slow_tests(folder, home, tmp_path / "pid")
    proc, lines = start_serve(["--port", "0", "--no-browser"], serve_env(home))
    seen: list = []
    http = Http(wait_for_url(proc, lines, seen))
    status, _, d = http("POST", "/bench/suite/seed", {"repo": "repo", "count": 20})
    assert status == 202 and d["job"]["status"] == "running"                     # the request did not wait for it
    wait_for(lambda: (tmp_path / "pid").exists(), timeout=60)
    started = time.monotonic()
    proc.send_signal(15)
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    took = time.monotonic() - started
    text = drain(lines, seen)
    assert code == 0 and "still running" not in text and "Traceback" not in text, text
    assert took < 10, f"the service took {took:.1f} s to stop"           # the grace for requests is 10 s
    assert gone(int((tmp_path / "pid").read_text()))
