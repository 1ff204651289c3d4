"""benchmarks/record_scale.py's smoke run, as CI runs it (10k seat calls): a folder built the service's way, replicated and checked against
the service's rows, then timed; the report has every part, the check finds the replica equal, and bad options are
refused."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def scale(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "record_scale.py"), *args], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_the_ci_smoke_run_builds_checks_and_times_10k(tmp_path):
    done = scale("--quick", "--data", str(tmp_path), timeout=480)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout
    folder = next(line for line in out.splitlines() if line.startswith("| 10k |"))
    assert folder.count("| equal |") == 2 or "| equal | equal |" in folder, folder   # replica and service agree
    for part in ("## Route turns and a panel ask", "route turn right after a verdict", "## Pages, API reads",
                 "page `/calls`", "api `/bench/record`", "cli `bench verdicts pending`", "## Aims at 10k"):
        assert part in out, part
    assert (tmp_path / "results" / "run-10k.json").exists()
    again = scale("--report", "run", "--sizes", "10k", "--data", str(tmp_path))   # the figures kept, printed again
    assert again.returncode == 0 and "| 10k |" in again.stdout


def test_bad_options_are_refused():
    for args in (("--calls", "10"), ("--sizes", "2m"), ("--report", "x")):
        done = scale(*args, timeout=60)
        assert done.returncode == 2 and "record_scale.py" in done.stderr and "Traceback" not in done.stderr, done
