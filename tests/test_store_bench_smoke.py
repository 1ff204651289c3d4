"""benchmarks/store.py's smoke run: a row for each number of panels a commit, and bad options refused with exit 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def store_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "store.py"), *args], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120)


def test_a_row_for_each_number_of_panels_a_commit():
    done = store_bench("20", "--together", "1,4")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith(("| 1 |", "| 4 |"))]
    assert [r.split("|")[1].strip() for r in rows] == ["1", "1", "4", "4"]
    assert all("first four fifths" in r or "last fifth" in r for r in rows)


def test_bad_options_are_refused():
    for args in (("many",), ("20", "--together", "two"), ("20", "--together", "0")):
        done = store_bench(*args)
        assert done.returncode == 2 and "store.py" in done.stderr and "Traceback" not in done.stderr
