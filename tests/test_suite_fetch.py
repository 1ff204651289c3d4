"""Real bugs on request (`bench suite fetch`): the picks of two small repositories made here, fetched from a mirror
laid out as OWNER/NAME/COMMIT/PATH and served on 127.0.0.1; a file that differs from its pick's sha256 is refused,
a fix gone is skipped, an unreachable forge stops the fetch and says what to do, a fetch cut short resumes; the
service runs it as a job with progress, the CLI follows it, and suite/rebench.py exits 1 when it wrote nothing."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchwarmers.cli.main import main
from benchwarmers.suite import fetch, history
from benchwarmers.suite.tasks import data_dir, load, load_all
from tests.helpers.http import Http
from tests.helpers.mirror import Mirror, made_picks, raw_files, write_picks
from tests.helpers.panel import wait_for

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "suite" / "rebench.py"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def made(tmp_path) -> dict:
    """Two picks, their clones, and a mirror folder holding their four files."""
    picks, clones = made_picks(tmp_path / "repos")
    return {"picks": picks, "clones": clones, "folder": raw_files(tmp_path / "mirror", picks, clones)}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]                  # nothing listens there once it is closed


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


def test_a_fetch_from_a_mirror_builds_each_pick_with_its_source_licence_and_notice(made, tmp_path):
    root = tmp_path / "tasks"
    with Mirror(made["folder"]) as mirror:
        report = fetch.fetch(made["picks"], root, fetch.reader(mirror.url))
    assert [t["repo"] for t in report["written"]] == ["example/widgets", "example/gadgets"]
    assert report["skipped"] == [] and report["unreachable"] is None and report["done"] == 2
    assert len(mirror.asked) == 4                                        # two files a fix, nothing else
    for pick in made["picks"]:
        task = load(root / fetch.task_id(pick))
        built = history.from_commit(made["clones"][pick["repo"]], pick["repo"], pick["commit"])
        assert (task.files, task.control, task.answer) == (built.files, built.control, built.answer)
        assert {k: task.source[k] for k in ("repo", "commit", "base_commit", "path", "license", "area")} == \
            {k: pick[k] for k in ("repo", "commit", "base_commit", "path", "license", "area")}
        assert task.summary()["license"] == "MIT" and task.summary()["repo"] == pick["repo"]
    notice = (root / "NOTICE").read_text(encoding="utf-8")
    for pick in made["picks"]:
        assert (f"- {fetch.task_id(pick)}: {pick['path']} from https://github.com/{pick['repo']} at commit "
                f"{pick['base_commit']} (before fix {pick['commit']}), licensed MIT.") in notice
    assert leftovers(root) == []


def test_a_file_that_differs_from_its_pick_is_refused_and_the_rest_built(made, tmp_path):
    widgets, gadgets = made["picks"]
    path = made["folder"].joinpath(*widgets["repo"].split("/"), widgets["commit"], *widgets["path"].split("/"))
    path.write_text(path.read_text() + "# changed on the way\n")
    root = tmp_path / "tasks"
    with Mirror(made["folder"]) as mirror:
        report = fetch.fetch(made["picks"], root, fetch.reader(mirror.url))
    (refused,) = report["skipped"]
    assert refused["id"] == fetch.task_id(widgets) and "is not the file picked" in refused["why"]
    assert widgets["sha256_after"][:16] in refused["why"]
    assert [t["id"] for t in report["written"]] == [fetch.task_id(gadgets)]
    assert not (root / fetch.task_id(widgets)).exists() and leftovers(root) == []
    assert fetch.task_id(widgets) not in (root / "NOTICE").read_text()


def test_a_fix_that_no_longer_downloads_is_reported_and_skipped(made, tmp_path):
    widgets, gadgets = made["picks"]
    shutil.rmtree(made["folder"].joinpath(*gadgets["repo"].split("/")))
    with Mirror(made["folder"]) as mirror:
        report = fetch.fetch(made["picks"], tmp_path / "tasks", fetch.reader(mirror.url))
    assert [t["id"] for t in report["written"]] == [fetch.task_id(widgets)]
    (gone,) = report["skipped"]
    assert gone["repo"] == "example/gadgets" and "answered 404" in gone["why"]
    assert fetch.outcome(report).startswith("1 task written, 1 skipped")


def test_an_unreachable_forge_stops_the_fetch_saying_what_it_tried_and_what_to_do(made, tmp_path):
    root = tmp_path / "tasks"
    base = f"http://127.0.0.1:{closed_port()}"
    report = fetch.fetch(made["picks"], root, fetch.reader(base))
    why = report["unreachable"]
    assert why.startswith(f"Could not reach {base} (tried {base}/example/widgets/")
    assert "--source" in why and "git clone https://github.com/OWNER/NAME" in why and "HTTPS_PROXY" in why
    assert report["written"] == [] and report["done"] == 0 and list(root.iterdir()) == []
    assert "2 not tried" in fetch.outcome(report)


def test_a_fetch_cut_short_resumes_where_it_stopped(made, tmp_path):
    root = tmp_path / "tasks"
    stop = threading.Event()
    with Mirror(made["folder"]) as mirror:
        first = fetch.fetch(made["picks"], root, fetch.reader(mirror.url), progress=lambda r: stop.set(),
                            stopping=stop)
        assert first["stopped"] and len(first["written"]) == 1 and first["done"] == 1
        half = tmp_path / "tasks" / f".{fetch.task_id(made['picks'][1])}.999.tmp"      # what a crash leaves
        (half / "code").mkdir(parents=True)
        mirror.asked.clear()
        again = fetch.fetch(made["picks"], root, fetch.reader(mirror.url))
    assert [t["id"] for t in again["present"]] == [first["written"][0]["id"]]
    assert [t["id"] for t in again["written"]] == [fetch.task_id(made["picks"][1])]
    assert len(mirror.asked) == 2                                        # only the fix still missing
    assert sorted(t for t in load_all(None)[0] if t.startswith("rebench-example")) == []   # none in the starter pack
    assert len(fetch.rebench_sources(root)) == 2


def test_a_folder_of_clones_or_raw_files_is_a_source_too(made, tmp_path):
    clones = tmp_path / "clones"
    for repo, clone in made["clones"].items():
        shutil.copytree(clone, clones.joinpath(*repo.split("/")))
    by_clone = fetch.fetch(made["picks"], tmp_path / "a", fetch.reader(str(clones)))
    by_files = fetch.fetch(made["picks"], tmp_path / "b", fetch.reader(made["folder"].as_uri()))
    assert len(by_clone["written"]) == len(by_files["written"]) == 2
    for pick in made["picks"]:
        assert load(tmp_path / "a" / fetch.task_id(pick)).files == load(tmp_path / "b" / fetch.task_id(pick)).files
    with pytest.raises(ValueError, match="neither an http"):
        fetch.reader(str(tmp_path / "nowhere"))


@pytest.mark.parametrize("change, said", [
    ({"repo": "../../etc"}, "repo must be OWNER/NAME"),
    ({"path": "../outside.py"}, "must name a Python source file"),
    ({"path": "tests/test_core.py"}, "must name a Python source file"),
    ({"commit": "HEAD"}, "40 lower-case hex digits"),
    ({"sha256_after": None}, "it has no sha256_after"),
])
def test_a_pick_that_is_not_one_is_refused_before_anything_is_fetched(made, change, said):
    with pytest.raises(ValueError, match=said):
        fetch.picks_of({"picks": [dict(made["picks"][0], **change)]})


# ---- the service, the command line, the developer tool ---------------------------------------------------

def test_the_service_fetches_as_a_job_with_progress(made, home, make_service):
    api = Http(make_service().url)
    with Mirror(made["folder"]) as mirror:
        status, _, body = api("POST", "/bench/suite/fetch", {"picks": made["picks"], "dry_run": True})
        assert status == 200 and body["plan"]["total"] == 2 and body["plan"]["missing_repositories"] == 2
        assert [f["present"] for f in body["plan"]["fixes"]] == [False, False]
        mirror.hold.clear()                                              # the job waits on its first download
        status, _, body = api("POST", "/bench/suite/fetch", {"picks": made["picks"], "source": mirror.url})
        assert status == 202 and body["job"]["status"] == "running" and body["job"]["missing"] == 2
        job_id = body["job"]["id"]
        status, _, busy = api("POST", "/bench/suite/fetch", {"picks": made["picks"], "source": mirror.url})
        assert status == 409 and f"/bench/suite/fetch/{job_id}" in json.dumps(busy)
        assert api("GET", f"/bench/suite/fetch/{job_id}")[2]["job"]["done"] == 0
        seen = set()

        def finished():
            job = api("GET", f"/bench/suite/fetch/{job_id}")[2]["job"]
            seen.add(job["done"])
            return job if job["status"] != "running" else None
        mirror.hold.set()
        job = wait_for(finished, timeout=60)
    assert job["status"] == "done" and job["written"] == 2 and job["result"]["skipped"] == []
    assert seen <= {0, 1, 2} and 2 in seen
    listed = {t["id"]: t for t in api("GET", "/bench/suite/tasks")[2]["tasks"]}
    for pick in made["picks"]:
        assert listed[fetch.task_id(pick)]["license"] == "MIT" and listed[fetch.task_id(pick)]["commit"] == \
            pick["commit"]
    assert (data_dir(home) / "NOTICE").is_file()
    jobs = api("GET", "/bench/suite/fetch")[2]
    assert jobs["jobs"][0]["id"] == job_id and jobs["plan"]["total"] >= 24     # the shipped picks' plan


def test_the_service_refuses_bad_fetch_requests(home, make_service, tmp_path):
    api = Http(make_service().url)
    for body, said in (({"nope": 1}, "Unknown field"), ({"dry_run": "yes"}, "dry_run must be"),
                       ({"picks": "all"}, "must hold"), ({"source": "ftp://x"}, "neither an http(s) URL"),
                       ({"source": 7}, "source must be")):
        status, _, answer = api("POST", "/bench/suite/fetch", body)
        assert status == 400 and said in json.dumps(answer), (body, answer)
    assert api("GET", "/bench/suite/fetch/12")[0] == 404 and api("GET", "/bench/suite/fetch/x")[0] == 404


def test_no_body_fetches_the_shipped_picks_from_the_forge(made, home, make_service, tmp_path):
    """What the Suite page's button sends; the shipped picks and the forge stand in for tests (fetch.use_for_tests)."""
    api = Http(make_service().url)
    with Mirror(made["folder"]) as mirror:
        fetch.use_for_tests(write_picks(tmp_path / "picks.json", made["picks"]), mirror.url)
        try:
            status, _, body = api("POST", "/bench/suite/fetch", raw=b"")
            assert status == 202 and body["job"]["source"] == mirror.url, body
            job = wait_for(lambda: (lambda j: j if j["status"] != "running" else None)(
                api("GET", f"/bench/suite/fetch/{body['job']['id']}")[2]["job"]), timeout=60)
            plan = api("GET", "/bench/suite/fetch")[2]["plan"]
        finally:
            fetch.use_for_tests(None)
    assert job["status"] == "done" and job["written"] == 2
    assert (plan["total"], plan["present"], plan["missing"]) == (2, 2, 0)
    with pytest.raises(ValueError, match="127.0.0.1"):
        fetch.use_for_tests(None, "https://raw.githubusercontent.com")
    assert fetch.forge() == fetch.FORGE and fetch.read_picks() == json.loads(fetch.PICKS.read_text())["picks"]


def test_the_suite_page_offers_the_shipped_picks_and_says_what_leaves_the_machine(home, make_service):
    fetch.use_for_tests(None)                # the forge as shipped: rendering the page downloads nothing
    picks = fetch.read_picks()
    fixes, repos = len(picks), len({p["repo"] for p in picks})
    status, _, page = Http(make_service().url)("GET", "/suite")
    text = " ".join(page.split())
    assert status == 200 and f"Fetch {fixes} real bugs from {repos} public repositories" in text
    assert f"{fixes * 2} requests to GitHub's raw files (<code>raw.githubusercontent.com</code>)" in text
    assert "Nothing of yours is sent" in text and 'action="/suite/fetch"' in text


def test_the_cli_lists_fetches_and_says_when_the_forge_is_unreachable(made, home, make_service, tmp_path, capsys):
    svc = make_service()
    picks = write_picks(tmp_path / "picks.json", made["picks"])
    with Mirror(made["folder"]) as mirror:
        assert main(["--url", svc.url, "suite", "fetch", "--picks", str(picks), "--dry-run"]) == 0
        out = capsys.readouterr()
        for pick in made["picks"]:
            assert pick["repo"] in out.out and pick["commit"][:10] in out.out and "MIT" in out.out
        assert "2 fixes from 2 repositories; 2 to fetch" in out.err and not mirror.asked
        assert main(["--url", svc.url, "suite", "fetch", "--picks", str(picks), "--source", mirror.url]) == 0
        out = capsys.readouterr()
        assert f"{fetch.task_id(made['picks'][0])}: example/widgets (MIT)" in out.out
        assert "2 tasks written" in out.err
        assert main(["--url", svc.url, "suite", "fetch", "--picks", str(picks), "--source", mirror.url]) == 0
        assert "2 already there" in capsys.readouterr().err                  # fetching again skips what is there
    shutil.rmtree(data_dir(home))
    base = f"http://127.0.0.1:{closed_port()}"
    assert main(["--url", svc.url, "suite", "fetch", "--picks", str(picks), "--source", base]) == 1
    err = capsys.readouterr().err
    assert f"Could not reach {base}" in err and "--source" in err
    assert main(["--url", svc.url, "suite", "fetch", "--picks", str(tmp_path / "none.json")]) == 2
    assert "--picks:" in capsys.readouterr().err


def test_the_developer_tool_builds_picks_from_a_mirror_and_exits_1_when_it_wrote_nothing(made, tmp_path):
    picks = write_picks(tmp_path / "picks.json", made["picks"])
    out = tmp_path / "tasks"

    def script(*args):
        return subprocess.run([sys.executable, str(SCRIPT), "--picks", str(picks), "--out", str(out), *args],
                              capture_output=True, text=True, timeout=120)
    with Mirror(made["folder"]) as mirror:
        first = script("--source", mirror.url)
        again = script("--source", mirror.url)
    assert first.returncode == 0, first.stderr
    assert len(first.stdout.splitlines()) == 2 and (out / "NOTICE").is_file()
    assert again.returncode == 1 and "already exists" in again.stderr and "0 tasks written" in again.stderr
    shutil.rmtree(out)
    unreachable = script("--source", f"http://127.0.0.1:{closed_port()}")
    assert unreachable.returncode == 1 and "Could not reach" in unreachable.stderr
    assert not out.exists() or not any(out.iterdir())
