"""A panel's points as stored: the referee's points, their verdicts, and the claims each verdict gave the seats that
took a side, kept in the standings in the verdict's own transaction."""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from ..redaction import model_names
from . import standings, windows
from .bestpicks import judged_blind

if TYPE_CHECKING:   # db.py reads this module's SCHEMA through its migrations
    from .db import Database, Written

SCHEMA = """
    CREATE TABLE points (
        id TEXT PRIMARY KEY, panel TEXT NOT NULL, n INTEGER NOT NULL, claim TEXT NOT NULL, asserts TEXT NOT NULL,
        denies TEXT NOT NULL, silent TEXT NOT NULL, quotes TEXT NOT NULL, shown INTEGER NOT NULL DEFAULT 1,
        created REAL NOT NULL);
    CREATE INDEX points_panel ON points (panel, n);
    CREATE TABLE point_verdicts (
        id INTEGER PRIMARY KEY, point TEXT NOT NULL REFERENCES points(id), verdict INTEGER, note TEXT,
        created REAL NOT NULL, current INTEGER NOT NULL DEFAULT 1);
    CREATE INDEX point_verdicts_point ON point_verdicts (point, current);
    CREATE TABLE point_claims (
        id INTEGER PRIMARY KEY, point TEXT NOT NULL, call TEXT NOT NULL, seat INTEGER NOT NULL, real INTEGER NOT NULL,
        stance TEXT NOT NULL, claim TEXT NOT NULL, quote TEXT, created REAL NOT NULL);
    CREATE INDEX point_claims_point ON point_claims (point);
    CREATE INDEX point_claims_call ON point_claims (call);
    ALTER TABLE standings ADD COLUMN point_real INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE standings ADD COLUMN point_false INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE panels ADD COLUMN points TEXT;
    ALTER TABLE verdicts ADD COLUMN from_points INTEGER
"""
POINT_COLS = "id, panel, n, claim, asserts, denies, silent, quotes, shown, created"
# The seats whose answers count in the standings (a point's claims go to their model's standing).
SEAT_CALLS = ("SELECT id, seat, model, collection, kind, created FROM calls WHERE panel = ? AND seat IS NOT NULL "
              "AND seat > 0")


POINTS_HEAD = f"INSERT INTO points ({POINT_COLS})"


def _set_info(conn, items: list) -> None:
    """What each panel's referee call gave ((info, panel) items), in the panels' rows: a Database.insert keeper."""
    conn.executemany("UPDATE panels SET points = ? WHERE id = ?", items)


def point_dict(row, verdict: dict | None = None) -> dict:
    """A stored point as the API gives it: the `bench.points` shape, with its panel, whether the reply showed it, and
    its current verdict (None: not judged)."""
    return {"id": row["id"], "panel": row["panel"], "claim": row["claim"], "assert": json.loads(row["asserts"]),
            "deny": json.loads(row["denies"]), "silent": json.loads(row["silent"]),
            "quotes": json.loads(row["quotes"]), "shown": bool(row["shown"]), "verdict": verdict}


def verdict_dict(row) -> dict:
    value = row["verdict"]
    return {"true": None if value is None else bool(value), "note": row["note"], "created": row["created"]}


def names_of(rows) -> set[str]:
    """The names the models of these calls' rows ({model, served}) go by: alias, served name and its last part."""
    return model_names((r["model"], r["served"]) for r in rows)


class PointStore:
    def __init__(self, db: "Database"):
        self.db = db

    # ---- writing -----------------------------------------------------------------------------
    def save(self, panel: str, info: dict, points: list[dict]) -> "Written":
        """Queue a panel's points (each the `bench.points` shape plus `shown`) and what the referee call gave
        (`info`: mode, referee, call, counts, why unavailable) in the panel's row; committed with its call records.
        Rows, not a function of its own: a batch's rows then go in together, its call records' and other panels'
        alike (a function between them would cut them in two runs of statements)."""
        now = time.time()
        rows = [(POINTS_HEAD, (p["id"], panel, n, p["claim"], json.dumps(p["assert"]), json.dumps(p["deny"]),
                               json.dumps(p["silent"]), json.dumps(p["quotes"]), int(p.get("shown", True)), now))
                for n, p in enumerate(points, 1)]
        return self.db.insert(*rows, keep=((_set_info, (json.dumps(info), panel)),))

    def judge(self, point: str, verdict: bool | None, note: str | None, claims: list[dict]) -> dict:
        """A point's verdict (True, False, or None for "can't tell"), the claims it gives (each seat, real, stance,
        claim, quote) in place of those of its verdict before, and the standings changed by both: one transaction."""
        created = time.time()

        def write(conn):
            conn.execute("UPDATE point_verdicts SET current = 0 WHERE point = ? AND current = 1", (point,))
            panel = conn.execute("SELECT panel FROM points WHERE id = ?", (point,)).fetchone()
            blind = judged_blind(conn, panel[0]) if panel else 0    # given before names were shown
            vid = conn.execute("INSERT INTO point_verdicts (point, verdict, note, created, current, blind) "
                               "VALUES (?, ?, ?, ?, 1, ?)", (point, None if verdict is None else int(verdict), note,
                                                            created, blind or None)).lastrowid
            return vid, self._replace_claims(conn, point, claims, created)
        vid, written = self.db.call(write)
        return {"id": vid, "point": point, "true": verdict, "note": note, "created": created, "claims": written}

    def withdraw(self, point: str) -> bool:
        """The point's verdict withdrawn, and every claim it gave taken back from the standings. False: it had none."""
        def write(conn):
            had = conn.execute("UPDATE point_verdicts SET current = 0 WHERE point = ? AND current = 1",
                               (point,)).rowcount
            self._replace_claims(conn, point, [], time.time())
            return bool(had)
        return self.db.call(write)

    @staticmethod
    def _replace_claims(conn, point: str, claims: list[dict], created: float) -> list[dict]:
        """The point's claims replaced by `claims`, the standings changed by the difference. The standings change
        before the new rows go in: a judged window refilled from the history must not find them there too."""
        panel = conn.execute("SELECT panel FROM points WHERE id = ?", (point,)).fetchone()
        calls = {r["seat"]: r for r in conn.execute(SEAT_CALLS, (panel[0],))} if panel else {}
        old = conn.execute("SELECT c.model, c.collection, c.kind, c.created, pc.real FROM point_claims pc JOIN calls c "
                           "ON c.id = pc.call WHERE pc.point = ?", (point,)).fetchall()
        conn.execute("DELETE FROM point_claims WHERE point = ?", (point,))
        changes = [change for row in old for change in _change(row, row["real"], -1)]
        rows, out = [], []
        for c in claims:
            call = calls.get(c["seat"])
            if call is None:   # a seat whose call is not in the record: nothing to give the claim to
                continue
            rows.append((point, call["id"], c["seat"], int(c["real"]), c["stance"], c["claim"], c.get("quote"),
                         created))
            changes += _change(call, c["real"], 1)
            out.append({**c, "call": call["id"], "model": call["model"]})
        standings.claimed(conn, changes)
        conn.executemany("INSERT INTO point_claims (point, call, seat, real, stance, claim, quote, created) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return out

    # ---- reading -----------------------------------------------------------------------------
    def for_panel(self, panel: str) -> dict | None:
        """{"info": what the referee call gave, "created": the panel's moment, "points": [...]} of a panel, each point
        with its verdict; None: no such panel. `info` None: no referee was asked; `info.pending`: it is reading."""
        self.db.sync()
        row = self.db.one("SELECT points, created FROM panels WHERE id = ?", (panel,))
        if row is None:
            return None
        rows = self.db.query(f"SELECT {POINT_COLS} FROM points WHERE panel = ? ORDER BY n", (panel,))
        current = self.verdicts([r["id"] for r in rows])
        return {"info": json.loads(row["points"]) if row["points"] else None, "created": row["created"],
                "points": [point_dict(r, current.get(r["id"])) for r in rows]}

    def get(self, point: str) -> dict | None:
        row = self.db.one(f"SELECT {POINT_COLS} FROM points WHERE id = ?", (point,))
        if row is None:
            self.db.sync()
            row = self.db.one(f"SELECT {POINT_COLS} FROM points WHERE id = ?", (point,))
        return point_dict(row, self.verdicts([point]).get(point)) if row else None

    def panel_of(self, panel: str) -> dict | None:
        """The panel's collection and mode, for who may see its points, and `hidden`: blind and not judged yet, so
        nothing it shows names a model (None: no such panel)."""
        row = self.db.one("SELECT collection, mode, blind, revealed FROM panels WHERE id = ?", (panel,))
        return {"collection": row["collection"], "mode": row["mode"],
                "hidden": bool(row["blind"]) and row["revealed"] is None} if row else None

    def seat_names(self, panel: str) -> set[str]:
        """The names a panel's seats' models go by (alias and served name): what a blind panel hides."""
        return names_of(self.db.query("SELECT model, served FROM calls WHERE panel = ? AND seat > 0", (panel,)))

    def seats(self, panel: str) -> dict[int, dict]:
        """seat number -> {call, model} of a panel's seats."""
        return {r["seat"]: {"call": r["id"], "model": r["model"]} for r in self.db.query(SEAT_CALLS, (panel,))}

    def verdicts(self, points: list[str]) -> dict[str, dict]:
        """point id -> its current verdict, for those judged."""
        out = {}
        for start in range(0, len(points), 500):
            chunk = points[start:start + 500]
            for r in self.db.query("SELECT point, verdict, note, created FROM point_verdicts WHERE current = 1 AND "
                                   f"point IN ({', '.join('?' * len(chunk))})", tuple(chunk)):
                out[r["point"]] = verdict_dict(r)
        return out

    def claims_of(self, calls: list[str]) -> dict[str, list[dict]]:
        """call id -> the claims judged points gave it (point, real, stance, claim, quote)."""
        out: dict = {}
        for start in range(0, len(calls), 500):
            chunk = calls[start:start + 500]
            for r in self.db.query("SELECT call, point, real, stance, claim, quote FROM point_claims WHERE call IN "
                                   f"({', '.join('?' * len(chunk))}) ORDER BY id", tuple(chunk)):
                out.setdefault(r["call"], []).append({"point": r["point"], "real": bool(r["real"]),
                                                      "stance": r["stance"], "claim": r["claim"], "quote": r["quote"]})
        return out

    def unjudged(self, panels_sql: str, params: tuple, limit: int = 50) -> tuple[list[dict], int]:
        """(the newest `limit` shown points with no verdict of the panels `panels_sql` selects, newest panel first
        and most contested first within one; how many there are in all). The panels' query bounds the read (the
        calls looked through), so this costs the same at any size of the record."""
        where = (f"pt.panel IN ({panels_sql}) AND pt.shown = 1 "
                 "AND NOT EXISTS (SELECT 1 FROM point_verdicts v WHERE v.point = pt.id AND v.current = 1)")
        total = self.db.first(f"SELECT COUNT(*) AS n FROM points pt WHERE {where}", params)["n"]
        rows = self.db.query(f"SELECT {POINT_COLS} FROM points pt WHERE {where} ORDER BY pt.created DESC, pt.panel, "
                             "pt.n LIMIT ?", (*params, limit)) if total else []
        return [point_dict(r) for r in rows], total


def _change(call, real, sign: int) -> list:
    """A claim of `call`'s seat as the standings take it, [(key, created, real, sign)], when its kind counts."""
    if call["kind"] not in standings.KINDS:
        return []
    return [((call["model"], call["collection"] or standings.NONE), call["created"], bool(real), sign)]


def rebuild(conn) -> None:
    """The point claims' counts in the standings made again, after the standings were made from the calls and
    verdicts (`bench store rebuild`); rebuild_windows then makes their judged windows."""
    if not _any_claims(conn):
        return
    counts: dict = {}
    for row in conn.execute("SELECT c.model, c.collection, c.kind, pc.real FROM point_claims pc JOIN calls c "
                            "ON c.id = pc.call"):
        for key, _, real, sign in _change(dict(row, created=0.0), row["real"], 1):
            c = counts.setdefault(key, [0, 0])
            c[0 if real else 1] += sign
    conn.executemany(standings.UPSERT_CLAIMS, [(*key, r, f, r, f) for key, (r, f) in counts.items()])


def rebuild_windows(conn) -> None:
    """The judged windows made again from answers and point claims together, each claim's entry told from an
    answer's; with no point claim, the windows made from the answers alone stand."""
    if _any_claims(conn):
        standings.rebuild_judged_with_claims(conn)


def _any_claims(conn) -> bool:
    return windows.has_point_claims(conn) and \
        conn.execute("SELECT 1 FROM point_claims LIMIT 1").fetchone() is not None
