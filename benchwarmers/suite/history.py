"""Real bug fixes as tasks, from a repository's own history (a local clone read with `git`): a commit that says it
fixes a bug and changes one hunk of one source file becomes a task, the file at its parent the code, the lines
the fix changed the answer key, the file after the fix the control."""
from __future__ import annotations

import ast
import difflib
import hashlib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import rebench
from .rebench import RowSkipped
from .repofiles import is_test
from .tasks import Task

GIT_SECONDS = 60
MAX_CHANGED = 10                     # removed plus added lines: "a few lines"
MAX_FILE_BYTES = 1_000_000
NOT_PYTHON_SOURCE = re.compile(r"(^|/)(setup|conftest|noxfile|fabfile)\.py$|(^|/)(benchmarks?|scripts?|tools|ci)/")
FIX_WORDS = re.compile(r"\b(fix(e[sd])?|bug ?fix|bugs?|regression|crash(es|ed)?|incorrect(ly)?|wrong(ly)?|broken|"
                       r"off[- ]by[- ]one|mishandl\w+)\b", re.I)
NOT_A_FIX = re.compile(r"\b(typos?|docs?|docstrings?|documentation|changelog|readme|lint(ing)?|flake8|mypy|pyright|"
                       r"typing|type hints?|annotations?|format(ting)?|refactor(ing|ed)?|renam(e|ed|ing)|clean ?up|"
                       r"bump(ed)?|release|deprecat\w*|pre-commit|warnings?|ci|tests?)\b", re.I)
ISSUE = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+#(\d+)\b", re.I)
PULL = re.compile(r"\(#(\d+)\)\s*$")
LICENCE_FILE = re.compile(r"^(licen[cs]e|copying)(\.\w+)?$", re.I)


class HistoryError(Exception):
    """git cannot be run on the folder, or it is not a repository: the message says which."""


@dataclass
class Commit:
    sha: str
    parent: str
    date: str
    message: str

    @property
    def subject(self) -> str:
        return (self.message.strip().splitlines() or [""])[0].strip()


# ---- reading the history ------------------------------------------------------------------------

def git(clone: Path, *args: str) -> str:
    return git_bytes(clone, *args).decode("utf-8", "replace")


def git_bytes(clone: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(clone), *args], capture_output=True, timeout=GIT_SECONDS)
    except FileNotFoundError:
        raise HistoryError("git is not installed (or not on PATH): the history source reads a clone with it.") from None
    except subprocess.TimeoutExpired:
        raise HistoryError(f"git {args[0]} took over {GIT_SECONDS} s in {clone}.") from None
    if done.returncode:
        raise HistoryError(f"git {args[0]} failed in {clone}: "
                           + done.stderr.decode("utf-8", "replace").strip()[:300])
    return done.stdout


def commits(clone: Path, rev: str = "HEAD", scan: int = 500, since: str | None = None) -> list[Commit]:
    """The last `scan` commits of `rev` that are not merges and have a parent, newest first."""
    if not rev or rev.startswith("-"):
        raise HistoryError(f"{rev!r} is not a branch or commit (it would be read as an option of git).")
    args = ["log", "--no-merges", f"-n{int(scan)}", "--format=%H%x1f%P%x1f%aI%x1f%B%x1e"]
    if since:
        args.append(f"--since={since}")
    out = []
    for record in git(clone, *args, rev, "--").split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) == 4 and parts[1].strip():
            out.append(Commit(parts[0], parts[1].split()[0], parts[2], parts[3]))
    return out


def commit(clone: Path, sha: str) -> Commit:
    if not re.fullmatch(r"[0-9a-fA-F]{4,64}", sha or ""):
        raise RowSkipped(f"{str(sha)[:80]!r} is not a commit id (4 to 64 hex digits)")
    found = commits(clone, sha, 1)
    if not found or not found[0].sha.startswith(sha.lower()):
        raise RowSkipped(f"{sha} is not a commit with a parent in {clone} (a merge or the first commit cannot be one)")
    return found[0]


def changed_files(clone: Path, c: Commit) -> list[tuple[str, str]]:
    """(status letter, path) for each file the commit changed against its first parent."""
    lines = git(clone, "diff", "--name-status", "--no-renames", c.parent, c.sha, "--").splitlines()
    return [(line[0], line.split("\t", 1)[1]) for line in lines if "\t" in line]


def file_at(clone: Path, sha: str, path: str) -> str:
    try:
        data = git(clone, "show", f"{sha}:{path}")
    except HistoryError as e:
        raise RowSkipped(f"{path} cannot be read at {sha[:12]}: {e}") from None
    if len(data) > MAX_FILE_BYTES:
        raise RowSkipped(f"{path} is over {MAX_FILE_BYTES:,} bytes at {sha[:12]}")
    return data


def licence_at(clone: Path, sha: str) -> str | None:
    """The SPDX id of the licence file at the repository's root at that commit, when it is one this knows."""
    names = git(clone, "ls-tree", "--name-only", sha).splitlines()
    for name in (n for n in names if LICENCE_FILE.match(n)):
        spdx = classify_licence(git(clone, "show", f"{sha}:{name}"))
        if spdx:
            return spdx
    return None


def classify_licence(text: str) -> str | None:
    """The permissive licences a licence file states, told by their own words ("A AND B" for a file that states
    two, as some projects' do); None when it states none of them (an unknown licence is never guessed)."""
    flat = " ".join(text.split()).lower()
    found = []
    if "apache license" in flat and "version 2.0" in flat:
        found.append("Apache-2.0")
    if "permission is hereby granted, free of charge" in flat:
        found.append("MIT")
    if "redistribution and use in source and binary forms" in flat:
        found.append("BSD-3-Clause" if "endorse or promote" in flat else "BSD-2-Clause")
    if "python software foundation license" in flat:
        found.append("PSF-2.0")
    if "permission to use, copy, modify, and/or distribute this software" in flat:
        found.append("ISC")
    return " AND ".join(found) or None


# ---- what makes a commit a task -----------------------------------------------------------------

def is_source(path: str, ext: str = ".py") -> bool:
    return (path.endswith(ext) and not rebench.NOT_SOURCE.search(path) and not NOT_PYTHON_SOURCE.search(path)
            and not is_test(path))


def evidence(c: Commit, files: list[tuple[str, str]]) -> list[str]:
    """Why the commit is taken for a bug fix, in words; empty when neither its subject nor a linked issue says so
    (a test changed beside it supports either, but is no evidence alone: features come with tests too)."""
    said = []
    if FIX_WORDS.search(c.subject) and not NOT_A_FIX.search(c.subject):
        said.append("its message says it fixes a bug")
    issue = ISSUE.search(c.message)
    if issue:
        said.append(f"its message says it fixes issue #{issue.group(1)}")
    tests = sorted(p for _, p in files if is_test(p))
    if said and tests:
        said.append("a test changed beside it: " + ", ".join(tests[:3]))
    return said


def diff(path: str, before: str, after: str) -> rebench.FilePatch:
    """The change as a unified diff with three lines of context (difflib's, so a task is built the same way from
    a clone or from two downloaded files)."""
    body = list(difflib.unified_diff(before.splitlines(), after.splitlines(), f"a/{path}", f"b/{path}", n=3,
                                     lineterm=""))
    found = rebench.parse_patch("\n".join([f"diff --git a/{path} b/{path}", *body]))
    return found[0] if found else rebench.FilePatch(path, path)


def code_changed(before: str, after: str) -> bool | None:
    """Whether the change reaches the code (not only comments, docstrings, annotations or layout); None when a
    version does not parse as the Python running this."""
    try:
        return shape(ast.parse(before)) != shape(ast.parse(after))
    except (SyntaxError, ValueError, RecursionError):
        return None


def shape(tree) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            setattr(node, "body", body[1:] or [ast.Pass()])   # a node with a body of statements, whichever it is
        for name in ("annotation", "returns"):
            if getattr(node, name, None) is not None:
                setattr(node, name, None)
    return ast.dump(tree)


def problem(fp: rebench.FilePatch, before: str, after: str, max_changed: int = MAX_CHANGED) -> str | None:
    """Why this change of one file is not a small local fix, or None when it is one."""
    if len(fp.hunks) != 1:
        return f"the change to {fp.old} has {len(fp.hunks)} hunks (one is taken)"
    changed = sum(1 for sign, _ in fp.hunks[0].lines if sign != " ")
    if changed > max_changed:
        return f"the change to {fp.old} is {changed} lines (at most {max_changed})"
    moved = code_changed(before, after)
    if moved is None:
        return f"{fp.old} does not parse as Python 3 before or after the change"
    if not moved:
        return f"the change to {fp.old} touches only comments, docstrings, annotations or layout"
    return None


# ---- building -----------------------------------------------------------------------------------

def task_id(repo: str, sha: str) -> str:
    return "rebench-" + re.sub(r"[^a-z0-9._-]+", "-", repo.lower().replace("/", "-")).strip("-")[:80] + "-" + \
        sha[:10].lower()


def from_versions(repo: str, sha: str, parent: str, path: str, before: str, after: str, licence: str,
                  extra: dict | None = None, max_changed: int = MAX_CHANGED) -> Task:
    """The task of one fix, from the file before and after it; RowSkipped says why it cannot be one. Its source
    records the two whole versions' sha256 and size, so a pick made of it (pick_of) checks what is downloaded."""
    fp = diff(path, before, after)
    why = problem(fp, before, after, max_changed)
    if why:
        raise RowSkipped(why)
    old, new, key, lines = rebench.window(before, after, fp, rebench.touched(fp))
    name = path.rsplit("/", 1)[-1]
    source = {"kind": "rebench", "repo": repo, "url": f"https://github.com/{repo}", "commit": sha,
              "base_commit": parent, "path": path, "license": licence, "excerpt": {name: lines},
              **fingerprint(before, after)}
    return Task(id=task_id(repo, sha), kind="bug",
                question=f"This code is from {repo} ({path}). Review it: does it hold a bug? If it does, say which "
                         "lines hold it.",
                files={name: old}, control={name: new}, answer={"lines": {name: key}},
                source=dict(source, **(extra or {})))


def fingerprint(before: str, after: str) -> dict:
    """The sha256 and size of the two versions, as the forge serves their bytes (UTF-8)."""
    raw = {"before": before.encode("utf-8"), "after": after.encode("utf-8")}
    return {**{f"sha256_{k}": hashlib.sha256(v).hexdigest() for k, v in raw.items()},
            **{f"bytes_{k}": len(v) for k, v in raw.items()}}


def from_commit(clone: Path, repo: str, sha: str | Commit, licence: str | None = None, ext: str = ".py",
                max_changed: int = MAX_CHANGED) -> Task:
    """The task of one commit of a clone; RowSkipped says why the commit cannot be one."""
    c = sha if isinstance(sha, Commit) else commit(clone, sha)
    files = changed_files(clone, c)
    sources = [(s, p) for s, p in files if is_source(p, ext)]
    if not sources:
        raise RowSkipped("the commit changes no source file (tests, docs and config do not count)")
    if len(sources) > 1:
        raise RowSkipped(f"the commit changes {len(sources)} source files (one is taken)")
    status, path = sources[0]
    if status != "M":
        raise RowSkipped(f"the commit adds or deletes {path} rather than changing it")
    said = evidence(c, files)
    if not said:
        raise RowSkipped(f"nothing says the commit fixes a bug (its message: {c.subject[:80]!r})")
    spdx = licence or licence_at(clone, c.sha)
    if spdx is None:
        raise RowSkipped("the repository's licence file is not one this can name; give it with --license if it "
                         "allows shipping the code")
    extra = {"date": c.date, "message": c.subject[:200], "evidence": said}
    pull = PULL.search(c.subject)
    if pull:
        extra["pull"] = f"https://github.com/{repo}/pull/{pull.group(1)}"
    return from_versions(repo, c.sha, c.parent, path, file_at(clone, c.parent, path), file_at(clone, c.sha, path),
                         spdx, extra, max_changed)


def scan(clone: Path, repo: str, rev: str = "HEAD", count: int = 500, since: str | None = None, **kw):
    """(commit, Task or the reason it is none) for each of the last `count` commits of `rev`."""
    for c in commits(clone, rev, count, since):
        try:
            yield c, from_commit(clone, repo, c, **kw)
        except RowSkipped as e:
            yield c, str(e)


# ---- picks: fixes chosen once, built again the same way from a clone or from downloads (fetch.py) ----------

PICK_FIELDS = ("repo", "commit", "base_commit", "path", "license", "date", "message", "evidence", "pull",
               "sha256_before", "sha256_after", "bytes_before", "bytes_after")


def pick_of(task: Task, **more) -> dict:
    """The entry of a picks file that builds this task again."""
    return {k: task.source[k] for k in PICK_FIELDS if k in task.source} | more
