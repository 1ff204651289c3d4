"""Calls per day (local time): counts by status, median seconds, verdicts, and the useful rate as it built up."""
from __future__ import annotations

import datetime as dt
import statistics
import time

from ..store import Database
from .record import KINDS, wilson

STATUSES = ("ok", "failed", "timeout", "skipped")


def day_of(epoch: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(epoch))


def days_back(days: int, today: dt.date | None = None) -> list[str]:
    today = today or dt.date.today()
    return [(today - dt.timedelta(days=n)).isoformat() for n in range(days - 1, -1, -1)]


def daily(db: Database, days: int, model: str | None = None, collection: str | None = None) -> list[dict]:
    """One row per day for the last `days` days, today last; a model's rows leave out merge calls."""
    db.sync()
    labels = days_back(days)
    start = time.mktime(dt.date.fromisoformat(labels[0]).timetuple())
    where, params = ["c.created >= ?"], [start]
    if model:
        where.append(f"c.model = ? AND c.kind IN {KINDS}")
        params.append(model)
    if collection:
        where.append("c.collection = ?")
        params.append(collection)
    rows = db.query("SELECT c.created, c.status, c.seconds, v.useful FROM calls c LEFT JOIN verdicts v "
                    f"ON v.call = c.id AND v.current = 1 WHERE {' AND '.join(where)}", tuple(params))
    buckets = {d: {"by_status": dict.fromkeys(STATUSES, 0), "seconds": [], "judged": 0, "useful": 0} for d in labels}
    for r in rows:
        b = buckets.get(day_of(r["created"]))
        if b is None:
            continue
        b["by_status"][r["status"]] = b["by_status"].get(r["status"], 0) + 1
        if r["status"] == "ok" and r["seconds"] is not None:
            b["seconds"].append(r["seconds"])
        if r["useful"] is not None:
            b["judged"] += 1
            b["useful"] += int(r["useful"])
    totals = {"judged": 0, "useful": 0}
    return [row(day, buckets[day], totals) for day in labels]


def row(day: str, b: dict, totals: dict) -> dict:
    """One day's figures; `totals` carries the verdicts of every day so far (the rate as it built up)."""
    totals["judged"] += b["judged"]
    totals["useful"] += b["useful"]
    judged, useful = totals["judged"], totals["useful"]
    return {"day": day, "calls": sum(b["by_status"].values()), "by_status": b["by_status"],
            "median_seconds": round(statistics.median(b["seconds"]), 3) if b["seconds"] else None,
            "judged": b["judged"], "useful": b["useful"],
            "useful_rate": round(b["useful"] / b["judged"], 3) if b["judged"] else None,
            "cumulative": {"judged": judged, "useful": useful,
                           "rate": round(useful / judged, 3) if judged else None,
                           "interval": [round(x, 3) for x in wilson(useful, judged)] if judged else None}}
