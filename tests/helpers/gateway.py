"""`python gateway.py --port 0` on a test's data folder: another process, as a user runs it."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.helpers.http import Http
from tests.helpers.panel import wait_for

ROOT = Path(__file__).resolve().parent.parent.parent


def start_gateway(home: Path) -> tuple[subprocess.Popen, str]:
    """(the process, its URL) once it answers /healthz; the caller stops it (stop_gateway)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env.update(BENCHWARMERS_HOME=str(home), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, str(ROOT / "gateway.py"), "--port", "0", "--no-browser"], cwd=ROOT,
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        url = next((w for w in line.split() if w.startswith("http://")), None)
        if url:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            wait_for(lambda: Http(url)("GET", "/healthz")[0] == 200)
            return proc, url.rstrip("/")
    stop_gateway(proc)
    raise AssertionError(f"the gateway did not start (exit {proc.poll()})")


def stop_gateway(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(30)
