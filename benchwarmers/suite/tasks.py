"""Task folders: load and check them, find them (the starter pack and the data folder), write and accept them."""
from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .. import home as home_mod
from ..errors import BadRequest, NotFound
from ..store.config import replace
from ..words import plural

PURPOSES = {"bug": "review", "claim": "claims"}      # what kind of work a task scores
VARIANTS = {"bug": ("bug", "control"), "claim": ("claim",)}
STATUSES = ("ready", "draft")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,119}$")
TASK_FILE = "task.json"


class TaskError(BadRequest):
    """A task folder that cannot be used: the message names the folder and what is wrong."""


@dataclass
class Task:
    id: str
    kind: str                                        # bug | claim
    question: str
    files: dict                                      # path -> the code shown (bug tasks: with the bug)
    answer: dict                                     # bug: {"lines": {path: [[a, b]]}}; claim: {claim, truth, evidence}
    control: dict = field(default_factory=dict)      # bug tasks: path -> the same code without the bug
    source: dict = field(default_factory=dict)       # where it came from, with its licence
    status: str = "ready"
    origin: str = "data"                             # starter | data
    folder: Path | None = None

    @property
    def purpose(self) -> str:
        return PURPOSES[self.kind]

    @property
    def variants(self) -> tuple:
        return VARIANTS[self.kind]

    def code(self, variant: str) -> dict:
        return self.control if variant == "control" else self.files

    def digest(self) -> str:
        """Changes when anything a model sees or is scored on changes."""
        blob = json.dumps([self.kind, self.question, self.files, self.control, self.answer], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def meta(self) -> dict:
        return {"id": self.id, "kind": self.kind, "question": self.question, "answer": self.answer,
                "source": self.source, "status": self.status}

    def summary(self) -> dict:
        """What a listing shows; a task of another project's code names it and its licence."""
        s = self.source
        return {"id": self.id, "kind": self.kind, "purpose": self.purpose, "status": self.status,
                "origin": self.origin, "files": sorted(self.files), "source": s.get("kind"),
                "question": self.question, "repo": s.get("repo"), "commit": s.get("commit"),
                "path": s.get("path"), "license": s.get("license")}

    def to_dict(self) -> dict:
        return dict(self.summary(), answer=self.answer, source=self.source, code=self.files, control=self.control)


# ---- where tasks live ----------------------------------------------------------------------------------

def starter_dir() -> Path:
    """The starter pack: suite/tasks in a checkout (and the npm package), benchwarmers/suite/tasks in a wheel."""
    if home_mod.in_checkout():
        return home_mod.CHECKOUT_DIR / "suite" / "tasks"
    return Path(__file__).resolve().parent / "tasks"


def data_dir(home: Path) -> Path:
    """The user's own tasks (seeded, mined, built): never inside their repositories."""
    return Path(home) / "suite" / "tasks"


# ---- reading -------------------------------------------------------------------------------------------

def load(folder: Path, origin: str = "data") -> Task:
    folder = Path(folder)
    where = f"{folder.name}/{TASK_FILE}"
    try:
        meta = json.loads((folder / TASK_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"{folder}: no {TASK_FILE}.", "A task folder holds task.json and code/.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TaskError(f"{where}: not valid JSON ({e}).", "Fix the file by hand.") from None
    if not isinstance(meta, dict):
        raise TaskError(f"{where}: must hold a JSON object.")
    # kind may be missing or wrong in a hand-made file: check() below says so
    task = Task(id=meta.get("id") or folder.name, kind=meta.get("kind"),  # type: ignore[arg-type]
                question=meta.get("question") or "",
                files=read_tree(folder / "code"), answer=meta.get("answer") or {},
                control=read_tree(folder / "control"), source=meta.get("source") or {},
                status=meta.get("status") or "ready", origin=origin, folder=folder)
    problems = check(task)
    if task.id != folder.name:
        problems.append(f"its id {task.id!r} differs from the folder name")
    if problems:
        raise TaskError(f"{where}: " + "; ".join(problems) + ".", "See suite/README.md for the task format.")
    return task


def read_tree(root: Path) -> dict:
    if not root.is_dir():
        return {}
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith(".pyc"):
            out[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return out


def check(task: Task) -> list[str]:
    """Everything wrong with a task, in words; empty when it can be run and scored."""
    problems = []
    if not isinstance(task.id, str) or not ID_RE.match(task.id):
        problems.append("the id must be lower-case letters, digits, '.', '_' or '-'")
    if task.kind not in PURPOSES:
        return problems + ["kind must be 'bug' or 'claim'"]
    if task.status not in STATUSES:
        problems.append("status must be 'ready' or 'draft'")
    if not task.files:
        problems.append("code/ holds no files")
    problems += [f"bad file path {p!r}" for p in list(task.files) + list(task.control) if not safe_path(p)]
    problems += check_bug(task) if task.kind == "bug" else check_claim(task)
    return problems


def check_bug(task: Task) -> list[str]:
    problems = []
    if sorted(task.control) != sorted(task.files):
        problems.append("control/ must hold the same files as code/ (the code without the bug)")
    elif task.control == task.files:
        problems.append("control/ is the same as code/: the bug is missing")
    lines = task.answer.get("lines")
    if not isinstance(lines, dict) or not lines:
        return problems + ["answer.lines must map a file to its buggy line ranges"]
    for path, ranges in lines.items():
        if path not in task.files:
            problems.append(f"answer.lines names {path!r}, which is not in code/")
            continue
        count = len(task.files[path].splitlines())
        if not isinstance(ranges, list) or not ranges or not all(
                isinstance(r, list) and len(r) == 2 and all(isinstance(n, int) for n in r)
                and 1 <= r[0] <= r[1] <= max(count, 1) for r in ranges):
            problems.append(f"answer.lines[{path!r}] must be [[first, last], ...] within its {plural(count, 'line')}")
    return problems


def check_claim(task: Task) -> list[str]:
    problems = []
    if not isinstance(task.answer.get("claim"), str) or not task.answer["claim"].strip():
        problems.append("answer.claim must be the claim, in words")
    if not isinstance(task.answer.get("truth"), bool):
        problems.append("answer.truth must be true or false")
    if task.control:
        problems.append("a claim task has no control/")
    return problems


def safe_path(path: str) -> bool:
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and ":" not in path and "\\" not in path


def load_all(home: Path | None) -> tuple[dict, list]:
    """{id: Task} from the starter pack, then the data folder (a data-folder task replaces a starter one of
    the same id); and the problems of folders that could not be read, so one bad folder never hides the rest."""
    tasks, problems = {}, []
    roots = [(starter_dir(), "starter")] + ([(data_dir(home), "data")] if home else [])
    for root, origin in roots:
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            try:
                task = load(folder, origin)
            except TaskError as e:
                problems.append(e.message)
                continue
            tasks[task.id] = task
    return tasks, problems


def select(tasks: dict, patterns: str | None = None, status: str = "ready") -> list[Task]:
    """Tasks of that status whose id matches one of the comma-separated globs, in id order."""
    globs = [g.strip() for g in (patterns or "*").split(",") if g.strip()] or ["*"]
    return [t for _, t in sorted(tasks.items())
            if t.status == status and any(fnmatch.fnmatchcase(t.id, g) for g in globs)]


def get(home: Path, task_id: str) -> Task:
    tasks, _ = load_all(home)
    if task_id not in tasks:
        raise NotFound(f"No suite task {task_id!r}.", "`bench suite tasks` lists them.")
    return tasks[task_id]


# ---- writing -------------------------------------------------------------------------------------------

def write(task: Task, root: Path) -> Path:
    """Write a new task folder whole (built beside, then renamed into place); an existing id is refused."""
    problems = check(task)
    if problems:
        raise TaskError(f"task {task.id}: " + "; ".join(problems) + ".")
    root = Path(root)
    final = root / task.id
    if final.exists():
        raise TaskError(f"A task {task.id!r} already exists in {root}.")
    tmp = root / f".{task.id}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for sub, files in (("code", task.files), ("control", task.control)):
            for rel, text in files.items():
                path = tmp / sub / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8", newline="\n")
        (tmp / TASK_FILE).write_text(json.dumps(task.meta(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8",
                                     newline="\n")
        replace(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)     # gone after a success; after a failure, nothing half-built stays
    task.folder = final
    return final


def set_status(task: Task, status: str) -> None:
    """Rewrite task.json with a new status (temp file + replace)."""
    task.status = status
    assert task.folder is not None     # a task read from its folder
    path = task.folder / TASK_FILE
    tmp = path.with_name(f".{TASK_FILE}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(task.meta(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n")
        replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
