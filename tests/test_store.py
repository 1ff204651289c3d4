"""The data folder's store: config files (atomic, locked, broken edits kept), SQLite (migrations, one writer)."""
from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchwarmers.errors import ConfigError
from benchwarmers.store import Config, Database
from benchwarmers.store.migrations import MIGRATIONS, latest, migrate

ROOT = Path(__file__).resolve().parent.parent


def child(code: str, *args: str, **kw) -> subprocess.Popen:
    """A Python child that imports this checkout's package (run from the checkout, so `-c` finds it)."""
    return subprocess.Popen([sys.executable, "-c", "import sys\n" + textwrap.dedent(code), *args], cwd=ROOT, **kw)


# ---- config files ------------------------------------------------------------------------------

def test_missing_file_reads_as_its_default_shape(tmp_path):
    cfg = Config(tmp_path)
    assert cfg.read("models.json") == {"models": {}}
    assert not cfg.path("models.json").exists()


def test_write_then_read_and_copies_are_private(tmp_path):
    cfg = Config(tmp_path)
    cfg.write("models.json", {"models": {"a": {"endpoint": "e", "served": "s"}}})
    copy = cfg.read("models.json")
    copy["models"]["b"] = {}
    assert cfg.read("models.json") == {"models": {"a": {"endpoint": "e", "served": "s"}}}
    assert not list(cfg.dir.glob(".*.tmp"))


def test_hand_edit_is_seen_without_restart(tmp_path):
    cfg = Config(tmp_path)
    cfg.write("models.json", {"models": {}})
    assert cfg.view("models.json") == {"models": {}}
    cfg.path("models.json").write_text('{"models": {"hand": {}}, "pad": "' + "x" * 10 + '"}', encoding="utf-8")
    assert "hand" in cfg.view("models.json")["models"]


def test_a_steady_block_checks_each_file_once_and_sees_its_own_writes(tmp_path, monkeypatch):
    cfg = Config(tmp_path)
    cfg.write("models.json", {"models": {}})
    stats = []   # the config files looked at (a stat each)
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, **kw: (str(p).endswith(".json") and stats.append(p)) or
                        real_stat(p, **kw))
    with cfg.steady() as memo:
        for _ in range(5):
            cfg.view("models.json")
            cfg.view("settings.json")                      # missing: its default, checked once too
        assert len(stats) == 2
        cfg.path("models.json").write_text('{"models": {"hand": {}}, "pad": "xx"}', encoding="utf-8")
        assert cfg.view("models.json") == {"models": {}}   # a hand edit counts from the next block
        with cfg.steady() as inner:                        # nested: the same block
            assert inner is memo and cfg.view("models.json") == {"models": {}}
        cfg.write("collections.json", {"collections": {"c": {"members": ["a"]}}})
        assert cfg.view("collections.json")["collections"]["c"] == {"members": ["a"]}   # own writes: at once
        assert "hand" in cfg.view("models.json")["models"]  # and any write makes every file checked again
    assert "hand" in cfg.view("models.json")["models"]
    stats.clear()
    cfg.view("models.json")
    cfg.view("models.json")
    assert len(stats) == 2                                  # outside a block: every read checks


def test_a_steady_block_is_shared_with_other_threads(tmp_path):
    import threading
    cfg = Config(tmp_path)
    cfg.write("models.json", {"models": {}})
    with cfg.steady() as memo:
        cfg.view("models.json")
        cfg.path("models.json").write_text('{"models": {"hand": {}}, "pad": "xx"}', encoding="utf-8")
        seen = []

        def seat():
            with cfg.steady(memo):
                seen.append(cfg.view("models.json"))
            seen.append(cfg.view("models.json"))            # its own block is over: checked again
        worker = threading.Thread(target=seat)
        worker.start()
        worker.join()
    assert seen[0] == {"models": {}} and "hand" in seen[1]["models"]


def test_update_returns_the_change_result(tmp_path):
    cfg = Config(tmp_path)
    got = cfg.update("collections.json", lambda d: d["collections"].setdefault("core", {"members": ["a"]}))
    assert got == {"members": ["a"]}
    assert cfg.read("collections.json") == {"collections": {"core": {"members": ["a"]}}}


def test_broken_hand_edit_is_reported_with_line_and_column_and_kept(tmp_path):
    cfg = Config(tmp_path)
    path = cfg.path("endpoints.json")
    broken = '{\n  "endpoints": {\n    "a": {"base_url": "http://x",}\n  }\n}\n'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        cfg.read("endpoints.json")
    assert re.search(r"endpoints\.json:3:\d+: ", err.value.message), err.value.message
    with pytest.raises(ConfigError):
        cfg.update("endpoints.json", lambda d: d.setdefault("endpoints", {}).update(b={}))
    with pytest.raises(ConfigError):
        cfg.write("endpoints.json", {"endpoints": {}})
    assert path.read_text(encoding="utf-8") == broken            # never overwritten while broken
    problems = cfg.check_all()
    assert len(problems) == 1 and "endpoints.json:3:" in problems[0]


def test_a_file_that_is_not_an_object_is_an_error(tmp_path):
    cfg = Config(tmp_path)
    cfg.path("models.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        cfg.read("models.json")
    assert "models.json:1:1" in err.value.message


def test_a_killed_writer_leaves_the_old_file_whole(tmp_path):
    """Kill a child at random points while it rewrites a large file: the file always parses as one version."""
    cfg = Config(tmp_path)
    old = {"models": {f"old{i}": {"endpoint": "e", "served": "x" * 200} for i in range(2000)}}
    cfg.write("models.json", old)
    writer = """
        from pathlib import Path
        from benchwarmers.store import Config
        cfg = Config(Path(sys.argv[1]))
        n = 0
        print("ready", flush=True)
        while True:
            n += 1
            cfg.write("models.json", {"models": {f"new{n}-{i}": {"endpoint": "e", "served": "y" * 200}
                                                 for i in range(2000)}})
    """
    rng = random.Random(1234)
    for _ in range(6):
        proc = child(writer, str(tmp_path), stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
        data = json.loads(cfg.path("models.json").read_text(encoding="utf-8"))
        names = list(data["models"])
        assert len(names) == 2000
        assert names[0] == "old0" or names[0].startswith("new")


def test_a_writer_that_dies_before_replace_changes_nothing(tmp_path):
    """The temp file is written and synced, then the process dies before os.replace: the old file is intact."""
    cfg = Config(tmp_path)
    cfg.write("settings.json", {"seat_timeout": 7})
    before = cfg.path("settings.json").read_bytes()
    proc = child("""
        import os
        from pathlib import Path
        from benchwarmers.store import config
        real_replace = os.replace
        config.os.replace = lambda *a: os._exit(9)   # die at the last step, as a power cut would
        config.Config(Path(sys.argv[1])).write("settings.json", {"seat_timeout": 99})
    """, str(tmp_path))
    assert proc.wait(timeout=30) == 9
    assert cfg.path("settings.json").read_bytes() == before
    assert Config(tmp_path).read("settings.json") == {"seat_timeout": 7}
    leftovers = list(cfg.dir.glob(".settings.json.*.tmp"))
    assert leftovers and json.loads(leftovers[0].read_text(encoding="utf-8")) == {"seat_timeout": 99}


def test_updates_from_two_processes_are_serialised_by_the_lock(tmp_path):
    Config(tmp_path).write("limits.json", {"limits": {}, "count": 0})
    code = """
        from pathlib import Path
        from benchwarmers.store import Config
        cfg = Config(Path(sys.argv[1]))
        for _ in range(40):
            cfg.update("limits.json", lambda d: d.__setitem__("count", d["count"] + 1))
    """
    procs = [child(code, str(tmp_path)) for _ in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert Config(tmp_path).read("limits.json")["count"] == 80


# ---- migrations --------------------------------------------------------------------------------

def test_migration_numbers_are_unique_and_contiguous():
    numbers = [m[0] for m in MIGRATIONS]
    assert numbers == list(range(1, len(numbers) + 1))
    assert latest() == numbers[-1]
    assert all(name.strip() for _, name, _ in MIGRATIONS)


def tables_after(migrations) -> set[str]:
    """The tables the migrations leave, replaying their CREATE, DROP and RENAME TO in order (SQLite changes a
    table's key by building a new one and renaming it)."""
    tables: set[str] = set()
    pattern = (r"CREATE TABLE(?: IF NOT EXISTS)?\s+(\w+)|DROP TABLE(?: IF EXISTS)?\s+(\w+)"
               r"|ALTER TABLE\s+(\w+)\s+RENAME TO\s+(\w+)")
    for _, _, sql in migrations:
        for created, dropped, old, new in re.findall(pattern, sql, re.I):
            tables |= {created} if created else set()
            tables -= {dropped, old}
            tables |= {new} if new else set()
    return tables - {""}


def test_upgrade_from_the_first_schema_keeps_rows(tmp_path):
    path = tmp_path / "bench.db"
    conn = sqlite3.connect(str(path), isolation_level=None)
    assert migrate(conn, upto=1) == [1]
    conn.execute("INSERT INTO calls (id, model, status, created, answer) VALUES ('c1', 'm', 'ok', 1.0, 'hi')")
    conn.close()

    db = Database(path)
    try:
        row = db.one("SELECT model, status, answer FROM calls WHERE id = 'c1'")
        assert tuple(row) == ("m", "ok", "hi")
        present = {r[0] for r in db.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables_after(MIGRATIONS) <= present and "ratelimits" in present
        applied = [r[0] for r in db.query("SELECT number FROM migrations ORDER BY number")]
        assert applied == list(range(1, latest() + 1))
    finally:
        db.close()


def test_migrate_twice_runs_nothing_the_second_time(tmp_path):
    conn = sqlite3.connect(str(tmp_path / "x.db"), isolation_level=None)
    assert migrate(conn) == list(range(1, latest() + 1))
    assert migrate(conn) == []
    conn.close()


# ---- the database ------------------------------------------------------------------------------

def test_database_uses_wal_and_commits_on_close(tmp_path):
    db = Database(tmp_path / "bench.db")
    assert db.one("PRAGMA journal_mode")[0] == "wal"
    for i in range(50):
        db.execute("INSERT INTO jobs (name, started) VALUES (?, ?)", (f"j{i}", float(i)))
    db.close()
    conn = sqlite3.connect(str(tmp_path / "bench.db"))
    assert conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 50
    conn.close()


def test_one_failing_write_does_not_lose_its_batch(tmp_path):
    db = Database(tmp_path / "bench.db")
    try:
        good1 = db.execute("INSERT INTO jobs (name, started) VALUES ('a', 1)")
        bad = db.execute("INSERT INTO no_such_table VALUES (1)")
        good2 = db.execute("INSERT INTO jobs (name, started) VALUES ('b', 2)")
        assert good1.result(10) == 1 and good2.result(10) == 1
        with pytest.raises(sqlite3.OperationalError):
            bad.result(10)
        assert [r[0] for r in db.query("SELECT name FROM jobs ORDER BY name")] == ["a", "b"]
    finally:
        db.close()


def test_writes_after_close_fail_clearly(tmp_path):
    db = Database(tmp_path / "bench.db")
    db.close()
    with pytest.raises(RuntimeError):
        db.execute("INSERT INTO jobs (name, started) VALUES ('late', 1)").result(5)


def test_rows_of_a_batch_go_in_together_and_a_bad_one_costs_only_itself(tmp_path):
    """Rows are written one executemany per table when their batch allows; a row that fails (here a duplicate
    key) sends the batch round again one item at a time, so only that item fails."""
    import threading
    db = Database(tmp_path / "bench.db")
    head = "INSERT INTO panels (id, collection, mode, seats, caller, created)"
    gate = threading.Event()
    try:
        db.submit(lambda c: gate.wait(10))      # the writer waits in this batch: what follows queues for the next
        writes = [db.insert((head, (f"p{i}", "c", "panel", 5, None, float(i)))) for i in range(120)]
        dup = db.insert((head, ("p7", "c", "panel", 5, None, 0.0)))
        after = db.insert((head, ("p-last", "c", "panel", 5, None, 1.0)),
                          ("INSERT INTO jobs (name, started)", ("j", 1.0)))
        gate.set()
        assert all(w.result(10) is None for w in writes) and after.result(10) is None
        with pytest.raises(sqlite3.IntegrityError):
            dup.result(10)
        assert db.one("SELECT COUNT(*) FROM panels")[0] == 121
        assert db.one("SELECT COUNT(*) FROM jobs WHERE name = 'j'")[0] == 1
    finally:
        db.close()


def test_each_write_is_done_only_once_its_batch_is_committed(tmp_path):
    """A write's result is settled with its batch, in the order writes were submitted, from any thread."""
    import threading
    db = Database(tmp_path / "bench.db")
    gate = threading.Event()
    try:
        started = threading.Event()
        held = db.submit(lambda c: (started.set(), gate.wait(10))[1] and 1)   # the writer thread waits in this batch
        assert started.wait(10)
        later = [db.execute("INSERT INTO jobs (name, started) VALUES (?, ?)", (f"j{i}", float(i))) for i in range(5)]
        assert not held.done() and not any(w.done() for w in later)
        with pytest.raises(TimeoutError):
            later[-1].result(timeout=0.05)
        gate.set()
        assert held.result(10) == 1 and [w.result(10) for w in later] == [1] * 5
        results, errors = [], []

        def submit(n):
            try:
                results.append(db.execute("INSERT INTO jobs (name, started) VALUES (?, ?)", (f"t{n}", 0.0)).result(10))
            except Exception as e:   # noqa: BLE001 - the assertion below reports it
                errors.append(e)
        threads = [threading.Thread(target=submit, args=(n,)) for n in range(40)]
        [t.start() for t in threads]
        [t.join(20) for t in threads]
        assert not errors and results == [1] * 40
    finally:
        db.close()


def test_record_ids_sort_by_time_and_never_repeat():
    from benchwarmers.api.calls import CALL_ID
    from benchwarmers.mcp.stophook import SEAT_HEADING
    from benchwarmers.store.ids import record_id
    ids = []
    for _ in range(3):
        ids += [record_id("c_") for _ in range(1000)]
        time.sleep(0.002)
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"c_[0-9A-Za-z]{8}[A-Za-z0-9_-]{12}", i) for i in ids)
    assert not any(record_id().startswith("-") for _ in range(2000))   # never read as an option: bench verdict ID
    stamps = [i[2:10] for i in ids]
    assert stamps == sorted(stamps) and len(set(stamps)) > 1
    bare = [record_id() for _ in range(5000)]      # what takes a call id takes every one of them
    assert all(CALL_ID.match(i) and SEAT_HEADING.search(f"## Seat 1 · m · member · ok · call {i}") for i in bare)


def test_the_partial_indexes_serve_the_queries_that_need_them(tmp_path):
    """Migration 14 keeps only the rows that name a caller or a session, and the suite's ledger lines: the
    waiting-for-a-verdict queries still find them by index, not by reading every call."""
    from benchwarmers.store.pending import WAITING
    db = Database(tmp_path / "bench.db")
    try:
        for column, index in (("caller", "calls_caller"), ("session", "calls_session")):
            plan = " ".join(r[3] for r in db.query(f"EXPLAIN QUERY PLAN SELECT c.id FROM calls c WHERE {WAITING} "
                                                   f"AND c.{column} = ?", ("x",)))
            assert index in plan and "usage_call" in plan, plan
    finally:
        db.close()


def test_whoever_waits_commits_and_the_writer_thread_commits_what_nobody_waits_for(tmp_path, monkeypatch):
    """A reply waiting for its records commits them in its own thread (no hand-off); a write nobody waits for is
    committed by the writer thread LAG seconds after it was queued."""
    import benchwarmers.store.db as dbmod
    monkeypatch.setattr(dbmod, "LAG", 30.0)          # the writer thread would not look for 30 s
    db = Database(tmp_path / "bench.db")
    try:
        assert db.execute("INSERT INTO jobs (name, started) VALUES ('mine', 1)").result(timeout=5) == 1
        assert db.one("SELECT COUNT(*) FROM jobs WHERE name = 'mine'")[0] == 1
    finally:
        monkeypatch.setattr(dbmod, "LAG", 0.01)
        db.close()                                   # a closing writer commits at once, without its LAG
    db = Database(tmp_path / "bench.db")
    try:
        db.execute("INSERT INTO jobs (name, started) VALUES ('nobody waits', 2)")   # queued: wakes the writer
        deadline = time.monotonic() + 60
        while not db.query("SELECT 1 FROM jobs WHERE name = 'nobody waits'") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert db.query("SELECT 1 FROM jobs WHERE name = 'nobody waits'")
    finally:
        db.close()


def test_the_writer_thread_checkpoints_the_wal_not_the_commit_a_reply_waits_for(tmp_path, monkeypatch):
    """SQLite's own checkpoint would run inside whichever commit crosses its threshold, a reply's among them; the
    writer connection has it off, and the writer thread copies the WAL back on its own connection."""
    import threading
    import benchwarmers.store.db as dbmod
    monkeypatch.setattr(dbmod, "CHECKPOINT", 0.0)
    monkeypatch.setattr(dbmod, "LAG", 0.001)
    db = Database(tmp_path / "bench.db")
    ran = threading.Event()
    real = db._checkpoint
    monkeypatch.setattr(db, "_checkpoint", lambda: (real(), ran.set()))
    try:
        assert db._writer_conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        for i in range(50):
            db.execute("INSERT INTO jobs (name, started) VALUES (?, ?)", (f"j{i}", float(i)))   # nobody waits
        assert ran.wait(30)
        db.sync()
        assert db.one("SELECT COUNT(*) FROM jobs")[0] == 50
    finally:
        db.close()
