"""benchmarks/seatcost.py's smoke run: every case measured against real processes, the fits printed; bad options
refused with exit 2."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def seatcost(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "seatcost.py"), *args], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=180)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU a panel comes from /proc")
def test_every_case_is_measured_and_the_fits_are_printed():
    done = seatcost("--rounds", "1", "--requests", "6", "--concurrency", "2")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and " | 2 | " in line]
    assert [r.split("|")[1].strip() for r in rows] == [
        "service, 1 seat, points off", "service, 3 seats, points off", "service, 5 seats, points off",
        "service, 5 seats and the referee", "recording fan-out, 1 seat", "recording fan-out, 3 seats",
        "recording fan-out, 5 seats"]
    assert all(r.split("|")[-2].strip() == "0" for r in rows), rows    # no errors in any case
    assert "- c=2: a seat costs the service" in done.stdout and "seats' worth" in done.stdout


def test_bad_options_are_refused():
    for args in (("--rounds", "0"), ("--requests", "many"), ("--concurrency", "16,x"), ("--concurrency", "0")):
        done = seatcost(*args)
        assert done.returncode == 2 and "seatcost.py" in done.stderr and "Traceback" not in done.stderr, args
