"""A record that does not grow forever: the prompt and answer text kept per UTC day (kept as rows are written), old
text pruned by the retention setting, free pages given back (incremental vacuum), and the record's size."""
from __future__ import annotations

import time

from .ledgerkept import utc_day

CHUNK = 2000          # rows a pruning transaction takes at most: other writes go in between
VACUUM_PAGES = 2000   # pages an incremental vacuum step gives back at most
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
    """One chunk: the text of up to CHUNK rows of `table` (calls or panels) made before `cutoff`, from where the last
    step stopped (kept_state: its (created, rowid)); their characters leave text_days. How many rows it took."""
    marks = [f"pruned_{table}", f"pruned_{table}_row"]
    got = dict(conn.execute("SELECT name, value FROM kept_state WHERE name IN (?, ?)", marks).fetchall())
    since = (got.get(marks[0], 0.0), int(got.get(marks[1], 0)))
    columns = ("answer", "request") if table == "calls" else ("request",)
    rows = conn.execute(f"SELECT rowid, created, {', '.join(columns)} FROM {table} WHERE (created, rowid) > (?, ?) "
                        f"AND created < ? ORDER BY created, rowid LIMIT ?", (*since, cutoff, CHUNK)).fetchall()
    if not rows:
        return 0
    apply(conn, [(utc_day(r[1]), -chars(*r[2:])) for r in rows])
    conn.executemany(f"UPDATE {table} SET {', '.join(c + ' = NULL' for c in columns)} WHERE rowid = ?",
                     [(r[0],) for r in rows])
    conn.executemany("INSERT INTO kept_state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
                     "value = excluded.value", [(marks[0], rows[-1][1]), (marks[1], rows[-1][0])])
    return len(rows)


def compact(db, keep_days: int, full: bool = False, now: float | None = None) -> dict:
    """Prune the text older than `keep_days` (0: none), in chunks of their own, then give free pages back: a step of
    incremental vacuum at a time when the database has it, else (`full`) the file rewritten once with it on. What it
    did, and the record's size after."""
    started = time.monotonic()
    pruned = {"calls": 0, "panels": 0}
    if keep_days:
        cutoff = (now or time.time()) - keep_days * 86400
        for table in pruned:
            while True:
                n = db.call(lambda conn, t=table: prune_step(conn, t, cutoff))
                pruned[table] += n
                if n < CHUNK:
                    break
    before = size(db)
    if full:
        db.call(lambda conn: None)
        db.vacuum_full()
    elif before["auto_vacuum"] == "incremental":
        while db.call(lambda conn: conn.execute("PRAGMA freelist_count").fetchone()[0]):
            db.call(lambda conn: conn.execute(f"PRAGMA incremental_vacuum({VACUUM_PAGES})").fetchall())
    db.optimize()
    after = size(db)
    return {"pruned_calls": pruned["calls"], "pruned_panels": pruned["panels"], "keep_days": keep_days,
            "freed_bytes": max(0, before["bytes"] - after["bytes"]), "seconds": round(time.monotonic() - started, 2),
            "store": after}


def size(db, keep_days: int = 0, now: float | None = None) -> dict:
    """The record's size: the database file's pages (free ones apart) and its WAL; the text kept, and what a
    retention of `keep_days` would prune of it (the kept characters of the days before its cutoff)."""
    page = db.one("PRAGMA page_size")[0]
    pages, free = db.one("PRAGMA page_count")[0], db.one("PRAGMA freelist_count")[0]
    mode = {0: "none", 1: "full", 2: "incremental"}.get(db.one("PRAGMA auto_vacuum")[0], "none")
    wal = db.path.with_name(db.path.name + "-wal")
    text = db.one("SELECT COALESCE(SUM(chars), 0) AS n FROM text_days")["n"]
    would = 0
    if keep_days:
        cutoff = utc_day((now or time.time()) - keep_days * 86400)
        would = db.one("SELECT COALESCE(SUM(chars), 0) AS n FROM text_days WHERE day < ?", (cutoff,))["n"]
    return {"bytes": pages * page, "free_bytes": free * page, "wal_bytes": wal.stat().st_size if wal.exists() else 0,
            "auto_vacuum": mode, "text_chars": text, "keep_days": keep_days, "would_prune_chars": would}
