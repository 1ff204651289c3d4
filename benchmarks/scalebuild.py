"""Data folders of a given number of seat calls, for record_scale.py: a template the service writes itself, then
replicated inside its own schema, and checked against the service's rows.

1. The template: the service (serve.py of the checkout measured) on a fresh data folder, fastfake behind it (answers
   of ANSWER_CHARS characters), asked through its own routes: panels of three collections (a few merged, a member
   that always fails), route turns of an agent collection with a shadow seat (Anthropic Messages with a tool, ten
   conversations), some asks with an X-Bench-Session, then verdicts on about a third of the answers, a fifth of
   them with claims and a tenth revised. Everything is written by the service's own write paths.
2. The replica: with the service stopped, the template's panels, calls, usage lines and verdicts are copied K times
   into the same database (the template's own rows are taken out first), copy k spread over its share of the span
   (CALLS_PER_DAY seat calls a day, ending now). In each copy a row is its template row with only these changed: its
   ids (call, panel, the call a ledger line or verdict names, the turn a shadow seat names in `extra`) mapped to new
   ids of the service's own form (record_id: the time in base 62, then 12 random characters, here derived from
   the old id and k) whose time is the row's new time, its times (`created`) moved into its copy's share, and a
   ledger line's month worked out again from its new time.
3. The check (check()): every table holds exactly K times the template's rows, with the same counts of each kind
   and status; for three copies (first, middle, last) every row equals its template row column for column except
   the mapped ones, which equal the mapping; every reference resolves (a seat's panel, a ledger line's call, a
   verdict's call, a shadow's turn); no call has two current verdicts; every id has the service's form. record_scale.py
   then asks the running service for calls of the last copy and compares them with what the service answered for
   their template calls before it was stopped.
"""
from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import shutil
import sqlite3
import sys
import threading
import time
import urllib.request
from pathlib import Path

from harness import configure, start_service, wait_healthy

CALLS_PER_DAY = 2740     # a five-seat panel a hundred times a day and an agent in route mode: a million a year
ANSWER_CHARS = 900       # an answer's length (fastfake --answer-chars): about 1.5 KB a seat call with the prompt
SORTED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
ID = re.compile(r"^(p_)?[0-9A-Za-z]{8}[A-Za-z0-9_-]{12}$")
MODELS = [f"m{i:02}" for i in range(1, 13)]          # m12 is served as fastfake's fault-500: it always fails
COLLECTIONS = {
    "review": {"members": MODELS[0:5], "explore": 1, "purpose": "review"},
    "design": {"members": MODELS[2:7], "explore": 1},
    "quick": {"members": [MODELS[7], MODELS[8], MODELS[11]], "explore": 2},
    "agent": {"members": MODELS[0:3], "explore": 0, "shadow": 1},
}
USEFUL = {m: 0.85 - 0.05 * i for i, m in enumerate(MODELS)}   # each model's chance of a useful verdict
TABLES = ("panels", "calls", "usage", "verdicts")


# ---- 1. the template ----------------------------------------------------------------------------

def post(url: str, path: str, body: dict, headers: dict | None = None) -> dict:
    req = urllib.request.Request(url + path, json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read() or b"{}")


def get(url: str, path: str) -> dict:
    with urllib.request.urlopen(url + path, timeout=120) as r:
        return json.loads(r.read())


def prompt(n: int) -> str:
    words = ("Review this change for bugs in the error handling and say which lines hold them; "
             "explain the fix briefly and name anything else that looks wrong. ")
    return f"Question {n}: " + words * 4


def route_body(n: int, stream: bool) -> dict:
    return {"model": "bench/agent:route", "max_tokens": 1024, "stream": stream,
            "system": "You are a coding agent. Use the tools to read files before editing them.",
            "tools": [{"name": "read_file", "description": "Read a file of the project.",
                       "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}],
            "messages": [{"role": "user", "content": f"Turn {n}: " + "fix the failing test in src/app.py. " * 6}]}


def drive(url: str, panels: int, turns: int, rng: random.Random) -> list[dict]:
    """Ask the running service: panels, merged panels and route turns, four at a time. The seats it answered."""
    names = ("review", "design", "quick")
    jobs = [("panel", i) for i in range(panels)] + [("route", i) for i in range(turns)]
    rng.shuffle(jobs)
    seats, lock = [], threading.Lock()

    def one(kind: str, i: int) -> None:
        if kind == "route":
            headers = {"anthropic-version": "2023-06-01", "x-claude-code-session-id": f"conv-{i % 10}"}
            reply = post(url, "/v1/messages", route_body(i, False), headers)
            found = [{"call": reply["bench"]["call"], "model": reply["bench"]["model"], "kind": "route"}]
        else:
            name = names[i % 3] + (":merged" if i % 20 == 7 else "")
            headers = {"X-Bench-Session": f"sess-{i % 4}"} if i % 5 == 0 else {}
            messages = ([{"role": "system", "content": "Be precise."}] if i % 2 else []) + \
                [{"role": "user", "content": prompt(i)}]
            reply = post(url, "/v1/chat/completions", {"model": f"bench/{name}", "messages": messages}, headers)
            found = [{"call": s["call"], "model": s["model"], "kind": s["kind"]} for s in reply["bench"]["seats"]
                     if s["status"] == "ok"]
        with lock:
            seats.extend(found)

    def worker() -> None:
        while True:
            with lock:
                if not jobs:
                    return
                job = jobs.pop()
            one(*job)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return seats


def judge(url: str, seats: list[dict], rng: random.Random) -> int:
    """Verdicts on about a third of the answers (and on some shadow seats), claims on a fifth, a tenth revised."""
    given = 0
    for s in seats:
        if rng.random() > 0.35:
            continue
        useful = rng.random() < USEFUL.get(s["model"], 0.5)
        body = {"call": s["call"], "useful": useful}
        if rng.random() < 0.2:
            body["real"] = ["the bug is on line 12"] if useful else []
            body["false"] = [] if useful else ["the loop never ends", "the file is not closed"]
        if rng.random() < 0.3:
            body["note"] = "checked against the test run"
        post(url, "/bench/verdict", body)
        given += 1
        if rng.random() < 0.1:
            post(url, "/bench/verdict", {"call": s["call"], "useful": not useful, "note": "revised"})
            given += 1
    return given


def template(home: Path, root: Path, upstream: str, panels: int, turns: int, seed: int = 7) -> dict:
    """The service writes the template into `home`; returns what it answered for some of its calls (for the
    check against the replica once the service runs on it)."""
    configure(home, {"fast": {"base_url": upstream, "api": "openai"}},
              {m: "fast" for m in MODELS}, COLLECTIONS)
    models = json.loads((home / "config" / "models.json").read_text())
    models["models"]["m12"]["served"] = "fault-500"
    (home / "config" / "models.json").write_text(json.dumps(models, indent=2))
    rng = random.Random(seed)
    proc = start_service(home, root)
    try:
        wait_healthy(proc.url)
        seats = drive(proc.url, panels, turns, rng)
        verdicts = judge(proc.url, seats, rng)
        sample = [get(proc.url, f"/bench/calls/{s['call']}") for s in seats[:: max(1, len(seats) // 20)]]
    finally:
        proc.stop()
    return {"seats": len(seats), "verdicts": verdicts, "sample": sample}


# ---- 2. the replica -----------------------------------------------------------------------------

def base62(ms: int) -> str:
    out = []
    for _ in range(8):
        ms, digit = divmod(ms, 62)
        out.append(SORTED[digit])
    return "".join(reversed(out))


def from_base62(text: str) -> int:
    n = 0
    for ch in text:
        n = n * 62 + SORTED.index(ch)
    return n


class Mapping:
    """Copy k of the template: its times (created -> its share of the span) and its ids."""

    def __init__(self, t0: float, t1: float, end: float, span: float, copies: int):
        self.t0, self.copies = t0, copies
        self.period = span / copies
        self.start = end - span
        self.scale = self.period * 0.98 / max(t1 - t0, 1e-3)

    def time(self, t: float | None, k: int) -> float | None:
        return None if t is None else self.start + k * self.period + (t - self.t0) * self.scale

    def id(self, old: str | None, k: int) -> str | None:
        if old is None:
            return None
        prefix = "p_" if old.startswith("p_") else ""
        stamp = from_base62(old[len(prefix):len(prefix) + 8]) / 1000
        digest = hashlib.sha256(f"{old}|{k}".encode()).digest()[:9]
        return prefix + base62(round(self.time(stamp, k) * 1000)) + base64.urlsafe_b64encode(digest).decode()


def columns(conn: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA {schema}.table_info({table})")]


# Per table: the select of a copy's rows from the template (tpl), in the order the service wrote them.
def copy_sql(conn: sqlite3.Connection, table: str) -> str:
    mapped = {"id": "remap(id, :k)", "panel": "remap(panel, :k)", "call": "remap(call, :k)",
              "created": "retime(created, :k)", "month": "strftime('%Y-%m', retime(created, :k), 'unixepoch')",
              "extra": "CASE WHEN kind = 'shadow' AND json_extract(extra, '$.turn') IS NOT NULL THEN "
                       "json_set(extra, '$.turn', remap(json_extract(extra, '$.turn'), :k)) ELSE extra END"}
    cols = [c for c in columns(conn, table) if not (c == "id" and table in ("usage", "verdicts"))]
    select = ", ".join(mapped.get(c, f'"{c}"') for c in cols)   # quoted: verdicts has a column named false
    order = "rowid" if table in ("panels", "calls") else "id"
    names = ", ".join(f'"{c}"' for c in cols)
    return f"INSERT INTO main.{table} ({names}) SELECT {select} FROM tpl.{table} ORDER BY {order}"


def replicate(home: Path, calls: int, end: float | None = None) -> dict:
    """Copy the template in `home`'s bench.db until it holds about `calls` seat calls (see the module's text)."""
    db = home / "bench.db"
    tpl = home.parent / "template.db"
    src = sqlite3.connect(str(db))
    src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    src.close()
    shutil.copyfile(db, tpl)
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("ATTACH DATABASE ? AS tpl", (str(tpl),))
    per_copy = conn.execute("SELECT COUNT(*) FROM tpl.calls").fetchone()[0]
    copies = max(1, round(calls / per_copy))
    times = [conn.execute(f"SELECT MIN(created), MAX(created) FROM tpl.{t}").fetchone() for t in TABLES]
    t0, t1 = min(t[0] for t in times if t[0]), max(t[1] for t in times if t[1])
    span = copies * per_copy / CALLS_PER_DAY * 86400
    mapping = Mapping(t0, t1, end or time.time(), span, copies)
    conn.create_function("remap", 2, mapping.id, deterministic=True)
    conn.create_function("retime", 2, mapping.time, deterministic=True)
    conn.execute("BEGIN")
    for table in ("verdicts", "usage", "calls", "panels"):
        conn.execute(f"DELETE FROM main.{table}")
    conn.execute("COMMIT")
    sqls = {t: copy_sql(conn, t) for t in TABLES}
    started = time.perf_counter()
    for k in range(copies):
        conn.execute("BEGIN")
        for table in TABLES:
            conn.execute(sqls[table], {"k": k})
        conn.execute("COMMIT")
        if copies >= 20 and k % (copies // 10) == 0:
            print(f"  replica: copy {k + 1} of {copies} ({time.perf_counter() - started:.0f} s)", file=sys.stderr,
                  flush=True)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return {"copies": copies, "per_copy": per_copy, "calls": copies * per_copy, "span_days": span / 86400,
            "t0": t0, "t1": t1, "end": mapping.start + span, "seconds": time.perf_counter() - started}


# ---- 3. the check -------------------------------------------------------------------------------

def check(home: Path, built: dict) -> list[str]:
    """What check() found wrong (nothing: the replica is the template's rows, mapped as the module says)."""
    conn = sqlite3.connect(str(home / "bench.db"))
    conn.row_factory = sqlite3.Row
    conn.execute("ATTACH DATABASE ? AS tpl", (str(home.parent / "template.db"),))
    k_all = built["copies"]
    mapping = Mapping(built["t0"], built["t1"], built["end"], built["span_days"] * 86400, k_all)
    problems = []
    for table in TABLES:
        n_tpl = conn.execute(f"SELECT COUNT(*) FROM tpl.{table}").fetchone()[0]
        n = conn.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
        if n != n_tpl * k_all:
            problems.append(f"{table}: {n} rows, not {k_all} x {n_tpl}")
    for cut in ("kind", "status", "model", "collection"):
        tpl = dict(conn.execute(f"SELECT {cut}, COUNT(*) FROM tpl.calls GROUP BY {cut}").fetchall())
        got = dict(conn.execute(f"SELECT {cut}, COUNT(*) FROM main.calls GROUP BY {cut}").fetchall())
        if got != {key: v * k_all for key, v in tpl.items()}:
            problems.append(f"calls by {cut}: {got} is not {k_all} x {tpl}")
    for k in sorted({0, k_all // 2, k_all - 1}):
        problems += same_rows(conn, mapping, k)
    for what, sql in (
            ("a seat whose panel is missing", "SELECT COUNT(*) FROM calls c WHERE c.panel IS NOT NULL AND NOT EXISTS "
                                              "(SELECT 1 FROM panels p WHERE p.id = c.panel)"),
            ("a ledger line whose call is missing", "SELECT COUNT(*) FROM usage u WHERE u.call IS NOT NULL AND NOT "
                                                    "EXISTS (SELECT 1 FROM calls c WHERE c.id = u.call)"),
            ("a verdict whose call is missing", "SELECT COUNT(*) FROM verdicts v WHERE NOT EXISTS "
                                                "(SELECT 1 FROM calls c WHERE c.id = v.call)"),
            ("a shadow whose turn is missing", "SELECT COUNT(*) FROM calls s WHERE s.kind = 'shadow' AND NOT EXISTS "
                                               "(SELECT 1 FROM calls c WHERE c.id = json_extract(s.extra, '$.turn'))"),
            ("a verdict call with two current verdicts", "SELECT COUNT(*) FROM (SELECT call FROM verdicts WHERE "
                                                         "current = 1 GROUP BY call HAVING COUNT(*) > 1)")):
        n = conn.execute(sql).fetchone()[0]
        if n:
            problems.append(f"{n} x {what}")
    for r in conn.execute("SELECT id FROM calls UNION ALL SELECT id FROM panels"):
        if not ID.match(r["id"]):
            problems.append(f"id {r['id']!r} is not of the service's form")
            break
    conn.close()
    return problems


def same_rows(conn: sqlite3.Connection, mapping: Mapping, k: int) -> list[str]:
    """Copy k row for row against the template: equal but for the mapped columns, which equal the mapping."""
    for table in TABLES:
        cols = columns(conn, table)
        order = "rowid" if table in ("panels", "calls") else "id"
        tpl = conn.execute(f"SELECT * FROM tpl.{table} ORDER BY {order}").fetchall()
        got = conn.execute(f"SELECT * FROM main.{table} ORDER BY {order} LIMIT ? OFFSET ?",
                           (len(tpl), k * len(tpl))).fetchall()
        for a, b in zip(tpl, got):
            for c in cols:
                want, have = expected(a, c, table, mapping, k), b[c]
                if c == "extra" and have and table == "calls":
                    have = json.loads(have)
                if want is not SKIP and not same(want, have):
                    return [f"{table} copy {k}: {c} is {have!r}, its template row's maps to {want!r}"]
    return []


SKIP = object()


def same(a, b) -> bool:
    return abs(a - b) < 1e-6 if isinstance(a, float) and isinstance(b, float) else a == b


def expected(row, column: str, table: str, mapping: Mapping, k: int):
    """What copy k's row holds in `column`, from its template row."""
    value = row[column]
    if column == "id":
        return SKIP if table in ("usage", "verdicts") else mapping.id(value, k)   # theirs: INTEGER PRIMARY KEY
    if column in ("panel", "call"):
        return mapping.id(value, k)
    if column == "created":
        return mapping.time(value, k)
    if column == "month":
        return time.strftime("%Y-%m", time.gmtime(mapping.time(row["created"], k)))
    if column == "extra" and table == "calls" and value:
        extra = json.loads(value)
        if row["kind"] == "shadow" and "turn" in extra:
            extra["turn"] = mapping.id(extra["turn"], k)
        return extra
    return value
