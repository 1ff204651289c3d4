"""A panel's best answer as stored: the pick (a seat, or none when every answer was bad), and the comparisons it
gives (the chosen seat beat each other seat that answered), counted per pair, collection, answer-length band and
blindness as the pick is written, so ratings read a few rows a pair and never the picks' history."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .windows import NONE

if TYPE_CHECKING:   # db.py reads this module's SCHEMA through its migrations
    from .db import Database

# `blind` on a panel: its seats were shown as Seat 1..N with no model named; `revealed`: when its first judgement
# showed who sat where. A verdict, a point's verdict and a pick say whether they were given blind.
SCHEMA = """
    CREATE TABLE best_picks (
        id INTEGER PRIMARY KEY, panel TEXT NOT NULL, seat INTEGER, blind INTEGER NOT NULL DEFAULT 0,
        created REAL NOT NULL, current INTEGER NOT NULL DEFAULT 1);
    CREATE INDEX best_picks_panel ON best_picks (panel, current);
    CREATE INDEX best_picks_created ON best_picks (created) WHERE current = 1 AND seat IS NOT NULL;
    CREATE TABLE comparisons (
        scope TEXT NOT NULL, winner TEXT NOT NULL, loser TEXT NOT NULL, band INTEGER NOT NULL,
        blind INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (scope, winner, loser, band, blind)) WITHOUT ROWID;
    ALTER TABLE panels ADD COLUMN blind INTEGER;
    ALTER TABLE panels ADD COLUMN revealed REAL;
    ALTER TABLE verdicts ADD COLUMN blind INTEGER;
    ALTER TABLE point_verdicts ADD COLUMN blind INTEGER
"""
BANDS = 4          # the length covariate: (winner's length - loser's) / their sum, kept as a band from -4 to 4
# The seats a pick compares: answers an asker reads (members, explorers, models added with `with`) that answered.
ANSWERED = ("SELECT id, seat, model, collection, length(answer) AS chars FROM calls WHERE panel = ? AND seat > 0 "
            "AND status = 'ok' AND kind IN ('member', 'explore', 'with')")
_UPSERT = ("INSERT INTO comparisons (scope, winner, loser, band, blind, n) VALUES (?, ?, ?, ?, ?, ?) "
           "ON CONFLICT (scope, winner, loser, band, blind) DO UPDATE SET n = n + excluded.n")


def band(winner_chars: int | None, loser_chars: int | None) -> int:
    """The length band of a comparison: 0 when either length is unknown (pruned text) or both are empty."""
    a, b = winner_chars or 0, loser_chars or 0
    if not (winner_chars and loser_chars) or a + b == 0:
        return 0
    return round(BANDS * (a - b) / (a + b))


def comparisons_of(seats: list, chosen: int | None) -> list[tuple]:
    """(winner model, loser model, band) for a pick: the chosen seat over each other seat that answered."""
    won = next((s for s in seats if s["seat"] == chosen), None)
    if won is None:
        return []
    return [(won["model"], s["model"], band(won["chars"], s["chars"])) for s in seats
            if s["seat"] != chosen and s["model"] != won["model"]]


def _count(conn, panel_row, seats: list, chosen: int | None, blind: int, sign: int) -> None:
    scope = panel_row["collection"] or NONE
    conn.executemany(_UPSERT, [(scope, w, lo, b, blind, sign) for w, lo, b in comparisons_of(seats, chosen)])


def judged_blind(conn, panel: str) -> int:
    """Whether a judgement of `panel` given now is given blind (1), and the panel revealed by it: in the judgement's
    own transaction."""
    row = conn.execute("SELECT blind, revealed FROM panels WHERE id = ?", (panel,)).fetchone()
    if row is None or not row["blind"] or row["revealed"] is not None:
        return 0
    conn.execute("UPDATE panels SET revealed = ? WHERE id = ?", (time.time(), panel))
    return 1


class BestPicks:
    def __init__(self, db: "Database"):
        self.db = db

    def pick(self, panel: str, seat: int | None) -> dict:
        """The panel's best answer (None: every answer was bad) in place of its pick before, the comparisons of both
        counted in one transaction. Gives the pick with the comparisons it made."""
        created = time.time()

        def write(conn):
            panel_row, seats = self._panel(conn, panel)
            self._undo(conn, panel, panel_row, seats)
            blind = judged_blind(conn, panel)
            pid = conn.execute("INSERT INTO best_picks (panel, seat, blind, created, current) VALUES (?, ?, ?, ?, 1)",
                               (panel, seat, blind, created)).lastrowid
            _count(conn, panel_row, seats, seat, blind, 1)
            return pid, blind, comparisons_of(seats, seat)
        pid, blind, made = self.db.call(write)
        return {"id": pid, "panel": panel, "seat": seat, "blind": bool(blind), "created": created,
                "comparisons": [{"winner": w, "loser": lo} for w, lo, _ in made]}

    def withdraw(self, panel: str) -> bool:
        """The panel's pick withdrawn and its comparisons taken back. False: it had none."""
        def write(conn):
            panel_row, seats = self._panel(conn, panel)
            return self._undo(conn, panel, panel_row, seats)
        return self.db.call(write)

    @staticmethod
    def _panel(conn, panel: str) -> tuple:
        return (conn.execute("SELECT collection FROM panels WHERE id = ?", (panel,)).fetchone(),
                [dict(r) for r in conn.execute(ANSWERED, (panel,))])

    @staticmethod
    def _undo(conn, panel: str, panel_row, seats: list) -> bool:
        old = conn.execute("SELECT seat, blind FROM best_picks WHERE panel = ? AND current = 1", (panel,)).fetchone()
        if old is None:
            return False
        conn.execute("UPDATE best_picks SET current = 0 WHERE panel = ? AND current = 1", (panel,))
        _count(conn, panel_row, seats, old["seat"], old["blind"], -1)
        return True

    # ---- reading -----------------------------------------------------------------------------
    def current(self, panel: str) -> dict | None:
        """The panel's current pick ({seat, blind, created}; seat None: all bad), or None: no pick."""
        row = self.db.one("SELECT seat, blind, created FROM best_picks WHERE panel = ? AND current = 1", (panel,))
        return {"seat": row["seat"], "blind": bool(row["blind"]), "created": row["created"]} if row else None

    def state(self, panel: str) -> dict | None:
        """{blind, revealed} of a panel (revealed: when its first judgement showed who sat where), None: no panel."""
        row = self.db.one("SELECT blind, revealed FROM panels WHERE id = ?", (panel,))
        return {"blind": bool(row["blind"]), "revealed": row["revealed"]} if row else None

    def seated(self, panel: str) -> list[dict]:
        """{seat, call, model} of every seat of the panel, answered or not."""
        return [{"seat": r["seat"], "call": r["id"], "model": r["model"]} for r in self.db.query(
            "SELECT id, seat, model FROM calls WHERE panel = ? AND seat > 0 ORDER BY seat", (panel,))]

    def seats(self, panel: str) -> list[dict]:
        """The seats a pick of the panel compares: {seat, call, model} of each that answered."""
        return [{"seat": r["seat"], "call": r["id"], "model": r["model"]} for r in self.db.query(ANSWERED, (panel,))]

    def counts(self, scopes: tuple | None, blind_only: bool = False) -> list:
        """The comparison counts (winner, loser, band, n) of these scopes (None: every one), summed over them."""
        where: list[str] = []
        params: list = []
        if scopes is not None:
            where.append(f"scope IN ({', '.join('?' * len(scopes))})")
            params.extend(scopes)
        if blind_only:
            where.append("blind = 1")
        sql = ("SELECT winner, loser, band, SUM(n) AS n FROM comparisons" + (" WHERE " + " AND ".join(where)
               if where else "") + " GROUP BY winner, loser, band HAVING SUM(n) > 0")
        return [(r["winner"], r["loser"], r["band"], r["n"]) for r in self.db.query(sql, tuple(params))]


def rebuild(conn) -> None:
    """The comparison counts made again from the current picks (`bench store rebuild`)."""
    conn.execute("DELETE FROM comparisons")
    for pick in conn.execute("SELECT p.panel, p.seat, p.blind, n.collection FROM best_picks p JOIN panels n "
                             "ON n.id = p.panel WHERE p.current = 1 AND p.seat IS NOT NULL").fetchall():
        seats = [dict(r) for r in conn.execute(ANSWERED, (pick["panel"],))]
        _count(conn, pick, seats, pick["seat"], pick["blind"], 1)
