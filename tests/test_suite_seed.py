"""Planted bugs that really are bugs: on a fixture repo with tests, a mutant no test fails is dropped and every one
kept is failed by a test; without tests, each operator's own check drops the mutants that may behave the same;
test files are never planted in; and seeding says how many it made, dropped and why."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.cli.main import main
from benchwarmers.suite import equivalence, mutate, seed
from benchwarmers.suite.tasks import load_all
from tests.helpers.data import write

CALC = '''def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def mean(values, empty=0.0):
    if not values:
        return empty
    total = 0
    for v in values:
        total += v
    return total / len(values)
'''
TESTS = '''import unittest

from pkg.calc import clamp, mean


class CalcTest(unittest.TestCase):
    def test_clamp(self):
        self.assertEqual(clamp(5, 0, 3), 3)
        self.assertEqual(clamp(-1, 0, 3), 0)
        self.assertEqual(clamp(2, 0, 3), 2)

    def test_mean(self):
        self.assertEqual(mean([1, 2, 3]), 2)
        self.assertEqual(mean([]), 0.0)
'''
UNITTEST = ["python", "-m", "unittest", "discover", "-q", "-s", "tests", "-t", "."]


def make_repo(tmp_path: Path, home: Path, tests: bool = True, **entry) -> Path:
    folder = tmp_path / "calc"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "calc.py").write_text(CALC)
    if tests:
        (folder / "tests").mkdir()
        (folder / "tests" / "__init__.py").write_text("")
        (folder / "tests" / "test_calc.py").write_text(TESTS)
    write(home, "repos.json", {"repos": {"calc": {"path": str(folder), "test": UNITTEST, **entry}}})
    return folder


def mutant_file(folder: Path, task) -> str:
    """The whole module with the task's buggy function in place of the clean one."""
    lines = (folder / task.source["path"]).read_text().splitlines()
    first, last = task.source["lines"]
    (code,) = task.files.values()
    return "\n".join(lines[:first - 1] + code.splitlines() + lines[last:]) + "\n"


def passes(folder: Path, module: str, tmp_path: Path) -> bool:
    copy = tmp_path / "check"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    (copy / "pkg" / "calc.py").write_text(module)
    return subprocess.run([sys.executable] + UNITTEST[1:], cwd=copy, capture_output=True, timeout=60).returncode == 0


def test_a_mutant_no_test_fails_is_dropped_and_every_kept_one_fails_a_test(tmp_path, home):
    folder = make_repo(tmp_path, home)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    done = seed.seed_repo(home, "calc", count=100)
    assert done["checked_by"] == "tests" and "its tests pass" in done["tests"]
    # `x < lo` and `x > hi` moved by one give the same answer at the boundary: no test can fail on them
    assert done["dropped"] == {"no test failed on it": 2}
    changes = {(w["function"], w["change"]) for w in done["written"]}
    assert ("clamp", "`>` became `>=`") not in changes and ("clamp", "`<` became `<=`") not in changes
    assert ("clamp", "`>` became `<=`") in changes                                   # a flipped test is kept
    tasks = load_all(home)[0]
    assert len(done["written"]) == done["made"] == len(done["written"]) and done["made"] >= 10
    for w in done["written"]:
        task = tasks[w["id"]]
        assert task.source["check"]["how"] == "tests" and task.source["check"]["failed"].startswith(("FAIL", "ERROR"))
        assert task.control != task.files
        assert not passes(folder, mutant_file(folder, task), tmp_path), w          # a test fails on each
    assert passes(folder, CALC.replace("if x > hi:", "if x >= hi:"), tmp_path)    # and passes on the dropped one
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before    # the repo is untouched


def test_without_tests_each_operators_check_decides(tmp_path, home):
    make_repo(tmp_path, home, tests=False)
    done = seed.seed_repo(home, "calc", count=100)
    assert done["checked_by"] == "operator" and done["tests"] == "the repository has no tests"
    assert done["dropped"] == {"at the boundary the branch returns a value equal to the one compared (a clamp)": 2}
    tasks = load_all(home)[0]
    assert all(tasks[w["id"]].source["check"]["how"] == "operator" and tasks[w["id"]].source["check"]["why"]
               for w in done["written"])


def test_a_repo_whose_tests_fail_as_they_are_is_checked_by_operator_and_says_why(tmp_path, home):
    folder = make_repo(tmp_path, home)
    (folder / "tests" / "test_broken.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n"
                                                     "    def test_no(self):\n        self.fail('broken')\n")
    done = seed.seed_repo(home, "calc", count=3)
    assert done["checked_by"] == "operator" and done["tests"].startswith("the tests fail as the repository is")
    make_repo(tmp_path / "off", home)
    write(home, "repos.json", {"repos": {"calc": {"path": str(tmp_path / "off" / "calc"), "tests": False}}})
    assert seed.seed_repo(home, "calc", count=1)["tests"] == "its tests are off in config/repos.json"


def test_bugs_are_never_planted_in_tests(tmp_path, home):
    folder = tmp_path / "app"
    for rel in ("test_app.py", "app_test.py", "conftest.py", "tests/helpers.py", "testing/util.py",
                "pkg/tests/test_deep.py", "app.py"):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(CALC)
    write(home, "repos.json", {"repos": {"app": {"path": str(folder), "tests": False}}})
    done = seed.seed_repo(home, "app", count=500)
    assert done["written"] and {w["path"] for w in done["written"]} == {"app.py"}
    assert done["test_files"] == 6 and done["files"] == 1


def test_the_cli_says_what_it_made_dropped_and_why(tmp_path, home, make_service, capsys):
    make_repo(tmp_path, home, tests=False)
    svc = make_service()
    assert main(["--url", svc.url, "suite", "seed", "--repo", "calc", "--count", "100"]) == 0
    out, err = capsys.readouterr()
    assert "checked by its operator:" in out
    assert " made, 2 dropped (2 at the boundary the branch returns a value equal to the one compared (a clamp))" in err
    assert "the repository has no tests" in err


def func_of(source: str, name: str):
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == name)


@pytest.mark.parametrize("source, operator, note, differs", [
    ("def f(x, hi):\n    if x > hi:\n        return hi\n    return x\n", "off_by_one", "`>` became `>=`", False),
    ("def f(x, hi):\n    if x > hi:\n        x = hi\n    return x\n", "off_by_one", "`>` became `>=`", False),
    ("def f(x, hi):\n    y = hi if x > hi else x\n    return y\n", "off_by_one", "`>` became `>=`", False),
    ("def f(i, n):\n    while i < n:\n        i += 2\n    return i\n", "off_by_one", "`<` became `<=`", True),
    ("def f(x, hi):\n    if x > hi:\n        raise ValueError(x)\n    return x\n", "off_by_one", "`>` became `>=`",
     True),
    ("def f(a, b):\n    if a == b:\n        pass\n    return a\n", "flipped_comparison", "`==` became `!=`", False),
    ("def f(a, b):\n    if a == b:\n        return 1\n    return a\n", "flipped_comparison", "`==` became `!=`", True),
    ("def f(a):\n    b = a\n    c = a + 1\n    return b * c\n", "wrong_variable", "`a` became `b`", False),
    ("def f(a, k):\n    b = a * 2\n    c = k + 1\n    return b * c\n", "wrong_variable", "`b` became `a`", True),
    ("def f(x):\n    log(x)\n    if not x:\n        return\n", "dropped_guard", "the guard `if not x:` was removed",
     False),
    ("def f(xs):\n    for x in xs:\n        log(x)\n        if x:\n            continue\n", "dropped_guard",
     "the guard `if x:` was removed", False),
    ("def f(x):\n    if not x:\n        return 0\n    return 10 // x\n", "dropped_guard",
     "the guard `if not x:` was removed", True),
    ("def f(a, b):\n    top = max(a, b)\n    return top\n", "swapped_arguments",
     "the arguments `a` and `b` were swapped", False),
    ("def f(a, b):\n    q = divmod(a, b)\n    return q\n", "swapped_arguments",
     "the arguments `a` and `b` were swapped", True),
    ("def f(a, strict=True):\n    b = a + 1\n    return b\n", "wrong_default", "the default `True` became `False`",
     False),
    ("def f(a, strict=True):\n    b = a if strict else 0\n    return b\n", "wrong_default",
     "the default `True` became `False`", True),
    ("def f(p):\n    with open(p) as h:\n        data = h.read()\n        h.close()\n    return data\n",
     "missing_await_close", "the call `h.close()` was removed", False),
    ("def f(p):\n    h = open(p)\n    data = h.read()\n    h.close()\n    return data\n", "missing_await_close",
     "the call `h.close()` was removed", True),
    ("async def f(asyncio):\n    await asyncio.sleep(0)\n    return 1\n", "missing_await_close",
     "an `await` was dropped", False),
    ("def f(x, n):\n    return x\n    if x > n:\n        return n\n", "flipped_comparison", "`>` became `<=`", False),
])
def test_each_operators_check_tells_a_change_of_behaviour_from_none(source, operator, note, differs):
    func = func_of(source, "f")
    found = [m for m in mutate.mutations(source, func, (operator,)) if m.note == note]
    assert found, [m.note for m in mutate.mutations(source, func, (operator,))]
    verdict, why = equivalence.verdict(func, found[0])
    assert verdict is differs, why
    assert why
