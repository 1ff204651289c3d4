"""Dollars spent per month against the user's budgets, kept as calls are booked (never summed from the ledger on a
hot path), and the holds: what a call about to go may cost at most, reserved before it is sent and released when its
real cost is booked. Each row is one budget's month: (month in the user's time zone, scope, name)."""
from __future__ import annotations

import json
import time

SCHEMA = """
    CREATE TABLE spend (
        month TEXT NOT NULL, scope TEXT NOT NULL, name TEXT NOT NULL, spent REAL NOT NULL DEFAULT 0,
        held REAL NOT NULL DEFAULT 0, PRIMARY KEY (month, scope, name)) WITHOUT ROWID;
    CREATE TABLE spend_holds (
        call TEXT PRIMARY KEY, month TEXT NOT NULL, keys TEXT NOT NULL, usd REAL NOT NULL, created REAL NOT NULL,
        process TEXT NOT NULL);
    CREATE INDEX spend_holds_created ON spend_holds (created)
"""
HOLD_KEEP = 6 * 3600.0   # seconds a hold outlives its call at most: one left by a process that died is let go then
BACKFILL_DAYS = 62       # the ledger lines the migration books: enough for this month and the last in any zone

_ADD = ("INSERT INTO spend (month, scope, name, spent, held) VALUES (?, ?, ?, ?, ?) ON CONFLICT (month, scope, name) "
        "DO UPDATE SET spent = spent + excluded.spent, held = MAX(0, held + excluded.held)")


def add(conn, month: str, keys, spent: float, held: float) -> None:
    """Add `spent` and `held` (either may be negative) to each budget key's month, inside the caller's transaction."""
    conn.executemany(_ADD, [(month, scope, name, spent, held) for scope, name in keys])


def sums(one, month: str, keys) -> dict:
    """{(scope, name): (spent, held)} of these keys' month (a key with nothing booked is absent); `one(sql, params)`
    reads a row: a reader's (Database.one) for a pre-check, the writer's inside a reservation's transaction."""
    out = {}
    for scope, name in keys:
        row = one("SELECT spent, held FROM spend WHERE month = ? AND scope = ? AND name = ?", (month, scope, name))
        if row is not None:
            out[(scope, name)] = (row[0], row[1])
    return out


def hold(conn, call: str, month: str, keys: list, usd: float, process: str) -> None:
    """Reserve `usd` on each key for `call` (a second hold for one call replaces the first)."""
    release(conn, call)
    conn.execute("INSERT INTO spend_holds (call, month, keys, usd, created, process) VALUES (?, ?, ?, ?, ?, ?)",
                 (call, month, json.dumps(keys), usd, time.time(), process))
    add(conn, month, keys, 0.0, usd)


def release(conn, call: str) -> bool:
    """Let `call`'s hold go (its keys' held sums drop by it); False when it had none."""
    row = conn.execute("SELECT month, keys, usd FROM spend_holds WHERE call = ?", (call,)).fetchone()
    if row is None:
        return False
    conn.execute("DELETE FROM spend_holds WHERE call = ?", (call,))
    add(conn, row[0], [tuple(k) for k in json.loads(row[1])], 0.0, -row[2])
    return True


def expire(conn, now: float | None = None) -> int:
    """Let go the holds older than HOLD_KEEP (their process died before booking them); how many."""
    cut = (time.time() if now is None else now) - HOLD_KEEP
    stale = [r[0] for r in conn.execute("SELECT call FROM spend_holds WHERE created < ?", (cut,))]
    for call in stale:
        release(conn, call)
    return len(stale)


def backfill(conn) -> None:
    """The spend of the months the last BACKFILL_DAYS touch made again from the ledger (migration 28, `bench store
    rebuild`): each priced line booked to its model, connection, collection, gateway key and the whole bench, in the
    month of the system's local time (the user's zone, as the scheduler's clock reads it). Older months and the
    holds are left as they are."""
    t = time.localtime(time.time() - BACKFILL_DAYS * 86400)
    since = time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1))      # from the first of that month, whole
    conn.execute("UPDATE spend SET spent = 0 WHERE month >= ?", (f"{t.tm_year:04d}-{t.tm_mon:02d}",))
    rows = conn.execute("SELECT u.created, u.endpoint, u.model, u.collection, u.cost, c.caller FROM usage u "
                        "LEFT JOIN calls c ON c.id = u.call WHERE u.created >= ? AND u.cost > 0", (since,))
    for created, endpoint, model, collection, cost, caller in rows:
        month = time.strftime("%Y-%m", time.localtime(created))
        add(conn, month, keys_of(model, endpoint, collection, caller), cost, 0.0)


def keys_of(model: str | None, endpoint: str | None, collection: str | None, caller: str | None) -> list:
    """The budgets a call counts against: its model, its connection, its collection, its gateway key and the bench."""
    keys = [("model", model), ("connection", endpoint), ("collection", collection), ("key", caller)]
    return [(scope, name) for scope, name in keys if name] + [("bench", "all")]
