"""The bench command where the locale cannot spell Unicode (Windows with its output redirected is one): answers are
written as UTF-8, piped stdin is read as UTF-8, and neither fails."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.panel import bench, fake, requests_for  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "Où est le bug ? naïve café · 漢字 ✓"


def ascii_locale_cli(url: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """`python -m benchwarmers ...` in the C locale without UTF-8 mode: Python's stdio is ASCII there, as a
    redirected stream on Windows is its code page."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8") and
           not k.startswith("LC_")}
    env.update(BENCHWARMERS_URL=url, PYTHONPATH=str(ROOT), LC_ALL="C", LANG="C", PYTHONCOERCECLOCALE="0",
               PYTHONUTF8="0")
    return subprocess.run([sys.executable, "-m", "benchwarmers", *args], cwd=str(ROOT), env=env, input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None, capture_output=True, timeout=60)


def test_answers_and_piped_stdin_are_utf8_whatever_the_locale(bench, fake):
    proc = ascii_locale_cli(bench.url, "ask", "core", stdin=("\ufeff" + PROMPT + "\n").encode("utf-8"))
    stdout, stderr = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert proc.returncode == 0, stderr
    assert requests_for(fake, "m-a")[-1].body["messages"][-1]["content"] == PROMPT + "\n"   # no BOM, no mojibake
    assert "## Seat 1 · a · member" in stdout and f"m-a says: {PROMPT}" in stdout


def test_an_argument_prompt_is_answered_in_utf8_too(bench, fake):
    proc = ascii_locale_cli(bench.url, "ask", "core", "Where is the bug?")
    assert proc.returncode == 0, proc.stderr.decode("utf-8")
    assert "## Seat 2 · b · member" in proc.stdout.decode("utf-8")


def test_bad_bytes_on_stdin_are_replaced_not_a_crash(bench, fake):
    proc = ascii_locale_cli(bench.url, "ask", "core", stdin=b"caf\xe9 latin-1\n")
    assert proc.returncode == 0, proc.stderr.decode("utf-8")
    assert requests_for(fake, "m-a")[-1].body["messages"][-1]["content"] == "caf\ufffd latin-1\n"
