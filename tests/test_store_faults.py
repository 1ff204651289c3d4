"""The record store under a full disk: the writer survives a failed write, says so in /healthz and bench status,
answers admin calls with a clear 503 at once, and keeps what is written once space returns."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fakes import FakeOpenAI
from tests.helpers.data import configure

ROOT = Path(__file__).resolve().parent.parent
ASK = {"model": "bench/core", "messages": [{"role": "user", "content": "x" * 3000}]}


def fill(db) -> None:
    """Cap the database at its current size and use up what is free in it: from then on every write fails with
    SQLite's own 'database or disk is full', as on a full disk."""
    import sqlite3
    db.call(lambda c: c.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)"))
    pages = db.call(lambda c: c.execute("PRAGMA page_count").fetchone()[0])
    db.call(lambda c: c.execute(f"PRAGMA max_page_count = {pages}"))
    for size in (4000, 1000, 200, 40, 1):
        try:
            while True:
                db.submit(lambda c: c.execute("INSERT INTO filler VALUES (zeroblob(?))", (size,))).result(10)
        except sqlite3.OperationalError:
            pass


def free(db) -> None:
    """Room again: in a transaction of its own, so a write still failing in the same batch cannot take it along."""
    db.alone(lambda c: c.execute("PRAGMA max_page_count = 1073741823"))


def test_the_writer_survives_a_full_disk_reports_it_and_recovers(home, make_app):
    with FakeOpenAI() as fake:
        configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a")}, {"core": {"members": ["a"], "explore": 0}})
        app = make_app()
        db = app.bench.db
        before = app("POST", "/v1/chat/completions", ASK)[2]["bench"]["seats"][0]["call"]
        fill(db)
        for _ in range(5):                                         # panels answer; their records cannot be kept
            assert app("POST", "/v1/chat/completions", ASK)[0] == 200
        status, _, health = app("GET", "/healthz")
        assert status == 503 and health["status"] == "failing"
        assert "full" in health["store"]["error"] and health["store"]["lost"] >= 1
        assert app("GET", "/bench/status")[2]["store"]["ok"] is False
        verdict = {"call": before, "useful": True, "note": "n" * 4000, "real": ["r" * 1000] * 16}   # ~20 KB
        started = time.monotonic()
        status, _, reply = app("POST", "/bench/verdict", verdict)
        assert status == 503 and "cannot write" in reply["error"]["message"]   # said, not a 60 s hang and a 500
        assert time.monotonic() - started < 10
        assert db._thread.is_alive()

        free(db)                                                    # space returns
        status, _, reply = app("POST", "/v1/chat/completions", ASK)
        assert status == 200
        assert app("GET", "/healthz")[0] == 200
        call = reply["bench"]["seats"][0]["call"]
        assert app("GET", f"/bench/calls/{call}")[0] == 200         # acknowledged after recovery: kept
        assert app("POST", "/bench/verdict", verdict)[0] == 200


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="RLIMIT_FSIZE and SIGXFSZ (Linux)")
def test_a_commit_that_fails_does_not_kill_the_writer(tmp_path):
    """The disk fills while the batch commits: SQLite rolls the transaction back itself, so the writer's own
    ROLLBACK raised and the thread died; nothing was recorded again until a restart."""
    code = textwrap.dedent(f"""
        import os, resource, signal, sys
        from pathlib import Path
        from benchwarmers.store import Database
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        db = Database(Path({str(tmp_path / 'bench.db')!r}))
        db.call(lambda c: c.execute("CREATE TABLE t (x TEXT)"))
        wal = Path({str(tmp_path / 'bench.db-wal')!r})
        resource.setrlimit(resource.RLIMIT_FSIZE, (wal.stat().st_size + 4096, resource.RLIM_INFINITY))
        writes = [db.submit(lambda c: c.execute("INSERT INTO t VALUES (?)", ("y" * 3000,))) for _ in range(20)]
        try:
            errors = [w.exception(timeout=20) for w in writes]
        except TimeoutError:
            raise AssertionError("the writer died: its writes were never answered")
        assert any(errors), "the writes should have failed"
        assert db._thread.is_alive(), "the writer died"
        assert db.health()["ok"] is False, db.health()
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        db.call(lambda c: c.execute("INSERT INTO t VALUES ('after')"))
        assert db.health()["ok"] is True
        assert db.one("SELECT COUNT(*) AS n FROM t WHERE x = 'after'")["n"] == 1
        db.close()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr
