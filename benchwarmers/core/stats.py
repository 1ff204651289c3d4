"""Calls per day (local time): counts by status, mean seconds, verdicts, and the useful rate as it built up; read
from the calls per day the store keeps (store/standings.py)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from ..store import Database
from .rankings import wilson

STATUSES = ("ok", "failed", "timeout", "skipped")


def days_back(days: int, today: dt.date | None = None) -> list[str]:
    today = today or dt.date.today()
    return [(today - dt.timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]


def daily(db: Database, days: int, model: str | None = None, collection: str | None = None) -> list[dict]:
    """One row per day for the last `days` days, today last; a model's rows leave out merge calls."""
    labels = days_back(days)
    where, params = ["day >= ?"], [labels[0]]
    if model:
        where.append("model = ? AND counted = 1")
        params.append(model)
    if collection:
        where.append("scope = ?")
        params.append(collection)
    rows = db.query("SELECT day, status, SUM(calls) AS calls, SUM(seconds_sum) AS seconds_sum, "
                    "SUM(seconds_n) AS seconds_n, SUM(judged) AS judged, SUM(useful) AS useful FROM days "
                    f"WHERE {' AND '.join(where)} GROUP BY day, status", tuple(params))
    buckets: dict[str, dict[str, Any]] = {
        d: {"by_status": dict.fromkeys(STATUSES, 0), "seconds": 0.0, "timed": 0, "judged": 0, "useful": 0}
        for d in labels}
    for r in rows:
        b = buckets.get(r["day"])
        if b is None or not r["calls"]:
            continue
        b["by_status"][r["status"]] = b["by_status"].get(r["status"], 0) + r["calls"]
        b["seconds"] += r["seconds_sum"]
        b["timed"] += r["seconds_n"]
        b["judged"] += r["judged"]
        b["useful"] += r["useful"]
    totals = {"judged": 0, "useful": 0}
    return [row(day, buckets[day], totals) for day in labels]


def row(day: str, b: dict, totals: dict) -> dict:
    """One day's figures; `totals` carries the verdicts of every day so far (the rate as it built up)."""
    totals["judged"] += b["judged"]
    totals["useful"] += b["useful"]
    judged, useful = totals["judged"], totals["useful"]
    return {"day": day, "calls": sum(b["by_status"].values()), "by_status": b["by_status"],
            "mean_seconds": round(b["seconds"] / b["timed"], 3) if b["timed"] else None,
            "judged": b["judged"], "useful": b["useful"],
            "useful_rate": round(b["useful"] / b["judged"], 3) if b["judged"] else None,
            "cumulative": {"judged": judged, "useful": useful,
                           "rate": round(useful / judged, 3) if judged else None,
                           "interval": [round(x, 3) for x in wilson(useful, judged)] if judged else None}}
