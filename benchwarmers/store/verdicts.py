"""Verdicts on calls: the latest one counts, earlier ones are kept as history."""
from __future__ import annotations

import json
import time

from . import blindkept, judgestore, ledgerkept, standings
from .bestpicks import judged_blind
from .db import Database


def as_dict(useful, note, real, false, created, from_points=None) -> dict:
    return {"useful": bool(useful), "note": note, "real": json.loads(real or "[]"), "false": json.loads(false or "[]"),
            "created": created, "from_points": bool(from_points)}


class Verdicts:
    def __init__(self, db: Database):
        self.db = db

    def add(self, call: str, useful: bool, note: str | None, real: list, false: list,
            from_points: bool = False) -> dict:
        """`from_points`: the verdict is what the seat's judged points proposed, confirmed (the record says so)."""
        created = time.time()

        def write(conn):   # the verdict and what the record keeps of it, in one transaction
            old = standings.current_verdict(conn, call)
            was = conn.execute("SELECT useful, blind FROM verdicts WHERE call = ? AND current = 1", (call,)).fetchone()
            conn.execute("UPDATE verdicts SET current = 0 WHERE call = ? AND current = 1", (call,))
            panel = conn.execute("SELECT panel FROM calls WHERE id = ?", (call,)).fetchone()
            blind = judged_blind(conn, panel[0]) if panel and panel[0] else 0   # given before names were shown
            cur = conn.execute("INSERT INTO verdicts (call, useful, note, real, false, created, current, from_points, "
                               "blind) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)",
                               (call, int(useful), note, json.dumps(real), json.dumps(false), created,
                                int(from_points) or None, blind or None))
            row = standings.call_row(conn, call)
            standings.judged(conn, call, row, old, (int(useful), len(real), len(false)))
            blindkept.judged(conn, row, tuple(was) if was else None, (int(useful), blind))
            ledgerkept.judged(conn, call, row["kind"] if row else None, old[0] if old else None, int(useful))
            judgestore.user_judged(conn, call, old[0] if old else None, int(useful))
            return cur.lastrowid
        vid = self.db.call(write)
        return {"id": vid, "call": call, "useful": useful, "note": note, "real": real, "false": false,
                "created": created, "from_points": from_points}

    def history(self, call: str) -> list[dict]:
        rows = self.db.query("SELECT * FROM verdicts WHERE call = ? ORDER BY id", (call,))
        return [{"id": r["id"], "useful": bool(r["useful"]), "note": r["note"], "real": json.loads(r["real"] or "[]"),
                 "false": json.loads(r["false"] or "[]"), "created": r["created"], "current": bool(r["current"]),
                 "from_points": bool(r["from_points"])}
                for r in rows]

    def current(self, calls: list[str]) -> dict[str, dict]:
        """call id -> its current verdict (useful, note, real, false, created), for the calls that have one."""
        out = {}
        for start in range(0, len(calls), 500):
            chunk = calls[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            for r in self.db.query(f"SELECT * FROM verdicts WHERE current = 1 AND call IN ({marks})", tuple(chunk)):
                out[r["call"]] = as_dict(r["useful"], r["note"], r["real"], r["false"], r["created"],
                                         r["from_points"])
        return out
