"""Suite records in bench.db: runs (queued, owed, running, done ...) and one result per item, latest counting."""
from __future__ import annotations

import json
import time

from .score import FAILED, tally

QUEUED, OWED, RUNNING, DONE = "queued", "owed", "running", "done"
FAILED_RUN, INTERRUPTED, CANCELLED = "failed", "interrupted", "cancelled"
OPEN = (QUEUED, OWED, RUNNING, INTERRUPTED)          # runs with work left
RUN_COLUMNS = ("id", "model", "tasks", "status", "reason", "total", "done", "failed", "error", "created", "started",
               "finished", "lease_until")
RESULT_COLUMNS = ("run", "model", "task", "variant", "purpose", "task_hash", "outcome", "correct", "confidence",
                  "parse", "flagged", "call", "answer", "error", "seconds", "created")
ANSWER_KEEP = 8000


def run_view(row) -> dict:
    """A run as the API shows it; a 'running' run whose lease ran out was cut off by a stopped service."""
    d = {k: row[k] for k in RUN_COLUMNS}
    if d["status"] == RUNNING and (d["lease_until"] or 0) < time.time():
        d["status"] = INTERRUPTED
    d.pop("lease_until")
    d["progress"] = round(d["done"] / d["total"], 3) if d["total"] else None
    return d


class Results:
    def __init__(self, db):
        self.db = db

    # -- runs ----------------------------------------------------------------------------------------
    def create(self, model: str, tasks: str | None, status: str, reason: str) -> dict:
        rid = self.db.call(lambda c: c.execute(
            "INSERT INTO suite_runs (model, tasks, status, reason, created) VALUES (?, ?, ?, ?, ?)",
            (model, tasks, status, reason, time.time())).lastrowid)
        return self.known(rid)

    def run(self, rid: int) -> dict | None:
        self.db.sync()
        row = self.db.one("SELECT * FROM suite_runs WHERE id = ?", (rid,))
        return run_view(row) if row else None

    def known(self, rid: int) -> dict:
        """A run this process has in hand (just made, or read and updated): its row, there by then."""
        run = self.run(rid)
        assert run is not None, f"suite run {rid} is gone"
        return run

    def runs(self, model: str | None = None, status: str | None = None, limit: int = 50) -> list[dict]:
        self.db.sync()
        where, params = [], []
        if model:
            where.append("model = ?")
            params.append(model)
        sql = "SELECT * FROM suite_runs" + (" WHERE " + " AND ".join(where) if where else "")
        rows = [run_view(r) for r in self.db.query(sql + " ORDER BY id DESC", tuple(params))]
        return [r for r in rows if not status or r["status"] == status][:limit]

    def open_runs(self, model: str | None = None) -> list[dict]:
        """Runs with work left, oldest first."""
        return [r for r in reversed(self.runs(model, limit=10 ** 6)) if r["status"] in OPEN]

    def update(self, rid: int, **fields) -> None:
        cols = ", ".join(f"{k} = ?" for k in fields)
        self.db.call(lambda c: c.execute(f"UPDATE suite_runs SET {cols} WHERE id = ?", (*fields.values(), rid)))

    # -- results -------------------------------------------------------------------------------------
    def add(self, **r) -> None:
        r["flagged"] = json.dumps(r.get("flagged") or [])
        r["answer"] = (r.get("answer") or "")[:ANSWER_KEEP] or None
        r.setdefault("created", time.time())
        values = [r.get(k) for k in RESULT_COLUMNS]
        self.db.call(lambda c: c.execute(
            f"INSERT OR REPLACE INTO suite_results ({', '.join(RESULT_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(RESULT_COLUMNS))})", values))

    def done_items(self, rid: int) -> set:
        """(task, variant) already answered in this run; failed calls are tried again on resume."""
        return {(r["task"], r["variant"]) for r in self.db.query(
            "SELECT task, variant FROM suite_results WHERE run = ? AND outcome != ?", (rid, FAILED))}

    def items(self, rid: int) -> list[dict]:
        self.db.sync()
        return [result_view(r) for r in self.db.query("SELECT * FROM suite_results WHERE run = ? ORDER BY id", (rid,))]

    def latest(self, model: str | None = None) -> list[dict]:
        """The latest scored result of each model on each item (a later run replaces an earlier answer)."""
        self.db.sync()
        where, params = ("AND r.model = ?", (model,)) if model else ("", ())
        rows = self.db.query(
            "SELECT r.* FROM suite_results r JOIN (SELECT model, task, variant, MAX(id) AS id FROM suite_results "
            f"WHERE outcome != ? GROUP BY model, task, variant) m ON m.id = r.id WHERE 1 = 1 {where}",
            (FAILED, *params))
        return [result_view(r) for r in rows]

    def scores(self, model: str | None = None) -> dict:
        """{model: tally} from each model's latest results."""
        rows = self.latest(model)
        out = tally(rows)
        for r in rows:
            out[r["model"]]["updated"] = max(out[r["model"]].get("updated") or 0, r["created"])
        return out


def result_view(row) -> dict:
    d = {k: row[k] for k in ("id", *RESULT_COLUMNS)}
    d["flagged"] = json.loads(d["flagged"] or "[]")
    d["correct"] = None if d["correct"] is None else bool(d["correct"])
    return d
