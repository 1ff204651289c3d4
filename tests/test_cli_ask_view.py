"""bench ask while it waits: the seats still awaited on a terminal's stderr, answers in seat order on a pipe,
and --max-tokens."""
from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys
import threading
import time

import pytest

from benchwarmers.cli.progress import PanelView
from tests.fakes import Reply
from tests.helpers.panel import bench, fake, headings, requests_for  # noqa: F401
from tests.test_cli_ask import ROOT, bench_cli, err, out

WAITING_FOR_B = re.compile(r"waiting: b \d+ s")


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


def ask_with_a_terminal(url: str, terminal: str, enough, gate: threading.Event) -> tuple[int, str, str, str]:
    """`bench ask core q` with `terminal` ("stdout" or "stderr") on a pseudo-terminal and the other on a pipe; `gate`
    is set once enough(what the terminal showed so far) holds. (exit code, the terminal's text then, its whole text,
    the pipe's text)."""
    import pty
    master, slave = pty.openpty()
    env = {**os.environ, "BENCHWARMERS_URL": url, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, terminal: slave}
    proc = subprocess.Popen([sys.executable, "-m", "benchwarmers", "ask", "core", "q"], cwd=str(ROOT), env=env,
                            stdin=subprocess.DEVNULL, **streams)
    os.close(slave)
    seen, then = b"", None
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if then is None and enough(seen.decode("utf-8", "replace")):
                then = seen.decode("utf-8", "replace")
                gate.set()
            if select.select([master], [], [], 0.1)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:           # the child closed the terminal: it has ended
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
    finally:
        gate.set()
        os.close(master)
    piped = proc.communicate(timeout=30)[0 if terminal == "stderr" else 1].decode()
    return proc.returncode, then or "", seen.decode("utf-8", "replace"), piped


@pytest.mark.skipif(sys.platform.startswith("win"), reason="needs a pseudo-terminal (POSIX)")
def test_a_terminal_sees_each_seat_as_it_finishes(bench, fake):
    """The fast seats' answers are on the terminal while the slow seat is still out (held until they are seen)."""
    slow = threading.Event()
    fake.script("m-b", Reply(text="b is slow", hold=slow))
    code, then, text, err_text = ask_with_a_terminal(bench.url, "stdout", lambda shown: "## Seat" in shown, slow)
    assert code == 0, err_text
    assert "## Seat" in then and "b is slow" not in then          # a block arrived before the panel ended
    assert "b is slow" in text and len(headings(text.replace("\r\n", "\n"))) == 4


@pytest.mark.skipif(sys.platform.startswith("win"), reason="needs a pseudo-terminal (POSIX)")
def test_a_terminal_sees_which_seats_are_still_awaited(bench, fake):
    slow = threading.Event()                  # b stays out until its name has shown on the waiting line
    fake.script("m-b", Reply(text="b is slow", hold=slow))
    code, then, text, stdout = ask_with_a_terminal(bench.url, "stderr", WAITING_FOR_B.search, slow)
    assert code == 0, text
    assert WAITING_FOR_B.search(then), text   # the fast seats were done while b was still out
    assert [h[0] for h in headings(stdout)] == [1, 2, 3, 4]
    assert "bench verdict" in text


def test_a_seat_streamed_as_it_writes_is_put_back_in_seat_order_on_a_pipe():
    """The first seat to write comes in pieces (heading and text, more text, its end); the held blocks follow, a piece
    each, then the points: on a pipe each seat's whole block, in seat order, then the points."""
    out, errs = io.StringIO(), io.StringIO()
    view = PanelView(["a", "b"], False, out, errs, ticks=False, in_order=True)
    for piece in ["## Seat 2 · b · member\n\nThe race", " is in the", " cache.", "\n\n",
                  "## Seat 1 · a · member\n\nNo.\n\n", "\n\n## Where they disagree\n\nNo seat contradicts another.\n"]:
        view.text(piece)
    view.finish()
    assert out.getvalue() == ("## Seat 1 · a · member\n\nNo.\n\n"
                              "## Seat 2 · b · member\n\nThe race is in the cache.\n\n"
                              "\n\n## Where they disagree\n\nNo seat contradicts another.\n")
    assert [row[:2] for row in view.so_far()] == [[1, "a"], [2, "b"]]
