"""Compaction's cost in disk and time: a record of N seat calls (most of them older than the retention) pruned and
its free pages given back, with the database's and its WAL's sizes sampled from a thread all along.

    python benchmarks/compaction.py                       # 100,000 calls, 90% of them 100 days old, keep 30 days
    python benchmarks/compaction.py --calls 20000 --writers 2   # with two threads writing calls meanwhile
    python benchmarks/compaction.py --full                # the file rewritten (VACUUM) as well
    python benchmarks/compaction.py --root ../other       # another checkout's store, for a before/after

The record is built through the store (Calls.add, as the panel writes), then closed and opened again, as a service
starting on it would. Figures: the record before (database + WAL), the peak of database + WAL + shared memory file
while compacting (sampled every 5 ms), that peak over the record's size, the WAL's own peak, the WAL left after it, the file after it,
the time it took, and the writes of the writer threads that failed. Prints Markdown; asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--calls", type=int, default=100_000)
ARGS.add_argument("--answer-chars", type=int, default=2_400, help="characters of each answer (default 2,400)")
ARGS.add_argument("--old", type=float, default=0.9, help="the share of calls older than the retention")
ARGS.add_argument("--writers", type=int, default=0, help="threads writing calls while it compacts")
ARGS.add_argument("--full", action="store_true", help="rewrite the file too (VACUUM)")
ARGS.add_argument("--root", type=Path, default=ROOT, help="the checkout whose store is measured")
OPTS = ARGS.parse_args()
sys.path.insert(0, str(OPTS.root.resolve()))

from benchwarmers.store import compaction  # noqa: E402
from benchwarmers.store.calls import CallRecord, Calls  # noqa: E402
from benchwarmers.store.db import Database  # noqa: E402
from benchwarmers.store.ids import record_id  # noqa: E402
from benchwarmers.store.ledger import Line  # noqa: E402

DAY = 86400
MB = 2 ** 20


def files(path: Path) -> int:
    """Bytes of the database, its WAL and its shared-memory file (0 for one that is not there)."""
    total = 0
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def build(path: Path, n: int, chars: int, old: float, now: float) -> None:
    db = Database(path)
    calls = Calls(db)
    answer = ("a fair answer, " * (chars // 15 + 1))[:chars]
    cut = int(n * old)
    last = None
    for i in range(n):
        created = now - (100 * DAY if i < cut else DAY) + i / 10
        cid = record_id()
        last = calls.add(CallRecord(id=cid, model=f"m{i % 12:02d}", status="ok", panel=None, collection="core",
                                    kind="member", answer=answer, seconds=1.0, created=created),
                         Line("e", f"m{i % 12:02d}", "member", 300, 600, call=cid, collection="core",
                              created=created))
        if i % 5000 == 4999:
            last.result(timeout=120)
    db.sync()
    db.close()


class Sampler(threading.Thread):
    """The peak of the record's files, every 5 ms until stopped."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.path, self.peak, self.wal, self.stop = path, files(path), 0, threading.Event()

    def run(self) -> None:
        wal = self.path.with_name(self.path.name + "-wal")
        while not self.stop.wait(0.005):
            self.peak = max(self.peak, files(self.path))
            try:
                self.wal = max(self.wal, wal.stat().st_size)
            except OSError:
                pass


def writer(db: Database, stop: threading.Event, failed: list) -> None:
    calls = Calls(db)
    while not stop.is_set():
        cid = record_id()
        w = calls.add(CallRecord(id=cid, model="m00", status="ok", panel=None, collection="core", kind="member",
                                 answer="x" * 900, seconds=1.0, created=time.time()))
        try:
            w.result(timeout=60)
        except Exception as e:   # noqa: BLE001 (counted, not raised: the figure is how many)
            failed.append(type(e).__name__)


def main() -> None:
    now = time.time()
    with tempfile.TemporaryDirectory(prefix="bw-compaction-") as tmp:
        path = Path(tmp) / "bench.db"
        started = time.monotonic()
        build(path, OPTS.calls, OPTS.answer_chars, OPTS.old, now)
        built = time.monotonic() - started
        before = files(path)
        db = Database(path)
        stop, failed = threading.Event(), []
        threads = [threading.Thread(target=writer, args=(db, stop, failed), daemon=True) for _ in range(OPTS.writers)]
        sampler = Sampler(path)
        sampler.start()
        for t in threads:
            t.start()
        started = time.monotonic()
        error = None
        try:
            done = compaction.compact(db, 30, full=OPTS.full, now=now)
        except Exception as e:   # noqa: BLE001 (a figure like any other)
            done, error = {}, f"{type(e).__name__}: {e}"
        took = time.monotonic() - started
        stop.set()
        for t in threads:
            t.join()
        sampler.stop.set()
        sampler.join()
        wal = path.with_name(path.name + "-wal")
        wal_after = wal.stat().st_size if wal.exists() else 0
        after = path.stat().st_size
        db.close()
    print(f"## Compaction of {OPTS.calls:,} calls ({OPTS.old:.0%} older than the retention, "
          f"{OPTS.answer_chars:,}-character answers){' with --full' if OPTS.full else ''}, "
          f"{OPTS.writers} writer threads, store of {OPTS.root.resolve().name}\n")
    print("| record before | peak on disk | peak / record | WAL peak | WAL after | file after | seconds | pruned | "
          "failed writes |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {before / MB:,.0f} MB | {sampler.peak / MB:,.0f} MB | {sampler.peak / before:.2f} | "
          f"{sampler.wal / MB:,.1f} MB | "
          f"{wal_after / MB:,.1f} MB | {after / MB:,.0f} MB | {took:.1f} | {done.get('pruned_calls', 0):,} | "
          f"{len(failed)} |")
    print(f"\n(built in {built:.0f} s{'; compaction failed: ' + error if error else ''})")


if __name__ == "__main__":
    main()
