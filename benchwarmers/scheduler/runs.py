"""Job runs in the `jobs` table, each claimed under a lease so two services on one folder never run a job twice."""
from __future__ import annotations

import json

LEASE_SECONDS = 30 * 60.0     # renewed on every paced call; a runner that died lets go after this long
INTERRUPTED = "the service running it stopped before it finished"


def claim(db, name: str, holder: str, now: float, due: float | None = None, trigger: str = "now",
          skip: str | None = None) -> tuple[int | None, int | None]:
    """(the new run's id, None), or (None, the id of the run holding the lease), or (None, None) when the window
    `due` already has its run. With `skip`, the window is recorded as skipped (that reason) instead of run."""
    def work(conn):
        lease = conn.execute("SELECT run, until FROM leases WHERE name = ?", (name,)).fetchone()
        if lease and lease["until"] > now and not skip:
            return None, lease["run"]
        if lease and lease["until"] <= now:
            conn.execute("UPDATE jobs SET status = 'interrupted', finished = ?, outcome = ? "
                         "WHERE id = ? AND status = 'running'", (now, INTERRUPTED, lease["run"]))
            conn.execute("DELETE FROM leases WHERE name = ?", (name,))
        if due is not None and conn.execute("SELECT 1 FROM jobs WHERE name = ? AND due >= ?", (name, due)).fetchone():
            return None, None
        if skip:
            conn.execute("INSERT INTO jobs (name, started, finished, status, trigger, due, holder, models, calls, "
                         "outcome) VALUES (?, ?, ?, 'skipped', ?, ?, ?, 0, 0, ?)",
                         (name, now, now, trigger, due, holder, skip))
            return None, None
        run = conn.execute("INSERT INTO jobs (name, started, status, trigger, due, holder, models, calls) "
                           "VALUES (?, ?, 'running', ?, ?, ?, 0, 0)", (name, now, trigger, due, holder)).lastrowid
        conn.execute("INSERT INTO leases (name, holder, run, until) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO UPDATE "
                     "SET holder = excluded.holder, run = excluded.run, until = excluded.until",
                     (name, holder, run, now + LEASE_SECONDS))
        return run, None
    return db.call(work)


def beat(db, name: str, run: int, now: float, models: int, calls: int) -> None:
    """The run is alive: its lease is renewed and its counts so far are kept."""
    db.submit(lambda c: (c.execute("UPDATE leases SET until = ? WHERE name = ? AND run = ?",
                                   (now + LEASE_SECONDS, name, run)),
                         c.execute("UPDATE jobs SET models = ?, calls = ? WHERE id = ?", (models, calls, run))))


def finish(db, name: str, run: int, now: float, status: str, models: int, calls: int, outcome: str,
           detail: dict) -> None:
    def work(conn):
        conn.execute("UPDATE jobs SET finished = ?, status = ?, models = ?, calls = ?, outcome = ?, detail = ? "
                     "WHERE id = ?", (now, status, models, calls, outcome, json.dumps(detail), run))
        conn.execute("DELETE FROM leases WHERE name = ? AND run = ?", (name, run))
    db.call(work)


def view(row) -> dict:
    keys = row.keys()
    detail = row["detail"]
    try:
        detail = json.loads(detail) if detail else None
    except ValueError:
        detail = None
    return {"id": row["id"], "name": row["name"], "trigger": row["trigger"] if "trigger" in keys else None,
            "status": row["status"], "started": row["started"], "finished": row["finished"],
            "due": row["due"], "models": row["models"], "calls": row["calls"], "outcome": row["outcome"],
            "detail": detail}


def recent(db, limit: int = 20, name: str | None = None) -> list[dict]:
    db.sync()
    where, params = ("WHERE name = ?", (name,)) if name else ("", ())
    return [view(r) for r in db.query(f"SELECT * FROM jobs {where} ORDER BY started DESC, id DESC LIMIT ?",
                                      (*params, limit))]


def get(db, run: int) -> dict | None:
    db.sync()
    row = db.one("SELECT * FROM jobs WHERE id = ?", (run,))
    return view(row) if row else None


def last_due(db, name: str) -> float | None:
    row = db.one("SELECT MAX(due) AS due FROM jobs WHERE name = ?", (name,))
    return row["due"] if row else None


# ---- when each job's schedule began (it counts no window from before it was switched on) ---------

def since(db, name: str) -> float | None:
    row = db.one("SELECT since FROM schedule WHERE job = ?", (name,))
    return row["since"] if row else None


def start_counting(db, name: str, now: float) -> None:
    db.call(lambda c: c.execute("INSERT OR IGNORE INTO schedule (job, since) VALUES (?, ?)", (name, now)))


def stop_counting(db, name: str) -> None:
    db.call(lambda c: c.execute("DELETE FROM schedule WHERE job = ?", (name,)))
