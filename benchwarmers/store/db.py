"""SQLite records (bench.db): WAL, busy_timeout, migrations at open, one writer thread that batches writes."""
from __future__ import annotations

import queue
import sqlite3
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

from .migrations import migrate

_STOP = object()


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Database:
    """Writes go through one thread in batches (one transaction each); reads use a small pool of connections."""

    def __init__(self, path: Path, readers: int = 4):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer_conn = connect(self.path)
        migrate(self._writer_conn)
        self._queue: queue.Queue = queue.Queue()
        self._readers: queue.Queue = queue.Queue()
        for _ in range(readers):
            self._readers.put(connect(self.path))
        self._closed = False
        self._thread = threading.Thread(target=self._write_loop, name="bench-db-writer", daemon=True)
        self._thread.start()

    # -- writes ------------------------------------------------------------------------------
    def submit(self, fn: Callable[[sqlite3.Connection], Any]) -> Future:
        """Run fn(conn) on the writer thread inside a batch transaction; the Future holds its result."""
        fut: Future = Future()
        if self._closed:
            fut.set_exception(RuntimeError("database is closed"))
            return fut
        self._queue.put((fn, fut))
        return fut

    def execute(self, sql: str, params: tuple | dict = (), wait: bool = False):
        fut = self.submit(lambda c: c.execute(sql, params).rowcount)
        return fut.result(timeout=60) if wait else fut

    def call(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run fn on the writer and wait for it (for writes whose result the caller needs now)."""
        return self.submit(fn).result(timeout=60)

    def sync(self) -> None:
        """Wait until every write submitted so far is committed."""
        self.submit(lambda c: None).result(timeout=60)

    def _write_loop(self) -> None:
        conn = self._writer_conn
        while True:
            item = self._queue.get()
            batch = [item]
            while len(batch) < 500:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(b is _STOP for b in batch)
            work = [b for b in batch if b is not _STOP]
            if work:
                self._run_batch(conn, work)
            if stop:
                return

    @staticmethod
    def _run_batch(conn: sqlite3.Connection, work: list) -> None:
        results = []
        conn.execute("BEGIN IMMEDIATE")
        for fn, fut in work:
            conn.execute("SAVEPOINT item")
            try:
                results.append((fut, fn(conn), None))
                conn.execute("RELEASE item")
            except BaseException as e:   # one bad write must not lose the rest of the batch
                conn.execute("ROLLBACK TO item")
                conn.execute("RELEASE item")
                results.append((fut, None, e))
        try:
            conn.execute("COMMIT")
        except BaseException as e:
            conn.execute("ROLLBACK")
            results = [(fut, None, e) for fut, _, _ in results]
        for fut, value, err in results:
            fut.set_exception(err) if err else fut.set_result(value)

    # -- reads -------------------------------------------------------------------------------
    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        conn = self._readers.get(timeout=60)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            self._readers.put(conn)

    def one(self, sql: str, params: tuple | dict = ()) -> sqlite3.Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def close(self) -> None:
        """Commit what is queued, then close every connection."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(timeout=30)
        self._writer_conn.close()
        while not self._readers.empty():
            self._readers.get_nowait().close()
