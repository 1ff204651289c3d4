"""SQLite records (bench.db): WAL, busy_timeout, migrations at open, writes queued and committed in batches."""
from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import Any, Callable

from ..errors import StoreFailing
from .batches import Rows, Written, one_by_one, rollback, together
from .migrations import migrate

log = logging.getLogger("benchwarmers.store")
LAG = 0.02   # seconds the writer thread leaves a write to whoever waits for it before committing it itself
BATCH = 500  # writes a transaction at most
CHECKPOINT = 0.25   # seconds between the writer thread's WAL checkpoints while writes come in
WAL_LIMIT = 16 * 2 ** 20   # bytes a WAL is cut back to when a checkpoint starts it over (journal_size_limit)
ANALYSIS_LIMIT = 400       # rows of each index PRAGMA optimize's ANALYZE reads at most (SQLite's advice)
OPTIMIZE_TRIES = 3         # times PRAGMA optimize is tried on a connection another process keeps busy


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")   # a burst of writes leaves no WAL of a hundred MB
    conn.execute(f"PRAGMA analysis_limit={ANALYSIS_LIMIT}")
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


def optimize_one(conn: sqlite3.Connection) -> str | None:
    """PRAGMA optimize, tried again after a moment when another process holds the lock; None, or why it failed."""
    error = None
    for attempt in range(OPTIMIZE_TRIES):
        try:
            conn.execute("PRAGMA optimize").fetchall()
            return None
        except sqlite3.OperationalError as e:
            rollback(conn)
            error = str(e)
            time.sleep(0.05 * (attempt + 1))
    return error


class Database:
    """Writes are queued and committed in batches (one transaction each) on one connection, by whoever waits for
    them first (a reply waiting for its call records commits them itself, with no hand-off to another thread) or,
    for writes nobody waits for, by the writer thread within LAG seconds. Reads use a small pool of connections."""

    def __init__(self, path: Path, readers: int = 4):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or not self.path.stat().st_size
        if not self.path.exists():   # made owner-only before SQLite opens it; its -wal and -shm files copy the mode
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        if new:   # before anything is written: free pages can then be given back a step at a time (compaction.py)
            first = sqlite3.connect(str(self.path))
            first.execute("PRAGMA auto_vacuum=INCREMENTAL")
            first.close()
        self._writer_conn = connect(self.path)
        owner_only(self.path)
        migrate(self._writer_conn)
        # The WAL is copied back into the database by the writer thread, on a connection of its own, rather than by
        # whichever commit crosses SQLite's threshold (a reply waiting for its records would wait for that too).
        self._writer_conn.execute("PRAGMA wal_autocheckpoint=0")
        self._checkpoints = connect(self.path)
        self._checkpointing = threading.Lock()   # the checkpoints' connection, between the writer thread and alone()
        self._commits = 0                      # commits since the last checkpoint
        self._queue: list = []                # writes queued, in number order (taken under _submitting)
        self._numbers = itertools.count(1)    # each write's number, in the order the writer will take them
        self._submitting = threading.Lock()   # a number and its place in the queue are taken together
        self._settled = 0                     # every write up to this number is committed (or failed)
        self._settling = threading.Condition(threading.Lock())
        self._writing = threading.Lock()      # held while a batch is taken from the queue and committed
        self._wake = threading.Event()        # set when something is queued: the writer thread looks LAG later
        self._woken = False                   # _wake set and not cleared yet: a write queued meanwhile need not set it
        self._closing = threading.Event()     # cuts the writer thread's LAG short
        self._readers: queue.SimpleQueue = queue.SimpleQueue()   # (in C: a get and a put are a call each)
        for _ in range(readers):
            self._readers.put(connect(self.path))
        self._closed = False
        self.failing: dict | None = None      # set while batches cannot be committed (a full disk), with the reason
        self._health_lock = threading.Lock()
        self._thread = threading.Thread(target=self._write_loop, name="bench-db-writer", daemon=True)
        self._thread.start()

    # -- writes ------------------------------------------------------------------------------
    def insert(self, *rows: tuple[str, tuple | list], keep: tuple = ()) -> Written:
        """Queue rows, each (head, values) with a head like "INSERT INTO t (a, b)", written together (one
        transaction) and with the batch's other rows of their tables; `keep`: see Rows."""
        return self.submit(Rows(*rows, keep=keep))

    def submit(self, fn: Callable[[sqlite3.Connection], Any]) -> Written:
        """Queue fn(conn), to run inside a batch transaction; what it returns is the result of the Written (done
        once the batch is committed). When another item of its batch fails, fn runs once more after the rollback:
        it should touch nothing but the database, and wait for nothing else."""
        with self._submitting:
            if self._closed:
                written = Written(self, 0)   # number 0: settled from the start
                written._error = RuntimeError("database is closed")
                return written
            written = Written(self, next(self._numbers))
            self._queue.append((fn, written))
            if not self._woken:   # set with the flag, under the lock: no moment where one is set and not the other
                self._woken = True
                self._wake.set()
        return written

    def wait(self, written: Written, timeout: float | None = None) -> None:
        """Until `written` is settled: commit what is queued now when no one else is committing (this thread does
        the work it would otherwise wait for), else wait for whoever is. TimeoutError after `timeout` seconds (a
        batch under way is finished first)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._settled < written._n:   # written.done(), without a call a turn
            if self._writing.acquire(blocking=False):
                try:
                    self._commit_queued()
                finally:
                    self._writing.release()
                continue
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"the record store did not write within {timeout} s")
            with self._settling:   # someone is committing: its settle wakes us (the slice: in case it was not ours)
                self._settling.wait_for(written.done, 0.05 if left is None else min(left, 0.05))

    def execute(self, sql: str, params: tuple | dict = (), wait: bool = False):
        written = self.submit(lambda c: c.execute(sql, params).rowcount)
        return written.result(timeout=60) if wait else written

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
        """Commit what nobody waits for: LAG seconds after something is queued, what is still queued then."""
        checked = time.monotonic()
        while True:
            self._wake.wait()
            self._closing.wait(LAG)
            self._wake.clear()
            with self._submitting:   # after the clear: a write queued from now on sets it again (see submit)
                self._woken = False
            with self._writing:
                self._commit_queued()
            if self._closed and not self._queue:   # nothing is queued once closed
                return
            if self._commits and time.monotonic() - checked >= CHECKPOINT:
                checked = time.monotonic()
                self._checkpoint()

    def _checkpoint(self) -> None:
        """Copy what the WAL holds into the database, as far as readers allow (PASSIVE: nobody waits for it)."""
        self._commits = 0
        try:
            with self._checkpointing:
                self._checkpoints.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            log.warning("a WAL checkpoint failed (the next one tries again)", exc_info=True)

    def truncate_wal(self, busy: float = 2.0) -> bool:
        """Copy the whole WAL into the database and cut it to nothing, this process's writes held meanwhile (a
        PASSIVE checkpoint never catches up with a stream of commits, and the WAL then grows with every one). False
        when readers of another process kept it from finishing within `busy` seconds: the next one tries again."""
        with self._writing, self._checkpointing:
            conn = self._checkpoints
            conn.execute(f"PRAGMA busy_timeout={int(busy * 1000)}")
            try:
                return conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
            except sqlite3.OperationalError:
                return False
            finally:
                conn.execute("PRAGMA busy_timeout=30000")

    def alone(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """fn(conn) in a transaction of its own on the writer's connection, once what is queued now is committed:
        for maintenance (compaction's batches), whose failure (a full disk) must cost no other write its record,
        as it would in a shared batch. A store that cannot write is a 503 saying why."""
        with self._writing:
            self._commit_queued()
            conn = self._writer_conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                result = fn(conn)
                conn.execute("COMMIT")
            except sqlite3.OperationalError as e:
                rollback(conn)
                raise StoreFailing(f"The record store cannot write: {e}.",
                                   "Free disk space (or fix the data folder's permissions), then try again.") from None
            except BaseException:
                rollback(conn)
                raise
            self._commits += 1
            return result

    def _commit_queued(self) -> None:
        """Every write queued now, in batches of up to BATCH, each committed and settled (the write lock held)."""
        conn = self._writer_conn
        while True:
            with self._submitting:   # what is queued, taken at once rather than a get() a write
                work = self._queue
                if not work:
                    return
                if len(work) <= BATCH:
                    self._queue = []
                else:
                    work, self._queue = work[:BATCH], work[BATCH:]
            try:
                self._run_batch(conn, work)
            except BaseException as e:   # the store must outlive any batch: nothing would be recorded again
                log.exception("a batch of %d writes failed", len(work))
                self._fail(e, [w for _, w in work])
            self._commits += 1
            self._settle(work[-1][1]._n)

    def _run_batch(self, conn: sqlite3.Connection, work: list) -> None:
        """One transaction. The items run as they are; when one fails, the transaction is rolled back and the batch
        runs again with each item in its own savepoint, so one bad write does not lose the rest (a savepoint for
        every item would double the statements of every batch for the rare one that fails). A failed transaction
        (a full disk: SQLite may roll it back by itself) fails every item of the batch and marks the store failing;
        the next batch that commits marks it well again."""
        changes = conn.total_changes
        try:
            results = self._transaction(conn, work, isolate=False)
            if results is None:
                results = self._transaction(conn, work, isolate=True)
                assert results is not None   # isolated, a failed item fails alone
        except sqlite3.Error as e:
            rollback(conn)
            self._fail(e, [w for _, w in work])
            return
        if conn.total_changes > changes:   # a batch that wrote nothing (a sync) proves nothing about the disk
            self._recover()
        for written, value, err in results:
            written._value, written._error = value, err

    @staticmethod
    def _transaction(conn: sqlite3.Connection, work: list, isolate: bool) -> list | None:
        """Run the work and commit: [(written, result, error)]; None, rolled back, when an item failed and the items
        were not isolated in savepoints."""
        conn.execute("BEGIN IMMEDIATE")
        results = one_by_one(conn, work) if isolate else together(conn, work)
        if results is not None:
            conn.execute("COMMIT")
        return results

    def _settle(self, n: int) -> None:
        """Every write up to number `n` is committed or failed: one wake-up for all who wait on them."""
        with self._settling:
            self._settled = n
            self._settling.notify_all()

    def _fail(self, error: BaseException, writes: list) -> None:
        with self._health_lock:
            if not self.failing:
                log.error("the record store cannot write: %s (writes fail until it can again)", error)
            self.failing = self.failing or {"since": time.time()}
            self.failing.update(error=f"{type(error).__name__}: {error}", lost=self.failing.get("lost", 0)
                                + len(writes))
        for written in writes:
            written._error = error

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
    def query(self, sql: str, params: Sequence | Mapping[str, Any] = ()) -> list[sqlite3.Row]:
        conn = self._readers.get(timeout=60)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            self._readers.put(conn)

    def one(self, sql: str, params: Sequence | Mapping[str, Any] = ()) -> sqlite3.Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def first(self, sql: str, params: Sequence | Mapping[str, Any] = ()) -> sqlite3.Row:
        """The row of a query that always gives one (an aggregate: COUNT, SUM)."""
        return self.query(sql, params)[0]

    def changed(self, seen: dict) -> bool:
        """Whether another connection, another process's included, committed since the last call given `seen` (the
        caller's memory of each reader's PRAGMA data_version, which SQLite moves on at such a commit; True the first
        time): a few microseconds, so a cache of what another process writes can look at every use."""
        if self._closed:       # its readers are closed, or going: nothing more is read
            return False
        conn = self._readers.get(timeout=60)
        try:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
        finally:
            self._readers.put(conn)
        last, seen[id(conn)] = seen.get(id(conn)), version
        return last != version

    def optimize(self) -> str | None:
        """PRAGMA optimize on every connection, as SQLite advises for long-lived ones (now and then, and at close):
        it gathers statistics (ANALYZE, within ANALYSIS_LIMIT) on the tables whose queries could use them. This
        process's writes are held meanwhile: a reader's ANALYZE must take the write lock, and a commit between its
        read and its write made it fail at once ("database is locked"). Statistics are an aid: what still fails
        (another process writing) is left to the next time. None, or why some were not gathered."""
        conns = [self._readers.get(timeout=60) for _ in range(self._readers.qsize())]
        try:
            with self._writing:
                self._commit_queued()
                failed = [e for e in map(optimize_one, [self._writer_conn] + conns) if e]
        finally:
            for conn in conns:
                self._readers.put(conn)
        if failed:
            log.warning("statistics not gathered on %d connections: %s", len(failed), failed[0])
        return failed[0] if failed else None

    def vacuum_full(self) -> None:
        """The file rewritten (VACUUM) with incremental vacuum on, on the writer's connection, nothing else written
        meanwhile: it needs free disk for a copy of what the record holds, in SQLite's temporary folder, and as much
        again for the WAL (compaction.py checks first); writes wait for it. The WAL is emptied at once after it."""
        with self._writing:
            self._commit_queued()
            try:
                self._writer_conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
                self._writer_conn.execute("VACUUM")
            except sqlite3.OperationalError as e:
                raise StoreFailing(f"The record could not be rewritten: {e}.",
                                   "Free disk space, then try again: the record is as it was.") from None
        self.truncate_wal()

    def close(self) -> None:
        """Commit what is queued, run PRAGMA optimize, then close every connection."""
        with self._submitting:   # nothing is queued once closed: the writer commits what is and ends
            if self._closed:
                return
            self._closed = True
        self._closing.set()
        self._wake.set()
        self._thread.join(timeout=30)
        idle = self._idle_readers()   # the readers not in use now, left in the pool
        for conn in idle:
            self._readers.put(conn)
        for conn in [self._writer_conn] + idle:
            try:
                conn.execute("PRAGMA optimize").fetchall()
            except sqlite3.Error:
                pass   # statistics are an aid: a busy or failing store still closes
        self._checkpoints.close()
        self._writer_conn.close()
        for conn in self._idle_readers():
            conn.close()

    def _idle_readers(self) -> list:
        """The reader connections in the pool now, taken out of it (one a query takes meanwhile is not among them)."""
        idle: list = []
        with contextlib.suppress(queue.Empty):
            while True:
                idle.append(self._readers.get_nowait())
        return idle
