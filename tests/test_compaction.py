"""A record that does not grow forever: the retention prunes old prompt and answer text and keeps every count,
verdict, claim and ledger line; Settings and `bench store` say how big it is and what the retention would prune."""
from __future__ import annotations

import shutil
import sqlite3
import threading
import time

import pytest

from benchwarmers.cli.main import main
from benchwarmers.store import Database, compaction
from benchwarmers.store.calls import CallRecord, Calls
from benchwarmers.store.ids import record_id
from benchwarmers.store.ledger import Line
from benchwarmers.store.verdicts import Verdicts
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401 (fake is a fixture)


def test_old_text_is_pruned_and_nothing_a_standing_needs_is_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(compaction, "CHUNK", 7)           # several transactions, each going on where one stopped
    db = Database(tmp_path / "bench.db")
    try:
        calls, now = Calls(db), time.time()
        for i in range(40):                                # 20 old ones (100 days ago), 20 new
            created = now - (100 if i < 20 else 1) * 86400 + i
            calls.add_panel(f"p{i}", "core", "panel", 1, None, request='{"messages": ["' + "q" * 50 + '"]}')
            calls.add(CallRecord(id=f"c{i}", model="a", status="ok", panel=f"p{i}", collection="core", kind="member",
                                 answer="an answer " * 600, seconds=1.0, created=created),
                      Line("e", "a", "member", 10, 5, call=f"c{i}", collection="core", created=created))
        db.sync()
        db.call(lambda conn: conn.execute("UPDATE panels SET created = created - 100 * 86400 WHERE rowid <= 20"))
        db.call(compaction.rebuild)
        for i in (0, 30):
            Verdicts(db).add(f"c{i}", True, "kept", ["a real claim"], [])
        before = compaction.size(db, 30, now)
        standings = db.query("SELECT * FROM standings")
        assert before["would_prune_chars"] == 20 * (6000 + len('{"messages": ["' + "q" * 50 + '"]}'))
        done = compaction.compact(db, 30, now=now)
        assert (done["pruned_calls"], done["pruned_panels"]) == (20, 20)
        old = db.one("SELECT answer, request, status, seconds FROM calls WHERE id = 'c0'")
        assert old["answer"] is None and old["status"] == "ok" and old["seconds"] == 1.0
        assert db.one("SELECT answer FROM calls WHERE id = 'c30'")["answer"].startswith("an answer")
        assert db.one("SELECT request FROM panels WHERE id = 'p0'")["request"] is None
        assert [dict(r) for r in db.query("SELECT * FROM standings")] == [dict(r) for r in standings]
        assert db.one("SELECT COUNT(*) AS n FROM usage")["n"] == 40
        assert db.one("SELECT note, real FROM verdicts WHERE call = 'c0'")["real"] == '["a real claim"]'
        after = done["store"]
        assert after["text_chars"] == before["text_chars"] - before["would_prune_chars"]
        assert compaction.size(db, 30, now)["would_prune_chars"] == 0      # nothing left to prune
        assert compaction.compact(db, 30, now=now)["pruned_calls"] == 0    # and a second run finds nothing
        assert after["auto_vacuum"] == "incremental" and after["free_bytes"] == 0   # free pages given back
        assert done["freed_bytes"] >= 10 * 4096        # the old answers' overflow pages: the file is smaller
    finally:
        db.close()


def test_the_store_routes_the_cli_and_settings_show_it(home, fake, app, monkeypatch):
    setup_bench(home, fake)
    assert app("POST", "/v1/chat/completions", body())[0] == 200
    status, _, d = app("GET", "/bench/store")
    assert status == 200 and d["bytes"] > 0 and d["text_chars"] > 0 and d["keep_days"] == 0
    write(home, "settings.json", {"record_keep_days": 30})
    assert app("GET", "/bench/store")[2]["would_prune_chars"] == 0        # nothing is 30 days old
    assert app("POST", "/bench/store/compact", {"full": "yes"})[0] == 400
    done = app("POST", "/bench/store/compact", {})[2]
    assert done["pruned_calls"] == 0 and done["keep_days"] == 30 and done["store"]["keep_days"] == 30
    rebuilt = app("POST", "/bench/store/rebuild", {})[2]
    assert rebuilt["rebuilt"] is True and rebuilt["store"]["text_chars"] == d["text_chars"]
    page = app("GET", "/settings")[2]
    assert "The record" in page and "compacting now prunes 0 characters" in page


def record_files(path) -> int:
    """Bytes of the database and its WAL on disk (a file not there counts 0)."""
    total = 0
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            total += p.stat().st_size
        except OSError:
            pass
    return total


def old_calls(db, n: int, now: float, chars: int = 2400) -> None:
    calls = Calls(db)
    for i in range(n):
        calls.add(CallRecord(id=f"c{i:05d}", model="a", status="ok", panel=None, collection="core", kind="member",
                             answer="x" * chars, seconds=1.0, created=now - 100 * 86400 + i))
    db.sync()


def test_compaction_keeps_the_disk_near_the_records_size_and_gives_space_back(tmp_path, monkeypatch):
    """It pruned in one stream of commits that a PASSIVE checkpoint never caught up with: the WAL grew by every
    page it touched (about the record's size again), and an UPDATE left each page as sparse as the text left it."""
    monkeypatch.setattr(compaction, "CHUNK", 100)           # many batches on a small record
    monkeypatch.setattr(compaction, "VACUUM_PAGES", 100)
    path, now = tmp_path / "bench.db", time.time()
    db = Database(path)
    old_calls(db, 3000, now)                                  # about 12 MB, every answer older than the retention
    Verdicts(db).add("c00007", True, "kept", ["a real claim"], [])
    db.close()
    db = Database(path)                                       # as a service starting on it
    try:
        before, peak, stop = record_files(path), [0], threading.Event()

        def sample():
            while not stop.wait(0.002):
                peak[0] = max(peak[0], record_files(path))
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            done = compaction.compact(db, 30, now=now)
        finally:
            stop.set()
            sampler.join()
        assert done["pruned_calls"] == 3000 and not done["notes"]
        assert peak[0] <= 1.5 * before + 2 ** 20, (peak[0], before)      # never about twice the record
        assert compaction.wal_of(path).stat().st_size == 0                # the WAL emptied, not left for later
        assert done["store"]["bytes"] < before / 4 and done["freed_bytes"] > before / 2   # short answers too
        assert db.one("SELECT COUNT(*) AS n FROM calls WHERE answer IS NULL")["n"] == 3000
        assert db.one("SELECT call FROM verdicts")["call"] == "c00007"                     # still its call's
        assert db.one("PRAGMA foreign_key_check") is None and db.one("PRAGMA integrity_check")[0] == "ok"
    finally:
        db.close()


def test_compaction_without_the_room_it_needs_is_refused_saying_how_much(home, fake, app, monkeypatch):
    setup_bench(home, fake)
    write(home, "settings.json", {"record_keep_days": 30})
    assert app("POST", "/v1/chat/completions", body())[0] == 200
    real = shutil.disk_usage
    free = {"bytes": 5 * 2 ** 20}

    def usage(path):   # the disk as the operating system would tell it, with only this much free
        total, used, _ = real(path)
        return type(real(path))(total, used, free["bytes"])
    monkeypatch.setattr(shutil, "disk_usage", usage)
    room = app("GET", "/bench/store")[2]["room"]
    assert room["enough"] is False and room["free_bytes"] == 5 * 2 ** 20
    status, _, reply = app("POST", "/bench/store/compact", {})
    message = reply["error"]["message"]
    assert status == 507 and reply["error"]["code"] == "insufficient_storage", reply
    assert f"needs {room['needed_bytes'] / 2 ** 20:,.1f} MB free in the data folder; 5.0 MB is free. " \
           "Nothing was changed." in message, message
    assert "Free disk space" in message
    free["bytes"] = room["needed_bytes"]                      # room for batches, not for a copy of the record
    status, _, reply = app("POST", "/bench/store/compact", {"full": True})
    assert status == 507 and "Rewriting the record (full) needs" in reply["error"]["message"]
    assert "compact without full" in reply["error"]["message"]
    status, _, done = app("POST", "/bench/store/compact", {})
    assert status == 200 and done["room"]["enough"] is True


@pytest.mark.slow
def test_concurrent_writes_during_compaction_never_give_a_500(home, fake, make_service):
    """PRAGMA optimize answered 500 "database is locked" (1 run of 6 under load): a reader's ANALYZE read, a commit
    came, and its write was refused at once. Here asks, the service's own writes, reads and another process's
    connection go on all along while it compacts again and again, its statistics dropped before each run."""
    setup_bench(home, fake)
    write(home, "settings.json", {"record_keep_days": 30})
    svc = make_service()
    http, db = Http(svc.url), svc.bench.db
    old_calls(db, 2000, time.time(), chars=600)   # text for the first compaction to prune
    stop, statuses, failed = threading.Event(), [], []

    def asks():
        while not stop.is_set():
            statuses.append(http("POST", "/v1/chat/completions", body())[0])

    def writes():   # what asks write, at the pace of many clients
        calls = Calls(db)
        while not stop.is_set():
            w = calls.add(CallRecord(id=record_id(), model="a", status="ok", panel=None, collection="core",
                                     kind="member", answer="y" * 300, seconds=1.0))
            if w.exception(timeout=30):
                failed.append(w.exception())

    def reads():
        while not stop.is_set():
            db.query("SELECT id FROM calls WHERE model = ? ORDER BY created DESC LIMIT 5", ("a",))
            http("GET", "/bench/calls?limit=5")

    def other_process():   # a second service on the same folder, as its own connection
        conn = sqlite3.connect(str(home / "bench.db"), timeout=30, isolation_level=None)
        conn.execute("CREATE TABLE IF NOT EXISTS other_writes (x)")
        while not stop.is_set():
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO other_writes VALUES (1)")
            conn.execute("COMMIT")
            time.sleep(0.002)   # a busy service's pace, not a loop that starves every other connection
        conn.close()
    threads = [threading.Thread(target=f) for f in (asks, writes, writes, writes, reads, reads, other_process)]
    for t in threads:
        t.start()
    try:
        compactions = []
        for _ in range(16):
            db.call(lambda c: c.execute("DROP TABLE IF EXISTS sqlite_stat1"))   # statistics to gather again
            compactions.append(http("POST", "/bench/store/compact", {})[::2])
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert [s for s, _ in compactions] == [200] * 16, [c for c in compactions if c[0] != 200]
    assert statuses and set(statuses) == {200} and not failed, (statuses, failed)


def test_bench_store_compact_says_the_retention_it_pruned_by(home, fake, make_service, capsys):
    """Its reply's store said keep_days 0, so the command printed "record_keep_days is 0: all text is kept" right
    after pruning by 30 days."""
    setup_bench(home, fake)
    write(home, "settings.json", {"record_keep_days": 30})
    svc = make_service()
    assert main(["store", "compact", "--yes", "--url", svc.url]) == 0
    out = capsys.readouterr()
    said = out.out + out.err
    assert "record_keep_days 30: compacting now would prune 0 of them." in said and "is 0" not in said, said
    assert main(["store", "show", "--url", svc.url]) == 0
    assert "a compaction needs" in capsys.readouterr().out
