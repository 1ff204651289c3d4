"""The usage ledger: one line for each call sent upstream (its tokens, cached tokens, cost and seat kind), and its
totals by month, connection, model, collection and kind."""
from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass, field

from ..errors import BadRequest
from . import ledgerkept
from .batches import Written, insert_sql
from .db import Database

# What a line's kind says: a panel's seats (member, explore, with), a merge, a referee (the panel's points), a route
# turn, its shadows and their judge, a probe, a speed test, or a suite task. Kinds are the call records' own, except
# probe, speed and suite.
KINDS = ("member", "explore", "with", "merge", "referee", "route", "shadow", "judge", "probe", "speed", "suite")
BY = {"model": "model", "connection": "endpoint", "collection": "collection", "kind": "kind"}
MONTH = re.compile(r"\d{4}-(0[1-9]|1[0-2])")
COLUMNS = ("month", "endpoint", "model", "call", "kind", "collection", "input_tokens", "output_tokens",
           "cached_tokens", "cost", "estimated", "scheduled", "created")


_month: tuple = (0.0, 0.0, "")   # (start, end, YYYY-MM) of the month last worked out: nearly every call asks it


def month_of(epoch: float) -> str:
    """The ledger's month of a moment: the calendar month in UTC, as YYYY-MM."""
    start, end, label = _month
    return label if start <= epoch < end else _month_span(epoch)[2]


def month_end(epoch: float) -> float:
    """When the UTC calendar month of `epoch` ends."""
    start, end, _ = _month
    return end if start <= epoch < end else _month_span(epoch)[1]


def _month_span(epoch: float) -> tuple:
    global _month
    t = time.gmtime(epoch)
    year, month = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
    _month = (float(calendar.timegm((t.tm_year, t.tm_mon, 1, 0, 0, 0))),
              float(calendar.timegm((year, month, 1, 0, 0, 0))), f"{t.tm_year:04d}-{t.tm_mon:02d}")
    return _month


def cost_of(price_in: float | None, price_out: float | None, tokens_in: int, tokens_out: int) -> float | None:
    """USD for these tokens at these prices (USD per million tokens); None when a price the tokens need is unknown.
    Cached input tokens are priced as input: no cache price is known."""
    if (tokens_in and price_in is None) or (tokens_out and price_out is None):
        return None
    if price_in is None and price_out is None:
        return None
    return (tokens_in * (price_in or 0.0) + tokens_out * (price_out or 0.0)) / 1_000_000


@dataclass
class Line:
    endpoint: str | None
    model: str
    kind: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    collection: str | None = None
    call: str | None = None           # the call record it belongs to; a probe or a speed test has none
    estimated: bool = False           # the upstream reported no usage: the token counts are our estimate
    scheduled: bool = False           # made by one of the scheduler's jobs (its probes and speed tests)
    created: float = field(default_factory=time.time)

    def values(self) -> tuple:
        """The row, in COLUMNS' order."""
        return (month_of(self.created), self.endpoint, self.model, self.call, self.kind, self.collection,
                self.input_tokens, self.output_tokens, self.cached_tokens, self.cost, int(self.estimated),
                int(self.scheduled), self.created)


HEAD = f"INSERT INTO usage ({', '.join(COLUMNS)})"   # a line's row goes to Database.insert as (HEAD, values())


keep = ledgerkept.keep_row
"""keep(values): what the kept totals take from a new line (its row, Line.values()): a Database.insert `keep` pair."""


def amend(conn, call: str, line: Line | None, since: float) -> None:
    """A call's line once more, inside the writer's transaction: the one it has corrected in place (its tokens and
    cost; it keeps its moment), or added if it has none; removed when the call turned out never to be sent. The
    line is looked for among those made at or after `since`; the kept totals follow."""
    mine = f"SELECT {ledgerkept.LINE_COLS} FROM usage WHERE created >= ? AND call = ?"
    before = conn.execute(mine, (since, call)).fetchall()
    if line is None:
        conn.execute("DELETE FROM usage WHERE created >= ? AND call = ?", (since, call))
    else:
        found = conn.execute("UPDATE usage SET input_tokens = ?, output_tokens = ?, cached_tokens = ?, cost = ?, "
                             "estimated = ? WHERE created >= ? AND call = ?",
                             (line.input_tokens, line.output_tokens, line.cached_tokens, line.cost,
                              int(line.estimated), since, call)).rowcount
        if not found:
            conn.execute(insert_sql(HEAD, len(COLUMNS)), line.values())
    after = conn.execute(mine, (since, call)).fetchall()
    verdict = conn.execute("SELECT useful FROM verdicts WHERE call = ? AND current = 1", (call,)).fetchone()
    useful = verdict[0] if verdict else None
    ledgerkept.apply(conn, [(ledgerkept.part(r, useful), None) for r in before]
                     + [(None, ledgerkept.part(r, useful)) for r in after])


def check_month(value: str | None, now: float | None = None) -> str:
    if value in (None, ""):
        return month_of(time.time() if now is None else now)
    if not isinstance(value, str) or not MONTH.fullmatch(value):
        raise BadRequest(f"Month {value!r} is not a month.", "Give it as YYYY-MM, e.g. 2026-11.")
    return value


def check_by(value: str | None) -> str:
    if value in (None, ""):
        return "model"
    if value not in BY:
        raise BadRequest(f"Cannot total usage by {value!r}.", "Total it by " + ", ".join(BY) + ".")
    return value


SUMS = ("SUM(calls) AS calls, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, "
        "SUM(cached_tokens) AS cached_tokens, CASE WHEN SUM(priced) > 0 THEN SUM(cost) END AS cost, "
        "SUM(unpriced) AS unpriced, SUM(estimated) AS estimated, SUM(scheduled) AS scheduled, "
        "SUM(judged) AS judged, SUM(useful) AS useful")   # over the kept totals (store/ledgerkept.py)


def _sums(row) -> dict:
    return {"calls": row["calls"] or 0, "input_tokens": row["input_tokens"] or 0,
            "output_tokens": row["output_tokens"] or 0, "cached_tokens": row["cached_tokens"] or 0,
            "cost": round(row["cost"], 6) if row["cost"] is not None else None,
            "unpriced": row["unpriced"] or 0, "estimated": row["estimated"] or 0, "scheduled": row["scheduled"] or 0}


class Ledger:
    def __init__(self, db: Database):
        self.db = db

    def add(self, line: Line) -> Written:
        """Queue a line of its own (a probe's, a speed test's); it is done once it is committed."""
        values = line.values()
        return self.db.insert((HEAD, values), keep=(keep(values),))

    def totals(self, month: str, by: str) -> dict:
        """The month's lines totalled by one cut (`by`: model, connection, collection or kind), largest first."""
        self.db.sync()
        column = BY[by]
        rows = self.db.query(f"SELECT {column} AS name, {SUMS} FROM usage_totals WHERE month = ? GROUP BY {column} "
                             "ORDER BY calls DESC, name", (month,))
        whole = self.db.one(f"SELECT {SUMS} FROM usage_totals WHERE month = ?", (month,))
        return {"month": month, "by": by, "rows": [{"name": r["name"] or None, **_sums(r)} for r in rows],
                "total": _sums(whole)}

    def months(self) -> list[str]:
        """The months the ledger has lines for, newest first."""
        out: list[str] = []
        below = "~"   # one look down the totals' key a month, newest first, rather than a walk of it all
        while True:
            row = self.db.one("SELECT MAX(month) AS month FROM usage_totals WHERE month < ?", (below,))
            if row is None or row["month"] is None:
                return out
            below = row["month"]
            if self.db.one("SELECT 1 FROM usage_totals WHERE month = ? AND calls > 0 LIMIT 1", (below,)):
                out.append(below)

    def daily(self, since: float, until: float) -> list[dict]:
        """Calls and tokens per UTC day from `since` to `until`, every day listed (empty ones as zero)."""
        self.db.sync()
        rows = {r["day"]: r for r in self.db.query(
            "SELECT day, calls, tokens, CASE WHEN priced > 0 THEN cost END AS cost FROM usage_days "
            "WHERE day >= ? AND day < ?", (ledgerkept.utc_day(since), ledgerkept.utc_day(until)))}
        out, t = [], since
        while t < until:
            day = time.strftime("%Y-%m-%d", time.gmtime(t))
            r = rows.get(day)
            out.append({"day": day, "calls": r["calls"] if r else 0, "tokens": r["tokens"] if r else 0,
                        "cost": round(r["cost"], 6) if r and r["cost"] is not None else None})
            t += 86400
        return out

    def exploration(self, month: str, members: dict[str, list]) -> dict:
        """What the month's explore seats cost and found: their answers judged useful (the latest verdicts), and
        the explorers that are now members of a collection they explored (`members`: each collection's now)."""
        self.db.sync()
        row = self.db.first(f"SELECT {SUMS} FROM usage_totals WHERE month = ? AND kind = 'explore'", (month,))
        explored = self.db.query("SELECT DISTINCT collection, model FROM usage_totals WHERE month = ? AND "
                                 "kind = 'explore' AND collection != '' AND calls > 0 ORDER BY collection, model",
                                 (month,))
        promoted = [{"collection": r["collection"], "model": r["model"]} for r in explored
                    if r["model"] in (members.get(r["collection"]) or ())]
        return {"month": month, **_sums(row), "judged": row["judged"] or 0, "useful": row["useful"] or 0,
                "promoted": promoted}

    def counts(self, month: str, day_start: float, minute_start: float) -> dict:
        """What the limits count, as the ledger holds it (read at start-up: counts survive a restart): per
        connection and per model, the month's requests, the day's requests and tokens, and the last minute's calls
        with their times and tokens."""
        out: dict = {"month": [], "day": [], "minute": []}
        out["month"] = self.db.query("SELECT endpoint, model, SUM(calls) AS requests FROM usage_totals "
                                     "WHERE month = ? GROUP BY endpoint, model", (month,))
        out["day"] = self.db.query("SELECT endpoint, model, COUNT(*) AS requests, "
                                   "COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens FROM usage "
                                   "WHERE created >= ? GROUP BY endpoint, model", (day_start,))
        out["minute"] = self.db.query("SELECT endpoint, model, created, input_tokens + output_tokens AS tokens "
                                      "FROM usage WHERE created >= ? ORDER BY created", (minute_start,))
        return out
