"""The mutator: each operator on a small fixture plants a bug that parses and differs from the control only in
the intended lines; seeding writes tasks into the data folder, never into the repo."""
from __future__ import annotations

import ast
import difflib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.suite import mutate, seed
from benchwarmers.suite.tasks import load, load_all
from tests.helpers.data import write
from tests.helpers.suite import seed_job

FIXTURE = '''import asyncio


def window(items, size=3, strict=True):
    out = []
    for i in range(len(items)):
        if i >= size:
            break
        out.append(items[i + 1])
    return out


def find(name, names):
    if not names:
        return None
    if name in names:
        return names.index(name)
    return -1


def copy(src, dst):
    handle = open(src)
    data = handle.read()
    handle.close()
    return divmod(data, dst)


async def fetch(client, url):
    reply = await client.get(url)
    return reply
'''


def function(name):
    tree = ast.parse(FIXTURE)
    return next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def changed_lines(before: str, after: str) -> set:
    """Line numbers of `before` that the mutant changes or removes."""
    out = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before.splitlines(), after.splitlines()).get_opcodes():
        if tag != "equal":
            out.update(range(i1 + 1, max(i2, i1 + 1) + 1) if tag == "insert" else range(i1 + 1, i2 + 1))
    return out


@pytest.mark.parametrize("operator, func, line, note", [
    ("off_by_one", "window", 7, "`>=` became `>`"),
    ("off_by_one", "window", 9, "`1` became `2`"),
    ("flipped_comparison", "find", 16, "`in` became `not in`"),
    ("wrong_variable", "find", 17, "`names` became `name`"),
    ("dropped_guard", "find", 14, "the guard `if not names:` was removed"),
    ("swapped_arguments", "copy", 25, "the arguments `data` and `dst` were swapped"),
    ("wrong_default", "window", 4, "the default `3` became `4`"),
    ("wrong_default", "window", 4, "the default `True` became `False`"),
    ("missing_await_close", "copy", 24, "the call `handle.close()` was removed"),
    ("missing_await_close", "fetch", 29, "an `await` was dropped"),
])
def test_each_operator_plants_a_bug_that_parses_and_touches_only_its_lines(operator, func, line, note):
    found = [m for m in mutate.mutations(FIXTURE, function(func), (operator,)) if m.note == note and m.first == line]
    assert found, [(m.first, m.note) for m in mutate.mutations(FIXTURE, function(func), (operator,))]
    m = found[0]
    lines = FIXTURE.splitlines()
    mutant_lines, (first, last) = m.apply(lines)
    mutant = "\n".join(mutant_lines) + "\n"
    ast.parse(mutant)
    assert mutant != FIXTURE
    assert changed_lines(FIXTURE, mutant) == set(range(m.first, m.last + 1))
    if m.new:       # a changed line is pointed at where it stands; a removed one by the lines around the gap
        assert (first, last) == (m.first, m.first + len(m.new) - 1)
    else:
        assert (first, last) == (m.first - 1, m.first)


def test_every_operator_finds_something_in_the_fixture():
    tree = ast.parse(FIXTURE)
    funcs = seed.functions(tree)
    ops = {m.operator for f in funcs for m in mutate.mutations(FIXTURE, f)}
    assert ops == set(mutate.OPERATORS)


def test_mutants_that_would_not_parse_are_left_out():
    source = "def only(x):\n    if x:\n        return 1\n"
    func = function_of(source, "only")
    assert not [m for m in mutate.mutations(source, func, ("dropped_guard",))]   # the body would be empty


def function_of(source, name):
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)


@pytest.fixture
def repo(tmp_path, home):
    folder = tmp_path / "myapp"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "tools.py").write_text(FIXTURE, encoding="utf-8")
    (folder / ".venv" / "lib").mkdir(parents=True)
    (folder / ".venv" / "lib" / "skip.py").write_text(FIXTURE, encoding="utf-8")
    write(home, "repos.json", {"repos": {"myapp": str(folder)}})
    return folder


def test_seeding_writes_tasks_with_controls_into_the_data_folder_only(repo, home):
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    done = seed.seed_repo(home, "myapp", count=7)
    assert len(done["written"]) == 7 and not done["kept"]
    assert {w["operator"] for w in done["written"]} == set(mutate.OPERATORS)
    assert all(w["path"] == "pkg/tools.py" for w in done["written"])                 # .venv is skipped
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before      # the repo is untouched
    tasks, problems = load_all(home)
    assert not problems
    for w in done["written"]:
        task = tasks[w["id"]]
        assert task.origin == "data" and task.kind == "bug" and task.source["repo"] == "myapp"
        (name, code), = task.files.items()
        ast.parse(code)
        ast.parse(task.control[name])
        (first, last), = task.answer["lines"][name]
        changed = changed_lines(task.control[name], code)
        assert changed and (changed <= set(range(first, last + 1)) or task.source["operator"] in (
            "dropped_guard", "missing_await_close"))
    again = seed.seed_repo(home, "myapp", count=7)
    assert not again["written"] and len(again["kept"]) == 7                           # same seed: nothing doubled


def test_seeding_through_the_api_and_its_errors(repo, http):
    job = seed_job(http, {"repo": "myapp", "count": 3})
    assert job["status"] == "done" and job["made"] == 3 and len(job["result"]["written"]) == 3
    assert http("GET", "/bench/suite/seed")[2]["jobs"][0]["id"] == job["id"]
    status, _, d = http("POST", "/bench/suite/seed", {"repo": "nope"})
    assert status == 404 and "config/repos.json" in d["error"]["message"] and "myapp" in d["error"]["message"]
    assert http("POST", "/bench/suite/seed", {})[0] == 400
    assert http("POST", "/bench/suite/seed", {"repo": "myapp", "count": 0})[0] == 400
    assert http("POST", "/bench/suite/seed", {"repo": "myapp", "deadline_seconds": 0})[0] == 400
    assert http("POST", "/bench/suite/seed", {"repo": "myapp", "colour": "red"})[0] == 400
    assert http("GET", "/bench/suite/seed/999")[0] == 404 and http("GET", "/bench/suite/seed/x")[0] == 404


def test_python_suite_seed_script(repo, home):
    script = Path(__file__).resolve().parent.parent / "suite" / "seed.py"
    run = subprocess.run([sys.executable, str(script), "--repo", "myapp", "--count", "2", "--home", str(home)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.strip().splitlines()) == 2 and "2 made, " in run.stderr
    missing = subprocess.run([sys.executable, str(script), "--repo", "other", "--home", str(home)],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "No repo named 'other'" in missing.stderr
    task = load(next((home / "suite" / "tasks").iterdir()))
    assert json.loads((task.folder / "task.json").read_text())["source"]["kind"] == "seeded"
