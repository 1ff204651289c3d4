"""Seeding: plant bugs in real functions of the user's own repo (named in config/repos.json), each task with its
clean control, written into the data folder's suite/tasks (never into the repo)."""
from __future__ import annotations

import ast
import hashlib
import random
import textwrap
from pathlib import Path

from ..errors import BadRequest, NotFound
from ..store.config import Config
from .mutate import OPERATORS, mutations
from .tasks import Task, data_dir, write

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist",
             "site-packages", ".tox", ".mypy_cache", ".pytest_cache"}
MIN_LINES, MAX_LINES = 3, 120
MAX_FILE_BYTES = 1_000_000


def repo_folder(home: Path, name: str) -> Path:
    """The folder `name` maps to in config/repos.json: {"repos": {name: path or {"path": path}}}."""
    repos = Config(home).read("repos.json").get("repos") or {}
    entry = repos.get(name)
    if entry is None:
        known = ", ".join(sorted(repos)) or "none yet"
        raise NotFound(f"No repo named {name!r} in config/repos.json (known: {known}).",
                       'Add it: {"repos": {"' + name + '": "/path/to/the/repo"}} in the data folder\'s '
                       "config/repos.json.")
    path = entry.get("path") if isinstance(entry, dict) else entry
    if not isinstance(path, str) or not path:
        raise BadRequest(f"config/repos.json: {name!r} must map to a folder path.")
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise NotFound(f"The folder of repo {name!r} does not exist: {folder}.", "Fix its path in config/repos.json.")
    return folder


def python_files(folder: Path) -> list[Path]:
    out = []
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(folder)
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
            out.append(path)
    return out


def functions(tree) -> list:
    """Functions and methods that are not nested in another function, of a reviewable size."""
    found = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            is_func = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if is_func and not in_function and MIN_LINES <= child.end_lineno - child.lineno + 1 <= MAX_LINES:
                found.append(child)
            visit(child, in_function or is_func)
    visit(tree, False)
    return found


def candidates(folder: Path) -> list[tuple]:
    """(relative path, source, function, mutation) for every mutation of every function in the repo."""
    out = []
    for path in python_files(folder):
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        rel = path.relative_to(folder).as_posix()
        for func in functions(tree):
            out += [(rel, source, func, m) for m in mutations(source, func)]
    return out


def pick(found: list, count: int, rng: random.Random) -> list:
    """Round-robin over the operators, at random within one, preferring functions not used yet."""
    by_op = {op: [c for c in found if c[3].operator == op] for op in OPERATORS}
    for group in by_op.values():
        rng.shuffle(group)
    chosen, used = [], set()
    while len(chosen) < count and any(by_op.values()):
        for op in OPERATORS:
            group = by_op[op]
            if not group or len(chosen) == count:
                continue
            fresh = [i for i, c in enumerate(group) if (c[0], c[2].lineno) not in used]
            c = group.pop(fresh[-1] if fresh else -1)
            used.add((c[0], c[2].lineno))
            chosen.append(c)
    return chosen


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


def seed_repo(home: Path, repo: str, count: int = 20, seed: int = 0) -> dict:
    """Plant up to `count` bugs in `repo`; tasks already there (same id) are kept, not duplicated."""
    if not 1 <= count <= 500:
        raise BadRequest("count must be from 1 to 500.")
    folder = repo_folder(home, repo)
    found = candidates(folder)
    if not found:
        raise BadRequest(f"No Python function in {folder} could take a planted bug.",
                         "The seeder reads Python files (*.py) with functions of 3 to 120 lines.")
    root = data_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for c in pick(found, count, random.Random(seed)):
        task = build(repo, *c)
        if (root / task.id).exists():
            kept.append(task.id)
            continue
        write(task, root)
        written.append({"id": task.id, "operator": task.source["operator"], "path": task.source["path"],
                        "function": task.source["function"], "change": task.source["change"]})
    return {"repo": repo, "folder": str(folder), "written": written, "kept": kept, "candidates": len(found),
            "tasks_dir": str(root)}
