"""The history source of rebench tasks, on a small repository built here with git: only the commit that fixes a bug
becomes a task (not the refactor, the docs change or the test-only change); a pick builds the same task from the
clone or from the two files downloaded; and every rebench task, shipped or built, differs from its control only
on its answer lines."""
from __future__ import annotations

import difflib
import hashlib
import json
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from benchwarmers.suite import fetch, history, rebench
from benchwarmers.suite.tasks import load, load_all
from tests.fakes.server import shut_down
from tests.helpers.gitrepo import CLAMP, MIT, commit, fix_repo

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "suite" / "rebench.py"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

@pytest.fixture
def clone(tmp_path) -> tuple[Path, dict]:
    return fix_repo(tmp_path)


def test_only_the_fix_becomes_a_task(clone):
    repo, shas = clone
    found = {c.sha: result for c, result in history.scan(repo, "example/widgets")}
    assert set(found) == set(shas.values()) - {shas["initial"]}            # the first commit has no parent
    task = found[shas["fix"]]
    assert not isinstance(task, str), task
    assert "nothing says the commit fixes a bug" in found[shas["refactor"]]
    assert "only comments, docstrings" in found[shas["docs"]]
    assert "changes no source file" in found[shas["tests"]]
    assert task.id == f"rebench-example-widgets-{shas['fix'][:10]}"
    assert task.files == {"core.py": CLAMP} and "        return high\n" in task.control["core.py"]
    assert task.answer == {"lines": {"core.py": [[9, 9]]}}
    assert CLAMP.splitlines()[8] == "        return low"
    fixed = task.control["core.py"].encode()
    assert task.source | {"date": None} == {
        "sha256_before": hashlib.sha256(CLAMP.encode()).hexdigest(), "sha256_after": hashlib.sha256(fixed).hexdigest(),
        "bytes_before": len(CLAMP.encode()), "bytes_after": len(fixed),
        "kind": "rebench", "repo": "example/widgets", "url": "https://github.com/example/widgets",
        "commit": shas["fix"], "base_commit": shas["initial"], "path": "widgets/core.py", "license": "MIT",
        "excerpt": {"core.py": [1, 14]}, "date": None, "message": "Fix clamp returning the low bound above high "
        "(closes #7)", "evidence": ["its message says it fixes a bug", "its message says it fixes issue #7",
                                    "a test changed beside it: tests/test_core.py"]}
    assert rebench.notice_lines([task]) == [
        f"- suite/tasks/{task.id}: code from https://github.com/example/widgets at commit {shas['initial']} "
        f"(widgets/core.py, before fix {shas['fix']}), licensed MIT."]


@pytest.mark.parametrize("text, spdx", [
    (MIT, "MIT"),
    ("Apache License\nVersion 2.0, January 2004\n", "Apache-2.0"),
    ("Redistribution and use in source and binary forms ... may be used to endorse or promote", "BSD-3-Clause"),
    ("Redistribution and use in source and binary forms, with or without modification", "BSD-2-Clause"),
    ("Licensed under the Apache License, Version 2.0 ...\nRedistribution and use in source and binary forms ... "
     "endorse or promote", "Apache-2.0 AND BSD-3-Clause"),
    ("GNU GENERAL PUBLIC LICENSE Version 3", None), ("", None)])
def test_a_licence_is_named_from_its_own_words_or_not_at_all(text, spdx):
    assert history.classify_licence(text) == spdx


def test_a_repository_without_a_known_licence_is_skipped_unless_told(clone):
    repo, shas = clone
    (repo / "LICENSE").write_text("All rights reserved.\n")
    fix = commit(repo, "Fix span for reversed bounds", {"widgets/core.py": (repo / "widgets/core.py").read_text()
                                                        .replace("return width", "return abs(width)")}, 1_600_000_500)
    with pytest.raises(rebench.RowSkipped, match="licence file is not one this can name"):
        history.from_commit(repo, "example/widgets", fix)
    assert history.from_commit(repo, "example/widgets", fix, licence="MIT").source["license"] == "MIT"


class Raw:
    """raw.githubusercontent.com for the clone: /owner/name/<commit>/<path> answers `git show commit:path`."""

    def __init__(self, repo: Path):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                _, _, _, sha, path = self.path.split("/", 4)
                done = subprocess.run(["git", "-C", str(repo), "show", f"{sha}:{path}"], capture_output=True)
                self.send_response(200 if done.returncode == 0 else 404)
                self.send_header("Content-Length", str(len(done.stdout)))
                self.end_headers()
                self.wfile.write(done.stdout)

            def log_message(self, *a):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        shut_down(self.server)
        self.server.server_close()


def test_a_pick_builds_the_same_task_from_the_clone_and_from_github(clone):
    repo, shas = clone
    pick = history.pick_of(history.from_commit(repo, "example/widgets", shas["fix"]), area="numerics")
    raw = Raw(repo)
    try:
        downloaded = fetch.from_pick(pick, None, raw.url)
    finally:
        raw.stop()
    built = fetch.from_pick(pick, repo)
    assert downloaded.meta() == built.meta() and downloaded.files == built.files
    assert downloaded.control == built.control and built.source["area"] == "numerics"
    with pytest.raises(rebench.RowSkipped, match="differ from the pick"):
        fetch.from_pick(dict(pick, license="Apache-2.0"), repo)


def test_the_script_builds_from_a_clone_and_from_picks(clone, tmp_path):
    repo, shas = clone
    out = tmp_path / "tasks"
    run = subprocess.run([sys.executable, str(SCRIPT), "--git", str(repo), "--repo", "example/widgets", "--out",
                          str(out), "--notice", str(tmp_path / "NOTICE")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"rebench-example-widgets-{shas['fix'][:10]}: example/widgets (MIT)"
    assert f"skipped {shas['refactor'][:12]}: nothing says" in run.stderr
    assert load(out / f"rebench-example-widgets-{shas['fix'][:10]}").answer["lines"] == {"core.py": [[9, 9]]}
    assert not (tmp_path / "NOTICE").exists()                                   # only the shipped set is listed
    picks = tmp_path / "picks.json"
    pick = history.pick_of(history.from_commit(repo, "example/widgets", shas["fix"]))
    picks.write_text(json.dumps({"picks": [pick]}))
    again = subprocess.run([sys.executable, str(SCRIPT), "--picks", str(picks), "--git", str(repo), "--repo",
                            "example/widgets", "--out", str(tmp_path / "again")], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / f"rebench-example-widgets-{shas['fix'][:10]}" / "task.json").read_text() == \
        (out / f"rebench-example-widgets-{shas['fix'][:10]}" / "task.json").read_text()
    bad = subprocess.run([sys.executable, str(SCRIPT), "--git", str(repo)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--git needs --repo OWNER/NAME" in bad.stderr
    missing = subprocess.run([sys.executable, str(SCRIPT), "--git", str(tmp_path / "nothing"), "--repo", "a/b"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 1 and "Could not read the history" in missing.stderr


def differs_only_on_its_answer(task) -> list[str]:
    """What is wrong with a bug task whose control should differ from its code only on the answer lines (an
    insertion is pointed at by the lines around it)."""
    problems = []
    for path, code in task.files.items():
        ranges = task.answer["lines"].get(path, [])
        old, new = code.splitlines(), task.control[path].splitlines()
        marked = {n for a, b in ranges for n in range(a, b + 1)}
        if not marked or max(marked) > len(old):
            problems.append(f"{task.id}: its answer lines are not lines of {path}")
        for op, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            changed = set(range(i1 + 1, i2 + 1)) if i2 > i1 else {i1, i1 + 1} & set(range(1, len(old) + 1))
            if op != "equal" and not changed <= marked:
                problems.append(f"{task.id}: {path} lines {sorted(changed)} differ outside the answer {ranges}")
        if old == new:
            problems.append(f"{task.id}: {path} is the same in its control")
    return problems


def test_every_rebench_task_differs_from_its_control_only_on_its_answer_lines(clone):
    repo, shas = clone
    built = history.from_commit(repo, "example/widgets", shas["fix"])
    shipped = [t for t in load_all(None)[0].values() if t.source.get("kind") == "rebench"]
    assert differs_only_on_its_answer(built) == []
    broken = history.from_commit(repo, "example/widgets", shas["fix"])
    broken.answer = {"lines": {"core.py": [[3, 3]]}}
    assert differs_only_on_its_answer(broken)                                    # the check can fail
    assert [p for t in shipped for p in differs_only_on_its_answer(t)] == []
    for t in shipped:
        assert t.source.get("commit") or t.source.get("instance_id"), t.id      # each names where it comes from


def test_a_commit_or_pick_that_is_not_one_is_refused_before_git_sees_it(clone, tmp_path):
    repo, shas = clone
    for bad in ("--output=" + str(tmp_path / "written"), "HEAD~1", ""):
        with pytest.raises(rebench.RowSkipped, match="is not a commit id"):
            history.from_commit(repo, "example/widgets", bad)
    with pytest.raises(history.HistoryError, match="read as an option"):
        history.commits(repo, "--output=" + str(tmp_path / "written"))
    assert not (tmp_path / "written").exists()
    pick = history.pick_of(history.from_commit(repo, "example/widgets", shas["fix"]))
    for key, value in (("repo", "../../x"), ("commit", "--all"), ("base_commit", 7)):
        with pytest.raises(rebench.RowSkipped, match="the pick"):
            fetch.from_pick(dict(pick, **{key: value}), repo)
