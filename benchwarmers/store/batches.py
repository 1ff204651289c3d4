"""The parts of a batched write: its handle (Written), rows to insert, and a batch committed together or one by one."""
from __future__ import annotations

import functools
import logging
import sqlite3
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .db import Database

log = logging.getLogger("benchwarmers.store")


class Written:
    """What submit() returns: the write's result once its batch is committed, as a Future would hold it
    (`done`, `result`, `exception`). A batch settles all of its writes with one wake-up of whoever waits: the writer
    settles writes in the order they were submitted, so a write is done once the settled count reaches its number."""
    __slots__ = ("_db", "_n", "_value", "_error")

    def __init__(self, db: "Database", n: int):
        self._db, self._n = db, n
        self._value: Any = None
        self._error: BaseException | None = None

    def done(self) -> bool:
        return self._db._settled >= self._n

    def exception(self, timeout: float | None = None) -> BaseException | None:
        """The error that kept it from being written (None once it is); TimeoutError when not settled in time.
        Waiting commits it: see Database.wait."""
        if not self.done():
            self._db.wait(self, timeout)
        return self._error

    def result(self, timeout: float | None = None) -> Any:
        error = self.exception(timeout)
        if error is not None:
            raise error
        return self._value


def first_error(writes, deadline: float) -> BaseException | None:
    """Wait until each of `writes` is settled: the first error that kept one from being written, or None once all
    are; TimeoutError when one is not settled by `deadline` (time.monotonic()). Writes settle in order, so one wait
    usually does it: one settled already costs no call (this runs for every reply)."""
    for written in writes:
        db = written._db
        if db._settled < written._n:
            db.wait(written, max(0.0, deadline - time.monotonic()))
        if written._error is not None:
            return written._error
    return None


class Rows:
    """A write of rows, each (head, values) with a head like "INSERT INTO t (a, b)", all in the same transaction.
    The rows of one table in a batch go in together, one executemany a table instead of an execute a row. `keep`:
    (fn, item) pairs for what is kept from these rows (the record's standings): once the rows are in, each fn is
    called once with the items of every such write of the batch, `fn(conn, items)`, in the same transaction."""
    __slots__ = ("rows", "keep")

    def __init__(self, *rows: tuple[str, tuple | list], keep: tuple = ()):
        self.rows, self.keep = rows, keep

    def __call__(self, conn: sqlite3.Connection) -> None:   # alone: a batch retried item by item
        for head, values in self.rows:
            conn.execute(insert_sql(head, len(values)), values)
        _keep(conn, (self,))


def _keep(conn: sqlite3.Connection, runs) -> None:
    """Each keeper of these Rows once, with its items in the order they came."""
    by_fn: dict = {}
    for run in runs:
        for fn, item in run.keep:
            if fn in by_fn:   # `in`, not setdefault(): no list made and thrown away for every item
                by_fn[fn].append(item)
            else:
                by_fn[fn] = [item]
    for fn, items in by_fn.items():
        fn(conn, items)


@functools.lru_cache(maxsize=64)
def insert_sql(head: str, width: int) -> str:
    """The statement that inserts one row of `width` values: `head` ("INSERT INTO t (a, b)") and its VALUES."""
    return f"{head} VALUES ({', '.join('?' * width)})"


def _insert_rows(conn: sqlite3.Connection, runs: list) -> None:
    """The (head, values) rows of these Rows, an executemany per table (in the order each table first comes): one
    statement a table, stepped in C, rather than an execute a row."""
    tables: dict[str, list] = {}
    for run in runs:
        for head, values in run.rows:
            if head in tables:
                tables[head].append(values)
            else:
                tables[head] = [values]
    for head, values in tables.items():
        conn.executemany(insert_sql(head, len(values[0])), values)


def together(conn: sqlite3.Connection, work: list) -> list | None:
    """Each item in turn, runs of rows together (with what is kept from them, before the next item runs); None,
    rolled back, when one failed."""
    results: list[tuple[Written, Any, BaseException | None]] = []
    runs: list = []   # the Rows items since the last other item, written together
    try:
        for fn, written in work:
            if type(fn) is Rows:
                runs.append(fn)
                results.append((written, None, None))
                continue
            if runs:
                _insert_rows(conn, runs)
                _keep(conn, runs)
                runs = []
            results.append((written, fn(conn), None))
        if runs:
            _insert_rows(conn, runs)
            _keep(conn, runs)
    except BaseException:
        if not conn.in_transaction:      # the whole transaction is gone, not just this item
            raise
        conn.execute("ROLLBACK")
        return None
    return results


def one_by_one(conn: sqlite3.Connection, work: list) -> list:
    """Each item in its own savepoint, so one that fails costs only itself."""
    results: list[tuple[Written, Any, BaseException | None]] = []
    for fn, written in work:
        conn.execute("SAVEPOINT item")
        try:
            results.append((written, fn(conn), None))
            conn.execute("RELEASE item")
        except BaseException as e:
            if not conn.in_transaction:
                raise
            conn.execute("ROLLBACK TO item")
            conn.execute("RELEASE item")
            results.append((written, None, e))
    return results


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is left of a failed transaction; SQLite may already have (a full disk, an I/O error)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("rolling back a failed batch failed too", exc_info=True)
