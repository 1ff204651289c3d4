"""A repository's files as the suite reads them: confined to its root (a link out of it is refused), regular files
only (no FIFO, device or /proc file), test files told apart from the code under test."""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist",
             "site-packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".eggs"}
MAX_FILE_BYTES = 1_000_000
TEST_DIR = re.compile(r"(^|/)(tests?|testing)/")


def is_test(rel: str) -> bool:
    """A test file (test_*.py, *_test.py, conftest.py, test.py, anything under a tests/ folder): never the code a
    bug is planted in."""
    name = rel.rsplit("/", 1)[-1]
    return bool(TEST_DIR.search(rel) or name.startswith("test_") or name.endswith("_test.py")
                or name in ("conftest.py", "test.py", "tests.py"))


@dataclass
class Listing:
    files: list = field(default_factory=list)        # (relative posix path, resolved Path) of code to read
    tests: int = 0                                   # test files seen (left alone)
    refused: list = field(default_factory=list)      # "path: why" for what was not read


def python_files(root: Path, suffix: str = ".py") -> Listing:
    """Every `suffix` file under `root` that is code, not a test: linked folders are not followed, a linked file
    is read only when it resolves inside the root, and only regular files are read."""
    root = Path(root).resolve()
    found = Listing()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(n for n in filenames if n.endswith(suffix)):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            why = refusal(root, path)
            if why:
                found.refused.append(f"{rel}: {why}")
            elif is_test(rel):
                found.tests += 1
            else:
                found.files.append((rel, path.resolve()))
    return found


def refusal(root: Path, path: Path) -> str | None:
    """Why a file is not read: it resolves outside the repository, is not a regular file, or is too large."""
    try:
        real = path.resolve(strict=True)
        info = os.stat(real)
    except (OSError, RuntimeError):               # a dangling link or a loop of links
        return "a link that leads nowhere"
    if not real.is_relative_to(root):
        return "a link to a file outside the repository"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_size > MAX_FILE_BYTES:
        return f"over {MAX_FILE_BYTES:,} bytes"
    return None


def read(path: Path) -> str | None:
    """The file's text, or None when it is not UTF-8."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
