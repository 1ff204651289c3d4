"""Numbered schema migrations, each recorded in the same transaction as its change."""
from __future__ import annotations

import sqlite3
import time

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "calls, verdicts and probes", """
        CREATE TABLE calls (
            id TEXT PRIMARY KEY, panel TEXT, collection TEXT, model TEXT NOT NULL, endpoint TEXT, served TEXT,
            kind TEXT, mode TEXT, seat INTEGER, status TEXT NOT NULL, error TEXT,
            request TEXT, prompt_hash TEXT, answer TEXT,
            ttft REAL, seconds REAL, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
            caller TEXT, created REAL NOT NULL, extra TEXT);
        CREATE INDEX calls_collection ON calls (collection, created);
        CREATE INDEX calls_model ON calls (model, created);
        CREATE INDEX calls_panel ON calls (panel);
        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY, call TEXT NOT NULL REFERENCES calls(id), useful INTEGER NOT NULL,
            note TEXT, real TEXT, false TEXT, created REAL NOT NULL, current INTEGER NOT NULL DEFAULT 1);
        CREATE INDEX verdicts_call ON verdicts (call, current);
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY, model TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, answer TEXT,
            error TEXT, seconds REAL, ttft REAL, input_tokens INTEGER, output_tokens INTEGER, created REAL NOT NULL);
        CREATE INDEX probes_model ON probes (model, created);
    """),
    # Read by the service: ratelimits (what rests on a rate limit), pins (route mode), gateway_keys. Written but read by
    # nothing in the service yet, and kept for what reads them next: panels (one row per panel), usage (the
    # tokens of every call: a usage ledger and its limits) and jobs (each onboarding: scheduled jobs).
    (2, "panels, usage ledger, rate limits, pins, jobs and gateway keys", """
        CREATE TABLE panels (
            id TEXT PRIMARY KEY, collection TEXT, mode TEXT, seats INTEGER, caller TEXT, created REAL NOT NULL);
        CREATE TABLE usage (
            id INTEGER PRIMARY KEY, month TEXT NOT NULL, endpoint TEXT, model TEXT, call TEXT,
            input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, created REAL NOT NULL);
        CREATE INDEX usage_month ON usage (month, endpoint);
        CREATE TABLE ratelimits (
            endpoint TEXT PRIMARY KEY, facts TEXT, resting_until REAL, updated REAL NOT NULL);
        CREATE TABLE pins (
            key TEXT PRIMARY KEY, collection TEXT NOT NULL, model TEXT NOT NULL, created REAL NOT NULL,
            last_used REAL NOT NULL, turns INTEGER DEFAULT 0);
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, started REAL NOT NULL, finished REAL, status TEXT, detail TEXT);
        CREATE TABLE gateway_keys (
            name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, prefix TEXT, collections TEXT NOT NULL, rpm INTEGER,
            created REAL NOT NULL, revoked REAL);
    """),
    # A rate limit rests what it names: one model, or (model '') the whole connection.
    (3, "rate limits per model", """
        CREATE TABLE ratelimits_by_model (
            endpoint TEXT NOT NULL, model TEXT NOT NULL DEFAULT '', facts TEXT, resting_until REAL,
            updated REAL NOT NULL, PRIMARY KEY (endpoint, model));
        INSERT INTO ratelimits_by_model (endpoint, model, facts, resting_until, updated)
            SELECT endpoint, '', facts, resting_until, updated FROM ratelimits;
        DROP TABLE ratelimits;
        ALTER TABLE ratelimits_by_model RENAME TO ratelimits
    """),
]


def applied(conn: sqlite3.Connection) -> set[int]:
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT, applied REAL)")
    return {row[0] for row in conn.execute("SELECT number FROM migrations")}


def migrate(conn: sqlite3.Connection, upto: int | None = None) -> list[int]:
    """Apply every migration not yet applied (up to `upto`); each in its own transaction with its record."""
    done = applied(conn)
    ran = []
    for number, name, sql in MIGRATIONS:
        if number in done or (upto is not None and number > upto):
            continue
        statements = [s.strip() for s in sql.split(";") if s.strip()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO migrations (number, name, applied) VALUES (?, ?, ?)",
                         (number, name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        ran.append(number)
    return ran


def latest() -> int:
    return MIGRATIONS[-1][0]
