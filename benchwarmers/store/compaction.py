"""A record that does not grow forever: the prompt and answer text kept per UTC day (kept as rows are written), old
text pruned by the retention setting, free pages given back (incremental vacuum), and the record's size. Pruning
and giving back go in batches, each in a transaction of its own followed by a checkpoint that empties the WAL, so
the disk holds the record and one batch's WAL at most; the free disk that needs is checked first (room())."""
from __future__ import annotations

import time

from ..errors import NoRoom
from . import diskroom
from .ledgerkept import utc_day

CHUNK = 1000            # rows a pruning batch takes at most: other writes go in between
CHUNK_CHARS = 2_000_000  # characters of text a pruning batch takes at most (beyond its first row)
VACUUM_PAGES = 1000     # pages an incremental vacuum batch gives back at most
TEXT = {"calls": ("answer", "request"), "panels": ("request",)}   # the columns pruning empties
SCHEMA = """
    CREATE TABLE text_days (day TEXT PRIMARY KEY, chars INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE kept_state (name TEXT PRIMARY KEY, value REAL)
"""
_UPSERT = ("INSERT INTO text_days (day, chars) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET "
           "chars = chars + excluded.chars")


def chars(*texts) -> int:
    n = 0
    for t in texts:
        if t:
            n += len(t)
    return n


def part(created: float, *texts) -> tuple:
    """(UTC day, characters of text) a row adds; a Database.insert `keep` item for apply()."""
    return utc_day(created), chars(*texts)


def apply(conn, parts: list) -> None:
    """Add (or, negative, take away) each (day, characters) in the writer's transaction."""
    days: dict = {}
    for day, n in parts:
        days[day] = days.get(day, 0) + n
    conn.executemany(_UPSERT, [(d, n) for d, n in days.items() if n])


def rebuild(conn) -> None:
    conn.execute("DELETE FROM text_days")
    conn.execute("INSERT INTO text_days (day, chars) SELECT day, SUM(n) FROM ("
                 "SELECT date(created, 'unixepoch') AS day, COALESCE(length(answer), 0) + COALESCE(length(request), 0)"
                 " AS n FROM calls UNION ALL SELECT date(created, 'unixepoch'), COALESCE(length(request), 0) FROM panels"
                 ") GROUP BY day")


def prune_step(conn, table: str, cutoff: float) -> int:
    """One batch: the text of up to CHUNK rows of `table` (calls or panels) made before `cutoff` (and CHUNK_CHARS
    characters), from where the last batch stopped (kept_state: its (created, rowid)); their characters leave
    text_days. How many rows it took (0: none left)."""
    marks = [f"pruned_{table}", f"pruned_{table}_row"]
    got = dict(conn.execute("SELECT name, value FROM kept_state WHERE name IN (?, ?)", marks).fetchall())
    since = (got.get(marks[0], 0.0), int(got.get(marks[1], 0)))
    length = " + ".join(f"COALESCE(length({c}), 0)" for c in TEXT[table])
    rows = conn.execute(f"SELECT rowid, created, {length} FROM {table} WHERE (created, rowid) > (?, ?) "
                        f"AND created < ? ORDER BY created, rowid LIMIT ?", (*since, cutoff, CHUNK)).fetchall()
    taken: list = []
    total = 0
    for row in rows:
        if taken and total + row[2] > CHUNK_CHARS:
            break
        taken.append(row)
        total += row[2]
    if not taken:
        return 0
    apply(conn, [(utc_day(r[1]), -r[2]) for r in taken])
    rewrite(conn, table, [r[0] for r in taken if r[2]])
    conn.executemany("INSERT INTO kept_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
                     "value = excluded.value", [(marks[0], taken[-1][1]), (marks[1], taken[-1][0])])
    return len(taken)


def rewrite(conn, table: str, rowids: list) -> None:
    """These rows again without their text, deleted and put back (same rowid): an UPDATE would leave each page as
    sparse as the text left it, and a year of short answers would keep its size for good; put back, the rows fill
    pages again and the rest go to the free list, given back by the incremental vacuum. A verdict's reference to
    its call is checked at the commit, when the row is back."""
    if not rowids:
        return
    conn.execute("PRAGMA defer_foreign_keys = ON")   # for this transaction only
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in TEXT[table]]
    listed, marks = ", ".join(columns), ", ".join("?" * len(rowids))
    rows = conn.execute(f"SELECT rowid, {listed} FROM {table} WHERE rowid IN ({marks}) ORDER BY rowid",
                        rowids).fetchall()
    conn.execute(f"DELETE FROM {table} WHERE rowid IN ({marks})", rowids)
    conn.executemany(f"INSERT INTO {table} (rowid, {listed}) VALUES ({', '.join('?' * (len(columns) + 1))})",
                     [tuple(r) for r in rows])


def vacuum_step(conn) -> int:
    """Up to VACUUM_PAGES free pages given back to the disk; how many. One statement a page: each step of
    incremental_vacuum gives one back, and Python's sqlite3 steps a statement without columns only once."""
    pages = min(VACUUM_PAGES, conn.execute("PRAGMA freelist_count").fetchone()[0])
    for _ in range(pages):
        conn.execute("PRAGMA incremental_vacuum(1)")
    return pages


def room(db, full: bool = False) -> dict:
    """The free disk a compaction needs, and what there is: one batch's WAL (with a margin) in the data folder;
    with `full`, also a copy of what the record holds in SQLite's temporary folder, and as much again for the WAL.
    {"needed_bytes", "free_bytes", "temp_needed_bytes", "temp_free_bytes", "enough"}."""
    page = db.one("PRAGMA page_size")[0]
    used = (db.one("PRAGMA page_count")[0] - db.one("PRAGMA freelist_count")[0]) * page
    return diskroom.needed(db.path.parent, diskroom.batch_bytes(page, CHUNK, CHUNK_CHARS, VACUUM_PAGES),
                           used if full else 0)


def refuse(r: dict, full: bool) -> NoRoom:
    mb = diskroom.mb
    where = (f"{mb(r['needed_bytes'])} free in the data folder" if not r["temp_needed_bytes"] else
             f"{mb(r['needed_bytes'])} free in the data folder and {mb(r['temp_needed_bytes'])} in SQLite's "
             f"temporary folder ({r['temp_folder']})")
    has = (f"{mb(r['free_bytes'])} is free" if not r["temp_needed_bytes"] else
           f"{mb(r['free_bytes'])} and {mb(r['temp_free_bytes'])} are free")
    what = "Rewriting the record (full)" if full else "Compacting the record"
    return NoRoom(f"{what} needs {where}; {has}. Nothing was changed.",
                  "Free disk space (or grow the volume) and try again" + ("; or compact without full, which needs "
                                                                          "one batch's room only." if full else "."))


def compact(db, keep_days: int, full: bool = False, now: float | None = None) -> dict:
    """Prune the text older than `keep_days` (0: none) and give free pages back, in batches, the WAL emptied after
    each; with `full`, the file rewritten once with incremental vacuum on (a record made before it). Refused before
    anything is done when the disk lacks the room (NoRoom); stopped between batches when it runs short (the next
    run goes on from there). What it did, the room it had, and the record's size after."""
    started = time.monotonic()
    r = room(db, full)
    if not r["enough"]:
        raise refuse(r, full)
    notes: list[str]
    pruned, notes = {"calls": 0, "panels": 0}, []
    if keep_days:
        cutoff = (now or time.time()) - keep_days * 86400
        for table in pruned:
            while not notes:
                n = db.alone(lambda conn, t=table: prune_step(conn, t, cutoff))
                if not n:
                    break
                pruned[table] += n
                notes += between(db)
    before = size(db)
    if full and not notes:
        db.vacuum_full()
    elif before["auto_vacuum"] == "incremental":
        while not notes and db.alone(vacuum_step):
            notes += between(db)
    skipped = db.optimize()
    if skipped:
        notes.append(f"statistics not gathered ({skipped}): the next compaction tries again")
    db.truncate_wal()
    after = size(db, keep_days, now)
    return {"pruned_calls": pruned["calls"], "pruned_panels": pruned["panels"], "keep_days": keep_days,
            "freed_bytes": max(0, before["bytes"] - after["bytes"]), "seconds": round(time.monotonic() - started, 2),
            "room": r, "notes": notes, "store": after}


def between(db) -> list:
    """After a batch: the WAL emptied into the database, and the room for the next batch checked; [] to go on, else
    why it stopped."""
    emptied = db.truncate_wal()
    r = room(db)
    if not emptied and diskroom.file_size(wal_of(db.path)) > r["needed_bytes"]:
        return ["stopped before its end: another process kept the WAL from being emptied; compact again "
                "to go on from here"]
    if r["enough"]:
        return []
    return [f"stopped before its end: the next batch needs {diskroom.mb(r['needed_bytes'])} free and "
            f"{diskroom.mb(r['free_bytes'])} is; free disk space and compact again to go on from here"]


def size(db, keep_days: int = 0, now: float | None = None) -> dict:
    """The record's size: the database file's pages (free ones apart) and its WAL; the text kept, and what a
    retention of `keep_days` would prune of it (the kept characters of the days before its cutoff)."""
    page = db.one("PRAGMA page_size")[0]
    pages, free = db.one("PRAGMA page_count")[0], db.one("PRAGMA freelist_count")[0]
    mode = {0: "none", 1: "full", 2: "incremental"}.get(db.one("PRAGMA auto_vacuum")[0], "none")
    text = db.one("SELECT COALESCE(SUM(chars), 0) AS n FROM text_days")["n"]
    would = 0
    if keep_days:
        cutoff = utc_day((now or time.time()) - keep_days * 86400)
        would = db.one("SELECT COALESCE(SUM(chars), 0) AS n FROM text_days WHERE day < ?", (cutoff,))["n"]
    return {"bytes": pages * page, "free_bytes": free * page, "wal_bytes": diskroom.file_size(wal_of(db.path)),
            "auto_vacuum": mode, "text_chars": text, "keep_days": keep_days, "would_prune_chars": would}


def wal_of(path):
    return path.with_name(path.name + "-wal")
