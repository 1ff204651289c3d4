"""bench ask while it waits: the seats still awaited on a terminal's stderr, answers in seat order on a pipe,
and --max-tokens."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from tests.fakes import Reply
from tests.helpers.panel import bench, fake, headings, requests_for  # noqa: F401
from tests.test_cli_ask import ROOT, bench_cli, err, out


def test_answers_come_in_seat_order_on_a_pipe(bench, fake):
    fake.script("m-a", Reply(text="a took its time", delay=0.6))
    proc = bench_cli(bench.url, "ask", "core", "Where is the bug?")
    assert proc.returncode == 0, err(proc)
    assert [h[0] for h in headings(out(proc))] == [1, 2, 3, 4]     # seat 1 finished last
    assert "waiting:" not in err(proc)                                # stderr is no terminal here


def test_max_tokens_is_sent_to_every_seat(bench, fake):
    proc = bench_cli(bench.url, "ask", "core", "q", "--max-tokens", "99")
    assert proc.returncode == 0, err(proc)
    assert {requests_for(fake, s)[0].body["max_tokens"] for s in ("m-a", "m-b", "m-c")} == {99}
    proc = bench_cli(bench.url, "ask", "core", "q", "--max-tokens", "0")
    assert proc.returncode == 2 and "at least 1" in err(proc)


@pytest.mark.skipif(sys.platform.startswith("win"), reason="needs a pseudo-terminal (POSIX)")
def test_a_terminal_sees_which_seats_are_still_awaited(bench, fake):
    import pty
    fake.script("m-b", Reply(text="b is slow", delay=3))
    master, slave = pty.openpty()
    env = {**os.environ, "BENCHWARMERS_URL": bench.url, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen([sys.executable, "-m", "benchwarmers", "ask", "core", "q"], cwd=str(ROOT), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            seen += os.read(master, 4096)
        except OSError:
            break
    stdout = proc.communicate(timeout=30)[0].decode()
    os.close(master)
    text = seen.decode("utf-8", "replace")
    assert proc.returncode == 0, text
    assert re.search(r"waiting: b \d+ s", text), text   # the fast seats were done well before b
    assert [h[0] for h in headings(stdout)] == [1, 2, 3, 4]
    assert "bench verdict" in text
