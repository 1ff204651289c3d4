"""CLIENTS.md against a live service: every snippet runs (sh, Python, Node) and prints the panel's answer, except
those its section marks as not run by the docs test, which must say why."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import shell
from tests.test_docs import doc_setup

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "CLIENTS.md"
NODE_CLIENTS = ROOT / ".venv" / "node-clients" / "node_modules"
NOT_RUN = "*Not run by the docs test: "
ANSWER = "says: Name a prime."        # the fake upstreams' echo, in every seat's answer
RUNNERS = {"sh": "sh", "python": "py", "js": "mjs"}

pytestmark = pytest.mark.slow


def snippets() -> list[tuple[str, str, str, bool]]:
    """(heading, language, code, run?) for each fenced block of CLIENTS.md, in order."""
    out, heading, marked = [], "", False
    for part in re.split(r"(```(?:sh|python|js)\n.*?```)", DOC.read_text(encoding="utf-8"), flags=re.S):
        block = re.match(r"```(sh|python|js)\n(.*?)```", part, re.S)
        if block:
            out.append((heading, block.group(1), block.group(2), not marked))
            continue
        for line in part.splitlines():
            if line.startswith("#"):
                heading, marked = line.lstrip("# ").strip(), False
            marked = marked or line.startswith(NOT_RUN)
    return out


SNIPPETS = snippets()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A service over the fakes GATEWAY.md's examples use (collection core of four seats), for every snippet."""
    from benchwarmers import home as home_mod
    from benchwarmers.service.lifecycle import Service
    home = tmp_path_factory.mktemp("clients") / "data"
    home_mod.init(home)
    fakes, _ = doc_setup(home)
    service = Service(home).start()
    yield service.url
    service.stop()
    for fake in fakes:
        fake.stop()


def test_the_page_marks_what_it_does_not_run_and_says_why():
    text = DOC.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith(NOT_RUN):
            assert len(line) > len(NOT_RUN) + 20, line
    assert sum(run for *_, run in SNIPPETS) >= 12
    for client in ("llm", "llm-ollama", "ChatOpenAI", "ChatAnthropic", "LiteLLM", "openai", "AI SDK", "curl"):
        assert client in text
    for page in ("README.md", "GATEWAY.md"):
        assert "CLIENTS.md" in (ROOT / page).read_text(encoding="utf-8"), page


@pytest.mark.parametrize("heading, language, code, run", SNIPPETS,
                         ids=[f"{i}-{h}-{lang}" for i, (h, lang, *_rest) in enumerate(SNIPPETS)])
def test_each_snippet_prints_the_panel(served, tmp_path, heading, language, code, run):
    if not run:
        pytest.skip(f"CLIENTS.md marks {heading!r} as not run by the docs test")
    script = tmp_path / f"snippet.{RUNNERS[language]}"
    script.write_text(code.replace("http://127.0.0.1:8122", served), encoding="utf-8")
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONIOENCODING": "utf-8"}     # a Python snippet prints the panel's "·" whatever the code page
    if language == "sh":
        if not shell.bash():
            pytest.skip(shell.WHY)
        command = [shell.bash(), script.as_posix()]
    elif language == "python":
        command = [sys.executable, str(script)]
    else:
        if not shutil.which("node") or not NODE_CLIENTS.is_dir():
            pytest.skip("needs node and the Node clients (scripts/check.py installs them into .venv/node-clients)")
        try:   # an ES module resolves its imports from its own folder up
            (tmp_path / "node_modules").symlink_to(NODE_CLIENTS, target_is_directory=True)
        except OSError:
            pytest.skip("cannot link node_modules here (Windows without the symlink privilege)")
        command = ["node", str(script)]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=120)
    assert done.returncode == 0, f"{heading}:\n{done.stdout[-1000:]}\n{done.stderr[-2000:]}"
    assert ANSWER in done.stdout, f"{heading}: no answer in\n{done.stdout[-1000:]}\n{done.stderr[-1000:]}"
