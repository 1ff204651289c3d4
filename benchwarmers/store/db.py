"""SQLite records (bench.db): WAL, busy_timeout, migrations at open, one writer thread that batches writes."""
from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

from ..errors import StoreFailing
from .migrations import migrate

log = logging.getLogger("benchwarmers.store")
_STOP = object()


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is left of a failed transaction; SQLite may already have (a full disk, an I/O error)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("rolling back a failed batch failed too", exc_info=True)


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def owner_only(path: Path) -> None:
    """The records hold prompts and answers: the database and its -wal and -shm files are for their owner alone
    (POSIX modes; on Windows the user's profile folder already is)."""
    if os.name == "nt":
        return
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if p.stat().st_mode & 0o077:
                os.chmod(p, 0o600)
        except OSError:
            pass   # not there yet, or not ours to change: the folder's own mode still guards it


class Database:
    """Writes go through one thread in batches (one transaction each); reads use a small pool of connections."""

    def __init__(self, path: Path, readers: int = 4):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():   # made owner-only before SQLite opens it; its -wal and -shm files copy the mode
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._writer_conn = connect(self.path)
        owner_only(self.path)
        migrate(self._writer_conn)
        self._queue: queue.Queue = queue.Queue()
        self._readers: queue.Queue = queue.Queue()
        for _ in range(readers):
            self._readers.put(connect(self.path))
        self._closed = False
        self.failing: dict | None = None      # set while batches cannot be committed (a full disk), with the reason
        self._health_lock = threading.Lock()
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
        """Run fn on the writer and wait for it (for writes whose result the caller needs now); a store that
        cannot commit is a 503 saying why."""
        try:
            return self.submit(fn).result(timeout=60)
        except sqlite3.OperationalError as e:
            raise StoreFailing(f"The record store cannot write: {e}.",
                               "Free disk space (or fix the data folder's permissions); writing resumes by itself."
                               ) from None

    def sync(self) -> None:
        """Wait until every write submitted so far is committed (or failed)."""
        try:
            self.submit(lambda c: None).result(timeout=60)
        except sqlite3.Error:
            pass   # readers then see what was committed; health() says why the rest was not

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
                try:
                    self._run_batch(conn, work)
                except BaseException as e:   # the writer must outlive any batch: nothing would be recorded again
                    log.exception("a batch of %d writes failed", len(work))
                    self._fail(e, [fut for _, fut in work])
            if stop:
                return

    def _run_batch(self, conn: sqlite3.Connection, work: list) -> None:
        """One transaction: each item in its own savepoint, so one bad write does not lose the rest. A failed
        transaction (a full disk: SQLite may roll it back by itself) fails every item of the batch and marks the
        store failing; the next batch that commits marks it well again."""
        results, changes = [], conn.total_changes
        try:
            conn.execute("BEGIN IMMEDIATE")
            for fn, fut in work:
                conn.execute("SAVEPOINT item")
                try:
                    results.append((fut, fn(conn), None))
                    conn.execute("RELEASE item")
                except BaseException as e:
                    if not conn.in_transaction:      # the whole transaction is gone, not just this item
                        raise
                    conn.execute("ROLLBACK TO item")
                    conn.execute("RELEASE item")
                    results.append((fut, None, e))
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            _rollback(conn)
            self._fail(e, [fut for _, fut in work])
            return
        if conn.total_changes > changes:   # a batch that wrote nothing (a sync) proves nothing about the disk
            self._recover()
        for fut, value, err in results:
            fut.set_exception(err) if err else fut.set_result(value)

    def _fail(self, error: BaseException, futures: list) -> None:
        with self._health_lock:
            if not self.failing:
                log.error("the record store cannot write: %s (writes fail until it can again)", error)
            self.failing = self.failing or {"since": time.time()}
            self.failing.update(error=f"{type(error).__name__}: {error}", lost=self.failing.get("lost", 0)
                                + len(futures))
        for fut in futures:
            if not fut.done():
                fut.set_exception(error)

    def _recover(self) -> None:
        if self.failing:
            with self._health_lock:
                log.warning("the record store writes again after %s", self.failing.get("error"))
                self.failing = None

    def health(self) -> dict:
        """{"ok": True} or {"ok": False, "error", "since", "lost"}: whether the last batch could be committed."""
        with self._health_lock:
            return {"ok": True} if not self.failing else {"ok": False, **self.failing}

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
