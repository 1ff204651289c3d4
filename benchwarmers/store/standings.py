"""The record kept, not recomputed: per model and collection its counts, its latest answer times and its latest
judged answers, and calls per day, changed in the transaction of the call or verdict row that changes them."""
from __future__ import annotations

import json
import operator
import time
from typing import NamedTuple

from .ledgerkept import fold
from .windows import CLAIM, JUDGED, KINDS_SQL, NONE, SPEED, Window, appended, refill_judged, refill_speed

# What counts: the answers to the user's question. Merge calls are not (they stay out of counts and speed alike).
KINDS = ("member", "explore", "with", "route", "shadow")
SPEED_WINDOW = 32      # a standing's median seconds: over its latest answered calls (by created, then seconds)
JUDGED_WINDOW = 640    # a standing's latest judged answers and point claims (by created): core.rankings's drop reads them
BASE_COUNTS = ("calls", "asks", "answers", "failures", "useful", "not_useful", "real_claims", "false_claims", "timed")
# What an agent's turns showed, counted as each call is recorded (its `signs`, core/toolcheck.py): answers whose tool
# calls were checked, those that failed, each kind of fault, and answers the client sent again (migration 27).
SIGNS = ("tools", "unoffered", "not_json", "schema", "reported", "retried")
FAULTS = ("unoffered", "not_json", "schema", "reported")
SIGN_COUNTS = ("tool_turns", "tool_failed", "tool_unoffered", "tool_not_json", "tool_schema", "tool_reported",
               "retried")
COUNTS = BASE_COUNTS + SIGN_COUNTS
DAY_COUNTS = ("calls", "seconds_sum", "seconds_n", "judged", "useful")
ZERO = (0,) * len(COUNTS)
NO_SIGNS = (0,) * len(SIGN_COUNTS)   # the SIGN_COUNTS of a call that showed none (most)
TIMED = 2 + COUNTS.index("timed")    # where a standing's row (model, scope, COUNTS..., speeds) holds it
_STANDING_COLS = ", ".join(("model", "scope") + COUNTS + ("speeds",))
_UPSERT_STANDING = (f"INSERT INTO standings ({_STANDING_COLS}) VALUES ({', '.join('?' * (len(COUNTS) + 3))}) "
                    "ON CONFLICT (model, scope) DO UPDATE SET "
                    + ", ".join(f"{c} = excluded.{c}" for c in COUNTS + ("speeds",)))
_UPSERT_DAY = ("INSERT INTO days (day, model, scope, counted, status, calls, seconds_sum, seconds_n, judged, useful) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, model, scope, counted, status) DO UPDATE SET "
               + ", ".join(f"{c} = {c} + excluded.{c}" for c in DAY_COUNTS))


class Part(NamedTuple):
    """What one call (with its current verdict) adds to the kept record."""
    key: tuple | None            # (model, scope) of its standing; None: not an answer to the user (a merge)
    counts: tuple                # in COUNTS' order
    speed: tuple | None          # (created, seconds) of an answered call
    judged: tuple | None         # (created, useful) of a judged one
    day: tuple                   # (day, model, scope, counted, status) of calls per day
    day_counts: tuple            # in DAY_COUNTS' order


_day: tuple = (0.0, 0.0, "")   # (start, end, YYYY-MM-DD) of the local day last worked out: nearly every call asks it


def day_of(epoch: float) -> str:
    """The service's local day of a moment (calls per day are kept by it)."""
    global _day
    start, end, label = _day
    if start <= epoch < end:
        return label
    t = time.localtime(epoch)
    start = time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))
    end = time.mktime((t.tm_year, t.tm_mon, t.tm_mday + 1, 0, 0, 0, 0, 0, -1))   # mktime carries a day over
    label = time.strftime("%Y-%m-%d", t)
    _day = (start, end, label)
    return label


def part(row, verdict: tuple | None) -> Part:
    """The part of a call row (model, collection, kind, status, seconds, created) with its current verdict
    (useful, real claims, false claims) or None."""
    counted = row["kind"] in KINDS
    scope = row["collection"] or NONE
    status, seconds, created = row["status"], row["seconds"], row["created"]
    timed = status == "ok" and seconds is not None
    useful, real, false = verdict if verdict else (None, 0, 0)
    signs = _signs(row)
    counts = (1, int(status != "skipped"), int(status == "ok"), int(status in ("failed", "timeout")),
              int(useful == 1), int(useful == 0), real, false, int(timed)) + (sign_counts(signs) if signs else NO_SIGNS)
    return Part((row["model"], scope) if counted else None, counts,
                (created, seconds) if timed and counted else None,
                (created, int(useful)) if useful is not None and counted else None,
                (day_of(created), row["model"], scope, int(counted), status),
                (1, seconds if timed else 0.0, int(timed), int(useful is not None), int(useful == 1)))


def _signs(row) -> str | None:
    try:
        return row["signs"]
    except (KeyError, IndexError):   # a row read before migration 27's column
        return None


def sign_counts(signs: str | None) -> tuple:
    """A call's `signs` (comma-separated, see SIGNS) as its SIGN_COUNTS."""
    if not signs:
        return NO_SIGNS
    have = set(signs.split(","))
    return (int("tools" in have), int(bool(have & set(FAULTS))), *(int(k in have) for k in FAULTS),
            int("retried" in have))


def verdict_of(useful, real_json: str | None, false_json: str | None) -> tuple:
    """A verdict as the record counts it: (useful, real claims, false claims)."""
    return int(useful), len(json.loads(real_json or "[]")), len(json.loads(false_json or "[]"))


# ---- applying changes --------------------------------------------------------------------------

def apply(conn, changes: list, exclude: str | None = None) -> None:
    """Bring the kept record up to date with `changes`, each (old part or None, new part or None), inside the
    writer's transaction. `exclude`: the call whose row changed (a window refilled from the history skips it: its new
    part is added here)."""
    deltas: dict = {}
    speed_ops: dict = {}
    judged_ops: dict = {}
    days: dict = {}
    taken = False   # whether an old part came: only then can an entry net out (a window sorts what it is given)
    for old, new in changes:   # each old part taken away (-1), each new one added (1)
        for p, sign in ((old, -1), (new, 1)):
            if p is None:
                continue
            taken = taken or sign < 0
            fold(days, p.day, p.day_counts, sign)
            key = p.key
            if key is None:
                continue
            fold(deltas, key, p.counts, sign)
            if p.speed is not None:
                if key in speed_ops:
                    speed_ops[key].append((sign, p.speed))
                else:
                    speed_ops[key] = [(sign, p.speed)]
            if p.judged is not None:
                if key in judged_ops:
                    judged_ops[key].append((sign, p.judged))
                else:
                    judged_ops[key] = [(sign, p.judged)]
    # an entry taken and given back (a verdict leaves the answer's time) is none
    for ops in (speed_ops, judged_ops) if taken else ():
        for key in list(ops):
            ops[key] = net(ops[key])
            if not ops[key]:
                del ops[key]
    _standings(conn, deltas, speed_ops, exclude)
    if judged_ops:
        _judged(conn, judged_ops, deltas, exclude)
    if days:
        conn.executemany(_UPSERT_DAY, [(*k, *v) for k, v in days.items() if any(v)])


def net(ops: list) -> list:
    """(sign, entry) ops with each entry taken away and added again left out."""
    count: dict = {}
    for sign, entry in ops:
        count[entry] = count.get(entry, 0) + sign
    return [(-1, e) for e, n in count.items() if n < 0 for _ in range(-n)] + \
        [(1, e) for e, n in count.items() if n > 0 for _ in range(n)]


def apply_new(conn, parts: list) -> None:
    """The parts of calls just written (a batch's new rows): nothing to take away."""
    apply(conn, [(None, p) for p in parts])


def _standings(conn, deltas: dict, speed_ops: dict, exclude: str | None) -> None:
    keys = [k for k, v in deltas.items() if any(v)] + [k for k in speed_ops if not any(deltas.get(k, ()))]
    if not keys:
        return
    now = {(r[0], r[1]): list(r) for r in _rows_for(conn, "standings", _STANDING_COLS, keys)}
    out = []
    for key in dict.fromkeys(keys):
        row = now.get(key) or [*key, *ZERO, None]
        before_timed = row[TIMED]
        if key in deltas:
            row[2:2 + len(COUNTS)] = map(operator.add, row[2:2 + len(COUNTS)], deltas[key])
        if key in speed_ops:
            packed = row[-1]
            row[-1] = appended(SPEED, packed, SPEED_WINDOW, speed_ops[key])
            if row[-1] is None:   # a change inside the window, not newer answers at its end
                window = Window(SPEED, packed, SPEED_WINDOW)
                window.change(speed_ops[key], before_timed,
                              lambda below, n, k=key: refill_speed(conn, k, below, n, exclude))
                row[-1] = window.pack()
        out.append(row)
    conn.executemany(_UPSERT_STANDING, out)


def _judged(conn, ops: dict, deltas: dict, exclude: str | None, claims: dict | None = None) -> None:
    """The judged windows of these standings with `ops` done; `deltas` (answers) and `claims` ((real, false) point
    claims) are what the change added to their counts, to tell how many entries the history held before it."""
    keys = list(ops)
    now = {(r[0], r[1]): r for r in _rows_for(conn, "judged", "model, scope, version, window", keys)}
    u, nu = COUNTS.index("useful"), COUNTS.index("not_useful")
    out = []
    for key in keys:
        row = now.get(key)
        standing = conn.execute("SELECT useful, not_useful, point_real, point_false FROM standings WHERE model = ? "
                                "AND scope = ?", key).fetchone()
        judged_after = sum(standing) if standing else 0
        d = deltas.get(key) or [0] * len(COUNTS)
        before = judged_after - d[u] - d[nu] - sum((claims or {}).get(key, ()))
        window = Window(JUDGED, row[3] if row else None, JUDGED_WINDOW)
        window.change(ops[key], before, lambda below, n, k=key: refill_judged(conn, k, below, n, exclude))
        out.append((*key, (row[2] if row else 0) + 1, window.pack()))
    conn.executemany("INSERT INTO judged (model, scope, version, window) VALUES (?, ?, ?, ?) ON CONFLICT (model, scope) "
                     "DO UPDATE SET version = excluded.version, window = excluded.window", out)


def _rows_for(conn, table: str, cols: str, keys: list) -> list:
    rows = []
    for start in range(0, len(keys), 400):
        chunk = keys[start:start + 400]
        where = " OR ".join(["(model = ? AND scope = ?)"] * len(chunk))
        rows += conn.execute(f"SELECT {cols} FROM {table} WHERE {where}", [x for k in chunk for x in k]).fetchall()
    return rows


# ---- the changes the store's write paths make ---------------------------------------------------

CALL_COLS = "model, collection, kind, status, seconds, created, signs"


def current_verdict(conn, call: str) -> tuple | None:
    row = conn.execute("SELECT useful, real, false FROM verdicts WHERE call = ? AND current = 1", (call,)).fetchone()
    return verdict_of(row[0], row[1], row[2]) if row else None


def call_row(conn, call: str):
    return conn.execute(f"SELECT {CALL_COLS} FROM calls WHERE id = ?", (call,)).fetchone()


def amended(conn, call: str, old_row, new_row) -> None:
    """A call's row was made again (a late seat's answer): what its old row added goes, its new row's comes."""
    verdict = current_verdict(conn, call)
    apply(conn, [(part(old_row, verdict) if old_row is not None else None, part(new_row, verdict))], exclude=call)


def judged(conn, call: str, row, old: tuple | None, new: tuple) -> None:
    """A verdict on a call (its row as CALL_COLS) replaced `old` (or none) with `new`."""
    if row is not None:
        apply(conn, [(part(row, old), part(row, new))], exclude=call)


UPSERT_CLAIMS = ("INSERT INTO standings (model, scope, real_claims, false_claims, point_real, point_false) "
                 "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model, scope) DO UPDATE SET "
                 "real_claims = real_claims + excluded.real_claims, false_claims = false_claims + "
                 "excluded.false_claims, point_real = point_real + excluded.point_real, "
                 "point_false = point_false + excluded.point_false")


def claimed(conn, changes: list) -> None:
    """Judged points' claims given (sign 1) or taken back (-1): `changes` holds (key, created, real, sign), key the
    (model, scope) of the seat's standing, `created` its call's moment. A claim counts in the standing's real or
    false claims (and its point claims), and is an entry of its latest judged evidence at its call's moment."""
    counts: dict = {}
    ops: dict = {}
    for key, created, real, sign in changes:
        c = counts.setdefault(key, [0, 0])
        c[0 if real else 1] += sign
        ops.setdefault(key, []).append((sign, (created, CLAIM + int(real))))
    rows = [(*key, r, f, r, f) for key, (r, f) in counts.items() if r or f]
    if rows:
        conn.executemany(UPSERT_CLAIMS, rows)
    for key in list(ops):
        ops[key] = net(ops[key])
        if not ops[key]:
            del ops[key]
    if ops:
        _judged(conn, ops, {}, None, {key: counts[key] for key in ops})


# ---- the schema, and the kept record made again from the history --------------------------------

SCHEMA = """
    CREATE TABLE standings (
        model TEXT NOT NULL, scope TEXT NOT NULL, calls INTEGER NOT NULL DEFAULT 0, asks INTEGER NOT NULL DEFAULT 0,
        answers INTEGER NOT NULL DEFAULT 0, failures INTEGER NOT NULL DEFAULT 0, useful INTEGER NOT NULL DEFAULT 0,
        not_useful INTEGER NOT NULL DEFAULT 0, real_claims INTEGER NOT NULL DEFAULT 0,
        false_claims INTEGER NOT NULL DEFAULT 0, timed INTEGER NOT NULL DEFAULT 0, speeds BLOB,
        PRIMARY KEY (model, scope));
    CREATE TABLE judged (
        model TEXT NOT NULL, scope TEXT NOT NULL, version INTEGER NOT NULL, window BLOB, PRIMARY KEY (model, scope));
    CREATE TABLE days (
        day TEXT NOT NULL, model TEXT NOT NULL, scope TEXT NOT NULL, counted INTEGER NOT NULL, status TEXT NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0, seconds_sum REAL NOT NULL DEFAULT 0, seconds_n INTEGER NOT NULL DEFAULT 0,
        judged INTEGER NOT NULL DEFAULT 0, useful INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (day, model, scope, counted, status))
"""
_JOINED = "FROM calls c LEFT JOIN verdicts v ON v.call = c.id AND v.current = 1"


def rebuild(conn) -> None:
    """Every kept table made again from the calls and verdicts (a migration's step, and `bench store rebuild`),
    inside the caller's transaction."""
    for table in ("standings", "judged", "days"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute(
        f"INSERT INTO standings ({', '.join(('model', 'scope') + BASE_COUNTS)}) "
        "SELECT c.model, COALESCE(c.collection, ''), "
        "COUNT(*), SUM(c.status != 'skipped'), SUM(c.status = 'ok'), SUM(c.status IN ('failed', 'timeout')), "
        "COALESCE(SUM(v.useful = 1), 0), COALESCE(SUM(v.useful = 0), 0), "
        "COALESCE(SUM(json_array_length(COALESCE(v.real, '[]'))), 0), "
        "COALESCE(SUM(json_array_length(COALESCE(v.false, '[]'))), 0), "
        f"SUM(c.status = 'ok' AND c.seconds IS NOT NULL) {_JOINED} WHERE c.kind IN {KINDS_SQL} "
        "GROUP BY c.model, COALESCE(c.collection, '')")
    speeds = _latest(conn, "c.seconds", "c.status = 'ok' AND c.seconds IS NOT NULL", SPEED_WINDOW)
    conn.executemany("UPDATE standings SET speeds = ? WHERE model = ? AND scope = ?",
                     [(b"".join(SPEED.pack(*e) for e in entries), *key) for key, entries in speeds.items()])
    judged_rows = _latest(conn, "v.useful", "v.id IS NOT NULL", JUDGED_WINDOW)
    conn.executemany("INSERT INTO judged (model, scope, version, window) VALUES (?, ?, 1, ?)",
                     [(*key, b"".join(JUDGED.pack(c, int(u)) for c, u in entries))
                      for key, entries in judged_rows.items()])
    conn.execute(
        "INSERT INTO days (day, model, scope, counted, status, calls, seconds_sum, seconds_n, judged, useful) "
        "SELECT strftime('%Y-%m-%d', c.created, 'unixepoch', 'localtime'), c.model, COALESCE(c.collection, ''), "
        f"COALESCE(c.kind IN {KINDS_SQL}, 0), c.status, COUNT(*), "
        "COALESCE(SUM(CASE WHEN c.status = 'ok' AND c.seconds IS NOT NULL THEN c.seconds END), 0), "
        "SUM(c.status = 'ok' AND c.seconds IS NOT NULL), COUNT(v.id), COALESCE(SUM(v.useful = 1), 0) "
        f"{_JOINED} GROUP BY 1, 2, 3, 4, 5")


def _has(text: str) -> str:
    return f"COALESCE(SUM((',' || c.signs || ',') LIKE '%,{text},%'), 0)"


def rebuild_signs(conn) -> None:
    """The standings' SIGN_COUNTS made again from the calls' signs (migration 27, and `bench store rebuild`)."""
    fault = " OR ".join(f"(',' || c.signs || ',') LIKE '%,{k},%'" for k in FAULTS)
    sums = [_has("tools"), f"COALESCE(SUM({fault}), 0)", *(_has(k) for k in FAULTS), _has("retried")]
    rows = conn.execute(f"SELECT c.model, COALESCE(c.collection, ''), {', '.join(sums)} FROM calls c "
                        f"WHERE c.kind IN {KINDS_SQL} AND c.signs IS NOT NULL GROUP BY 1, 2").fetchall()
    sets = ", ".join(f"{c} = ?" for c in SIGN_COUNTS)
    conn.execute(f"UPDATE standings SET {sets}", (0,) * len(SIGN_COUNTS))
    conn.executemany(f"UPDATE standings SET {sets} WHERE model = ? AND scope = ?",
                     [(*r[2:], r[0], r[1]) for r in rows])


def rebuild_judged_with_claims(conn) -> None:
    """The judged windows made again from judged answers and point claims together (a claim's entry CLAIM + real), after
    rebuild() made them from the answers alone (migration 24, and `bench store rebuild`)."""
    conn.execute("DELETE FROM judged")
    rows = conn.execute(
        "SELECT model, scope, created, value FROM (SELECT model, scope, created, value, ROW_NUMBER() OVER "
        "(PARTITION BY model, scope ORDER BY created DESC, value DESC) AS n FROM ("
        "SELECT c.model AS model, COALESCE(c.collection, '') AS scope, c.created AS created, v.useful AS value "
        f"FROM calls c JOIN verdicts v ON v.call = c.id AND v.current = 1 WHERE c.kind IN {KINDS_SQL} UNION ALL "
        f"SELECT c.model, COALESCE(c.collection, ''), c.created, {CLAIM} + pc.real FROM point_claims pc JOIN calls c "
        f"ON c.id = pc.call WHERE c.kind IN {KINDS_SQL})) WHERE n <= ? ORDER BY model, scope, created, value",
        (JUDGED_WINDOW,))
    windows: dict = {}
    for model, scope, created, v in rows:
        windows.setdefault((model, scope), []).append((created, int(v)))
    conn.executemany("INSERT INTO judged (model, scope, version, window) VALUES (?, ?, 1, ?)",
                     [(*key, b"".join(JUDGED.pack(*e) for e in entries)) for key, entries in windows.items()])


def _latest(conn, value: str, where: str, size: int) -> dict:
    """Per standing, its latest `size` (created, value) entries oldest first (a window function over the history)."""
    out: dict = {}
    rows = conn.execute(
        f"SELECT model, scope, created, value FROM (SELECT c.model AS model, COALESCE(c.collection, '') AS scope, "
        f"c.created AS created, {value} AS value, ROW_NUMBER() OVER (PARTITION BY c.model, "
        f"COALESCE(c.collection, '') ORDER BY c.created DESC, {value} DESC) AS n {_JOINED} "
        f"WHERE c.kind IN {KINDS_SQL} AND {where}) WHERE n <= ? ORDER BY model, scope, created, value", (size,))
    for model, scope, created, v in rows:
        out.setdefault((model, scope), []).append((created, v))
    return out


# ---- reading ------------------------------------------------------------------------------------

POINT_COUNTS = ("point_real", "point_false")   # of real_claims and false_claims, those judged points gave
JUDGE_COUNTS = ("judge_useful", "judge_not_useful")   # a judge model's verdicts (store/judgestore.py)
_READ_COLS = _STANDING_COLS + ", " + ", ".join(POINT_COUNTS + JUDGE_COUNTS)


def standing_rows(db, scopes: tuple | None) -> list:
    """The kept standings of these scopes (collection names, NONE for calls of no collection), or of all."""
    if scopes is None:
        return db.query(f"SELECT {_READ_COLS} FROM standings")
    if not scopes:
        return []
    return db.query(f"SELECT {_READ_COLS} FROM standings WHERE scope IN ({', '.join('?' * len(scopes))})",
                    tuple(scopes))


def judged_windows(db, model: str, scopes: tuple | None) -> list:
    """A model's latest judged answers, a row (window) per standing of these scopes (or of all)."""
    where, params = ("", ()) if scopes is None else (f" AND scope IN ({', '.join('?' * len(scopes))})", tuple(scopes))
    return db.query(f"SELECT window FROM judged WHERE model = ?{where}", (model, *params))


def speeds(packed: bytes | None) -> list:
    return [tuple(e) for e in SPEED.iter_unpack(packed)] if packed else []


def judged_entries(packed: bytes | None) -> list:
    return [tuple(e) for e in JUDGED.iter_unpack(packed)] if packed else []
