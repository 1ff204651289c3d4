"""A small git repository built in a test, whose history holds one bug fix among a refactor, a docs change and a
test-only change (the history source of rebench tasks reads it)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

MIT = ("MIT License\n\nCopyright (c) 2020 Example\n\nPermission is hereby granted, free of charge, to any person "
       "obtaining a copy of this software...\n")
CLAMP = '''"""Numbers kept within bounds."""


def clamp(value, low, high):
    """value, or the nearest bound."""
    if value < low:
        return low
    if value > high:
        return low
    return value


def span(low, high):
    return high - low
'''
TEST = "from widgets.core import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"


def commit(repo: Path, message: str, files: dict, when: int) -> str:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = dict(os.environ, GIT_AUTHOR_DATE=f"{when} +0000", GIT_COMMITTER_DATE=f"{when} +0000")
    git = ["git", "-C", str(repo), "-c", "user.name=Test", "-c", "user.email=test@example.com",
           "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["add", "-A"], check=True, capture_output=True, env=env)
    subprocess.run(git + ["commit", "-q", "-m", message], check=True, capture_output=True, env=env)
    return subprocess.run(git + ["rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def fix_repo(tmp_path: Path) -> tuple[Path, dict]:
    """A repository whose history holds one fix among a refactor, a docs change and a test-only change."""
    repo = tmp_path / "widgets"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    shas = {"initial": commit(repo, "First version", {"LICENSE": MIT, "widgets/core.py": CLAMP,
                                                       "README.md": "# widgets\n"}, 1_600_000_000)}
    fixed = CLAMP.replace("    if value > high:\n        return low", "    if value > high:\n        return high")
    shas["fix"] = commit(repo, "Fix clamp returning the low bound above high (closes #7)",
                         {"widgets/core.py": fixed, "tests/test_core.py": TEST}, 1_600_000_100)
    shas["refactor"] = commit(repo, "Refactor: name the width", {"widgets/core.py": fixed.replace(
        "    return high - low", "    width = high - low\n    return width")}, 1_600_000_200)
    described = (repo / "widgets/core.py").read_text().replace("the nearest bound", "or else the nearest bound")
    shas["docs"] = commit(repo, "Fix the description of clamp",
                          {"README.md": "# widgets\n\nKeeps numbers in bounds.\n", "widgets/core.py": described},
                          1_600_000_300)
    shas["tests"] = commit(repo, "Fix the flaky test",
                           {"tests/test_core.py": TEST + "    assert clamp(1, 0, 3) == 1\n"}, 1_600_000_400)
    return repo, shas
