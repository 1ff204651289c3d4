"""kill -9 loses no acknowledged call: a reply (and the call ids it names) goes out only once its records are
committed. Shown with the record's write lock held by another process, so a commit cannot happen until it lets go."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from tests.fakes import FakeAnthropic, FakeOpenAI
from tests.helpers.data import configure
from tests.test_server import read_lines, serve_env, wait_for_url

ROOT = Path(__file__).resolve().parent.parent


def start(home: Path):
    import queue
    proc = subprocess.Popen([sys.executable, str(ROOT / "serve.py"), "--port", "0", "--no-browser"], cwd=str(ROOT),
                            env=serve_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(proc.stderr, lines), daemon=True).start()
    return proc, wait_for_url(proc, lines, [])


def post(url: str, path: str, body: dict, out: list) -> None:
    req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json", "anthropic-version": "2023-06-01"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        out.append((dict(resp.headers), resp.read()))


ASKS = [
    ("/v1/chat/completions", {"model": "bench/core", "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/chat/completions", {"model": "bench/core", "stream": True, "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/messages", {"model": "bench/core:route", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}),
    ("/v1/messages", {"model": "bench/core:route", "max_tokens": 20, "stream": True,
                      "messages": [{"role": "user", "content": "hello"}]}),
]


def call_ids(headers: dict, body: bytes) -> set[str]:
    ids = set()
    if headers.get("x-bench-call"):
        ids.add(headers["x-bench-call"])
    text = body.decode("utf-8", "replace")
    for piece in text.replace("data:", "\n").splitlines():
        piece = piece.strip()
        if piece.startswith("{"):
            try:
                data = json.loads(piece)
            except ValueError:
                continue
            bench = data.get("bench") or (data.get("delta") or {}).get("bench") or data.get("usage", {}).get("bench")
            for seat in (bench or {}).get("seats") or []:
                ids.add(seat["call"])
    return ids


@pytest.mark.skipif(os.name == "nt", reason="kill -9 is POSIX")
@pytest.mark.parametrize("path, body", ASKS, ids=[f"{p} {'stream' if b.get('stream') else 'whole'} {b['model']}"
                                                  for p, b in ASKS])
def test_an_acknowledged_call_survives_kill_9(home, path, body):
    with FakeOpenAI() as oa, FakeAnthropic() as an:
        configure(home, {"oa": (oa, "openai"), "an": (an, "anthropic")},
                  {"a": ("oa", "m-a", {"tools": True}), "b": ("an", "m-b", {"tools": True})},
                  {"core": {"members": ["a", "b"], "explore": 0}})
        proc, url = start(home)
        blocker = sqlite3.connect(str(home / "bench.db"), isolation_level=None, timeout=30)
        try:
            blocker.execute("BEGIN IMMEDIATE")       # nothing can be committed while this is held
            out: list = []
            asker = threading.Thread(target=post, args=(url, path, body, out), daemon=True)
            asker.start()
            asker.join(timeout=3)
            if out:      # acknowledged while nothing could be committed: a crash now loses it
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=10)
            blocker.execute("ROLLBACK")
            asker.join(timeout=30)
            assert out, "no answer"
            ids = call_ids(*out[0])
            assert ids, out[0][1][:300]
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=10)
            blocker.close()
    conn = sqlite3.connect(str(home / "bench.db"))
    kept = {r[0] for r in conn.execute(f"SELECT id FROM calls WHERE id IN ({','.join('?' * len(ids))})", tuple(ids))}
    conn.close()
    assert kept == ids, f"acknowledged, then lost in a crash: {ids - kept} of {ids}"
