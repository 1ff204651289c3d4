"""What a new user types first: bare `benchwarmers` with serve's flags, `python bench.py` in a checkout, help pages
that offer only what the command takes, and `scripts/check.py --help`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_server import drain, serve_env, start_serve, stop, wait_for_url

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=str(ROOT), capture_output=True, text=True, encoding="utf-8",
                          errors="replace", timeout=60, **kw)


def test_bare_benchwarmers_takes_the_serve_flags(home):
    proc, lines = start_serve(["--no-browser", "--port", "0"], serve_env(home), script="bench.py")
    seen: list = []
    url = wait_for_url(proc, lines, seen)
    assert url.startswith("http://127.0.0.1:")
    assert stop(proc) == 0
    assert "Dashboard and gateway at" in drain(lines, seen)


def test_bare_benchwarmers_with_a_bad_flag_is_a_usage_error(home):
    done = run("bench.py", "--port", "eighty", env=serve_env(home))
    assert done.returncode == 2 and "--port" in done.stderr and "Traceback" not in done.stderr


def test_bench_py_is_the_cli_in_a_checkout(tmp_path):
    done = run(str(ROOT / "bench.py"), "--version", env={**serve_env(tmp_path), "PYTHONPATH": ""})
    assert done.returncode == 0 and done.stdout.startswith("benchwarmers ")


@pytest.mark.parametrize("command, offered, not_offered", [
    ("gateway", ["--host", "--port"], ["--open", "--no-browser", "--url", "--json"]),
    ("serve", ["--host", "--port", "--open", "--no-browser"], ["--url", "--json"]),
    ("init", ["--endpoint", "--key-stdin"], ["--url", "--json"]),
])
def test_server_help_pages_offer_only_their_own_flags(command, offered, not_offered):
    from benchwarmers.cli.main import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    text = sub.format_help()
    for flag in offered:
        assert flag in text
    for flag in not_offered:
        assert flag not in text, (command, flag)


def test_the_gateway_still_takes_no_browser_from_older_scripts():
    from benchwarmers.cli.main import build_parser
    assert build_parser().parse_args(["gateway", "--no-browser"]).role == "gateway"


def test_check_py_help_prints_help_and_does_nothing_else():
    done = run("scripts/check.py", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: python scripts/check.py")
    assert "--quick" in done.stdout and "check:" not in done.stdout and not done.stderr
