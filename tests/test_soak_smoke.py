"""benchmarks/soak.py's smoke run: a short soak with every fault mixed in ends with no error and no lost record."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_short_soak_has_no_errors():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--minutes", "0.25",
                           "--concurrency", "4", "--every", "3"], cwd=str(ROOT), capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert ", 0 errors;" in done.stdout and "Records read back" in done.stdout
