"""Seeding: plant bugs in real functions of the user's own repo (named in config/repos.json), each task with its
clean control, written into the data folder's suite/tasks (never into the repo). A planted bug is kept only when
it is shown to change what the code does: the repo's tests fail on it, or, without tests, its operator's check
says so. Test files are never planted in; what is read is capped, and a run stops at its deadline."""
from __future__ import annotations

import ast
import hashlib
import random
import textwrap
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import BadRequest, NotFound
from ..store.config import Config
from . import equivalence, repofiles
from .mutate import OPERATORS, mutations
from .tasks import Task, data_dir, write
from .testrun import Stopped, TestRun, has_tests

MIN_LINES, MAX_LINES = 3, 120
MAX_FUNCTIONS_PER_FILE, MAX_FUNCTIONS = 100, 2_000         # functions read for mutants: per file, per run
MAX_MUTANTS_PER_FILE, MAX_MUTANTS = 300, 5_000            # candidate mutants: per file, per run
MAX_COUNT = 500
DEFAULT_DEADLINE, MAX_DEADLINE = 600, 3_600                # seconds a seeding may take in all


@dataclass
class Repo:
    name: str
    folder: Path
    tests: bool = True                 # run its tests on each mutant (when it has tests that pass)
    command: object = None             # the test command (a list, or a string split like a shell's), else found
    seconds: float | None = None       # one test run's limit


def repo_entry(home: Path, name: str) -> Repo:
    """The repo `name` maps to in config/repos.json: {"repos": {name: path or {"path": path, "tests": bool,
    "test": command, "test_seconds": n}}}; its folder resolved (a link to it is followed once, here)."""
    repos = Config(home).read("repos.json").get("repos") or {}
    entry = repos.get(name)
    if entry is None:
        known = ", ".join(sorted(repos)) or "none yet"
        raise NotFound(f"No repo named {name!r} in config/repos.json (known: {known}).",
                       'Add it: {"repos": {"' + name + '": "/path/to/the/repo"}} in the data folder\'s '
                       "config/repos.json.")
    options = entry if isinstance(entry, dict) else {"path": entry}
    path = options.get("path")
    if not isinstance(path, str) or not path:
        raise BadRequest(f"config/repos.json: {name!r} must map to a folder path.")
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise NotFound(f"The folder of repo {name!r} does not exist: {folder}.", "Fix its path in config/repos.json.")
    seconds = options.get("test_seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0):
        raise BadRequest(f"config/repos.json: {name!r}'s test_seconds must be a number of seconds.")
    command = options.get("test")
    if command is not None and not (isinstance(command, str) and command.strip() or isinstance(command, list) and
                                    command and all(isinstance(c, str) for c in command)):
        raise BadRequest(f"config/repos.json: {name!r}'s test must be a command (a string or a list of strings).")
    return Repo(name, folder, options.get("tests", True) is not False, command, seconds)


def repo_folder(home: Path, name: str) -> Path:
    return repo_entry(home, name).folder


def functions(tree) -> list:
    """Functions and methods that are not nested in another function, of a reviewable size."""
    found = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            is_func = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_function and \
                    MIN_LINES <= (child.end_lineno or child.lineno) - child.lineno + 1 <= MAX_LINES:
                found.append(child)
            visit(child, in_function or is_func)
    visit(tree, False)
    return found


class Watch:
    """Raises Stopped when the job is stopped or past its deadline; called between units of work."""

    def __init__(self, stop: threading.Event | None, deadline: float | None):
        self.stop, self.deadline = stop or threading.Event(), deadline

    def __call__(self) -> None:
        if self.stop.is_set():
            raise Stopped("stopped")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Stopped("past the deadline")


def candidates(folder: Path, rng: random.Random, watch: Watch) -> tuple[list, dict]:
    """(relative path, source, function, mutation) for the mutations of the repo's functions, within the caps;
    and what was read, refused and capped."""
    listing = repofiles.python_files(folder)
    files = list(listing.files)
    rng.shuffle(files)                            # the caps then take a fair share of the repo, the same per seed
    stats: dict[str, Any] = {"files": len(files), "test_files": listing.tests, "refused": listing.refused[:50],
                             "capped": []}
    out, read = [], 0
    for rel, path in files:
        watch()
        source = repofiles.read(path)
        try:
            tree = ast.parse(source) if source is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is None or source is None:
            continue
        funcs = functions(tree)
        if len(funcs) > MAX_FUNCTIONS_PER_FILE:
            stats["capped"].append(f"{rel}: {MAX_FUNCTIONS_PER_FILE} of its {len(funcs)} functions read")
            funcs = sorted(rng.sample(funcs, MAX_FUNCTIONS_PER_FILE), key=lambda f: f.lineno)
        mutants, lines = [], source.splitlines()
        for func in funcs[:MAX_FUNCTIONS - read]:
            mutants += [(rel, source, func, m) for m in mutations(source, func, lines=lines)]
            if len(mutants) >= MAX_MUTANTS_PER_FILE:
                stats["capped"].append(f"{rel}: {MAX_MUTANTS_PER_FILE} mutants at most from one file")
                break
        read += min(len(funcs), MAX_FUNCTIONS - read)
        out += mutants[:MAX_MUTANTS_PER_FILE]
        if read >= MAX_FUNCTIONS or len(out) >= MAX_MUTANTS:
            stats["capped"].append(f"the run stopped reading at {read:,} functions and {len(out):,} mutants")
            break
    return out[:MAX_MUTANTS], stats


def order(found: list, rng: random.Random):
    """Round-robin over the operators, at random within one, preferring functions not used yet."""
    by_op = {op: [c for c in found if c[3].operator == op] for op in OPERATORS}
    for group in by_op.values():
        rng.shuffle(group)
    used = set()
    while any(by_op.values()):
        for op in OPERATORS:
            group = by_op[op]
            if not group:
                continue
            fresh = next((i for i in range(len(group) - 1, -1, -1) if (group[i][0], group[i][2].lineno) not in used),
                         len(group) - 1)
            c = group.pop(fresh)
            used.add((c[0], c[2].lineno))
            yield c


def mutant_text(source: str, mutation) -> str:
    lines, _ = mutation.apply(source.splitlines())
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def build(repo: str, rel: str, source: str, func, mutation) -> Task:
    """The task: the function with the bug, the same function clean, and the buggy lines."""
    lines = source.splitlines()
    start = min([func.lineno] + [d.lineno for d in func.decorator_list])
    mutant, (a, b) = mutation.apply(lines)
    removed = (mutation.last - mutation.first + 1) - len(mutation.new)
    clean = textwrap.dedent("\n".join(lines[start - 1:func.end_lineno])) + "\n"
    buggy = textwrap.dedent("\n".join(mutant[start - 1:func.end_lineno - removed])) + "\n"
    size = func.end_lineno - removed          # the excerpt's last line, in the mutant's numbering
    a = min(a, size)
    name = rel.rsplit("/", 1)[-1]
    digest = hashlib.sha256(f"{rel}:{func.lineno}:{mutation.operator}:{mutation.first}:{mutation.note}"
                            .encode()).hexdigest()[:8]
    return Task(id=f"seed-{slug(repo)}-{mutation.operator.replace('_', '-')}-{digest}", kind="bug",
                question=f"This is `{func.name}` from {rel}. Review it: does it hold a bug? If it does, say which "
                         "lines hold it.",
                files={name: buggy}, control={name: clean},
                answer={"lines": {name: [[min(a, b) - start + 1, min(b, size) - start + 1]]}},
                source={"kind": "seeded", "repo": repo, "path": rel, "function": func.name,
                        "lines": [start, func.end_lineno], "operator": mutation.operator, "change": mutation.note})


def slug(text: str) -> str:
    out = "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")
    return out[:40] or "repo"


def judge(runner: TestRun | None, tests_note: str, c) -> tuple[dict | None, str]:
    """(how the mutant was shown to change behaviour, as recorded in its task) or (None, why it is dropped)."""
    rel, source, func, m = c
    if runner is not None:
        killed, detail = runner.kills(rel, mutant_text(source, m))
        return ({"how": "tests", "command": runner.words(), "failed": detail}, detail) if killed else (None, detail)
    differs, why = equivalence.verdict(func, m)
    return ({"how": "operator", "why": why, "tests": tests_note}, why) if differs else (None, why)


def runner_for(entry: Repo, stop, deadline) -> tuple[TestRun | None, str]:
    """The repo's tests ready to judge mutants, or None and why they cannot."""
    if not entry.tests:
        return None, "its tests are off in config/repos.json"
    if not has_tests(entry.folder):
        return None, "the repository has no tests"
    runner = TestRun(entry.folder, entry.command, entry.seconds, stop, deadline)
    try:
        problem = runner.usable()
    except BaseException:
        runner.close()
        raise
    if problem:
        runner.close()
        return None, problem
    return runner, f"its tests pass as the repository is, run with: {runner.words()}"


def seed_repo(home: Path, repo: str, count: int = 20, seed: int = 0, deadline: float = DEFAULT_DEADLINE,
              stop: threading.Event | None = None, progress=None) -> dict:
    """Plant up to `count` bugs in `repo`, each shown to change behaviour; tasks already there (same id) are kept,
    not duplicated. Stops at `deadline` seconds or when `stop` is set, keeping what it wrote."""
    if not 1 <= count <= MAX_COUNT:
        raise BadRequest(f"count must be from 1 to {MAX_COUNT}.")
    entry = repo_entry(home, repo)
    watch = Watch(stop, time.monotonic() + deadline)
    rng = random.Random(seed)
    found, stats = candidates(entry.folder, rng, watch)
    if not found:
        raise BadRequest(f"No Python function in {entry.folder} could take a planted bug.",
                         "The seeder reads Python files (*.py, not tests) with functions of 3 to 120 lines.")
    root = data_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    report = dict(stats, repo=repo, folder=str(entry.folder), candidates=len(found), written=[], kept=[],
                  dropped={}, tasks_dir=str(root), stopped=None, tests=None, checked_by=None)
    dropped: Counter = Counter()
    runner = None
    try:
        runner, report["tests"] = runner_for(entry, watch.stop, watch.deadline)
        report["checked_by"] = "tests" if runner else "operator"
        for c in order(found, rng):
            if len(report["written"]) + len(report["kept"]) >= count:
                break
            watch()
            task = build(repo, *c)
            if (root / task.id).exists():
                report["kept"].append(task.id)
                continue
            check, why = judge(runner, report["tests"], c)
            if check is None:
                dropped[why] += 1
                continue
            task.source["check"] = check
            write(task, root)
            report["written"].append({"id": task.id, "operator": task.source["operator"], "path": task.source["path"],
                                      "function": task.source["function"], "change": task.source["change"],
                                      "check": check})
            if progress:
                progress(report)
    except Stopped as e:
        report["stopped"] = str(e)
    finally:
        if runner:
            runner.close()
    report["dropped"] = dict(dropped.most_common())
    report["made"], report["dropped_total"] = len(report["written"]), sum(dropped.values())
    return report


def report_lines(report: dict) -> tuple[list[str], str]:
    """(one line per task written, a summary): what was made, dropped and why, and how bugs were checked."""
    lines = [f"{w['id']}: {w['change']} in {w['function']} ({w['path']}); "
             + (f"a test fails on it: {w['check']['failed']}" if w["check"]["how"] == "tests"
                else f"checked by its operator: {w['check']['why']}") for w in report["written"]]
    why = "; ".join(f"{n} {reason}" for reason, n in report["dropped"].items())
    how = (f"each checked by the repo's tests ({report['tests']})" if report["checked_by"] == "tests"
           else f"each checked by its operator's own test, as {report['tests']}" if report["tests"] else "")
    summary = (f"{report['made']} made, {report['dropped_total']} dropped" + (f" ({why})" if why else "")
               + (f", {len(report['kept'])} already there" if report["kept"] else "")
               + f" in {report['tasks_dir']}" + (f"; {how}" if how else "") + ".")
    for extra in (report["refused"][:5] and "not read: " + "; ".join(report["refused"][:5]),
                  report["capped"][:3] and "capped: " + "; ".join(report["capped"][:3])):
        if extra:
            summary += f" {extra[0].upper()}{extra[1:]}."
    return lines, summary
