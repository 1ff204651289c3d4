"""The usage ledger's totals kept, not summed again: per month and (connection, model, collection, kind) and per UTC
day, changed in the transaction of the ledger line (or the verdict on its call) that changes them."""
from __future__ import annotations

import operator
import time


KEY = ("month", "endpoint", "model", "collection", "kind")
SUMS = ("calls", "input_tokens", "output_tokens", "cached_tokens", "cost", "priced", "unpriced", "estimated",
        "scheduled", "judged", "useful")
DAY_SUMS = ("calls", "tokens", "cost", "priced")
LINE_COLS = "month, endpoint, model, collection, kind, input_tokens, output_tokens, cached_tokens, cost, estimated, " \
            "scheduled, created"
_UPSERT = (f"INSERT INTO usage_totals ({', '.join(KEY + SUMS)}) VALUES ({', '.join('?' * (len(KEY) + len(SUMS)))}) "
           f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET " + ", ".join(f"{c} = {c} + excluded.{c}" for c in SUMS))
_UPSERT_DAY = (f"INSERT INTO usage_days (day, {', '.join(DAY_SUMS)}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (day) DO "
               "UPDATE SET " + ", ".join(f"{c} = {c} + excluded.{c}" for c in DAY_SUMS))

SCHEMA = """
    CREATE TABLE usage_totals (
        month TEXT NOT NULL, endpoint TEXT NOT NULL, model TEXT NOT NULL, collection TEXT NOT NULL, kind TEXT NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL
        DEFAULT 0, cached_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0, priced INTEGER NOT NULL
        DEFAULT 0, unpriced INTEGER NOT NULL DEFAULT 0, estimated INTEGER NOT NULL DEFAULT 0, scheduled INTEGER NOT
        NULL DEFAULT 0, judged INTEGER NOT NULL DEFAULT 0, useful INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (month, endpoint, model, collection, kind));
    CREATE TABLE usage_days (
        day TEXT PRIMARY KEY, calls INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0, priced INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX usage_explore_call ON usage (call) WHERE kind = 'explore'
"""


def fold(sums: dict, key, values: tuple, sign: int) -> None:
    """Add `values` (sign 1) to, or take them (-1) from, `sums[key]`: sums made in C."""
    if key in sums:
        sums[key] = list(map(operator.add if sign > 0 else operator.sub, sums[key], values))
    else:
        sums[key] = list(values) if sign > 0 else [-v for v in values]


_day: tuple = (-1, "")   # the UTC day last worked out, as (days since the epoch, YYYY-MM-DD): one object, swapped whole


def utc_day(epoch: float) -> str:
    global _day
    n, label = _day
    if n != int(epoch // 86400):
        _day = (int(epoch // 86400), time.strftime("%Y-%m-%d", time.gmtime(epoch)))
        return _day[1]
    return label


def part(line: dict, useful: int | None = None) -> tuple:
    """(key, sums, day, day sums) a ledger line adds (a mapping of LINE_COLS); `useful`: its call's current verdict,
    counted for an explore seat's line (what the Quotas page's exploration reports)."""
    if line["kind"] != "explore":
        useful = None
    tokens_in, tokens_out, cost = line["input_tokens"] or 0, line["output_tokens"] or 0, line["cost"]
    key = tuple(line[k] or "" for k in KEY)
    sums = (1, tokens_in, tokens_out, line["cached_tokens"] or 0, cost or 0.0, int(cost is not None),
            int(cost is None and tokens_in + tokens_out > 0), int(line["estimated"] or 0), int(line["scheduled"] or 0),
            int(useful is not None), int(useful == 1))
    return key, sums, utc_day(line["created"]), (1, tokens_in + tokens_out, cost or 0.0, int(cost is not None))


def keep_row(values: tuple) -> tuple:
    """(apply_new, part() of a new line's row (ledger.Line.values(), in ledger.COLUMNS' order): no verdict yet): the
    Database.insert `keep` pair of ledger.keep, made in one call (every call record's line comes here)."""
    (month, endpoint, model, _call, kind, collection, tokens_in, tokens_out, cached, cost, estimated, scheduled,
     created) = values
    return apply_new, ((month or "", endpoint or "", model or "", collection or "", kind or ""),
                       (1, tokens_in, tokens_out, cached, cost or 0.0, int(cost is not None),
                        int(cost is None and tokens_in + tokens_out > 0), estimated, scheduled, 0, 0),
                       utc_day(created), (1, tokens_in + tokens_out, cost or 0.0, int(cost is not None)))


def apply(conn, changes: list) -> None:
    """Each (old part or None, new part or None), inside the writer's transaction."""
    totals: dict = {}
    days: dict = {}
    for old, new in changes:   # each old part taken away (-1), each new one added (1)
        for p, sign in ((old, -1), (new, 1)):
            if p is not None:
                key, sums, day, day_sums = p
                fold(totals, key, sums, sign)
                fold(days, day, day_sums, sign)
    if totals:
        conn.executemany(_UPSERT, [(*k, *v) for k, v in totals.items() if any(v)])
    if days:
        conn.executemany(_UPSERT_DAY, [(k, *v) for k, v in days.items() if any(v)])


def apply_new(conn, parts: list) -> None:
    """apply() of new lines' parts: nothing taken away."""
    apply(conn, [(None, p) for p in parts])


def judged(conn, call: str, kind: str | None, old: int | None, new: int | None) -> None:
    """A verdict on a call changed from `old` to `new` (its useful, or None): an explore seat's ledger line follows
    (found by usage_explore_call; no other kind's totals count verdicts)."""
    if kind != "explore":
        return
    lines = conn.execute(f"SELECT {LINE_COLS} FROM usage WHERE call = ? AND kind = 'explore'", (call,)).fetchall()
    apply(conn, [(part(line, old), part(line, new)) for line in lines])


def rebuild(conn) -> None:
    """The totals made again from every ledger line (and the current verdicts on their calls)."""
    conn.execute("DELETE FROM usage_totals")
    conn.execute("DELETE FROM usage_days")
    conn.execute(
        f"INSERT INTO usage_totals ({', '.join(KEY + SUMS)}) SELECT COALESCE(u.month, ''), COALESCE(u.endpoint, ''), "
        "COALESCE(u.model, ''), COALESCE(u.collection, ''), COALESCE(u.kind, ''), COUNT(*), "
        "COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.cached_tokens), 0), "
        "COALESCE(SUM(u.cost), 0), COUNT(u.cost), "
        "SUM(u.cost IS NULL AND COALESCE(u.input_tokens, 0) + COALESCE(u.output_tokens, 0) > 0), "
        "COALESCE(SUM(u.estimated), 0), COALESCE(SUM(u.scheduled), 0), COUNT(v.id), COALESCE(SUM(v.useful = 1), 0) "
        "FROM usage u LEFT JOIN verdicts v ON v.call = u.call AND v.current = 1 AND u.kind = 'explore' "
        "GROUP BY 1, 2, 3, 4, 5")
    conn.execute(
        f"INSERT INTO usage_days (day, {', '.join(DAY_SUMS)}) SELECT date(created, 'unixepoch'), COUNT(*), "
        "COALESCE(SUM(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0)), 0), COALESCE(SUM(cost), 0), "
        "COUNT(cost) FROM usage GROUP BY 1")
