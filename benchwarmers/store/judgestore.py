"""A judge model's verdicts on route turns' answers (the served one and its shadows), kept apart from the user's: the
verdicts, what the judge cost per collection and month, and how often it agreed with the user on the same answers,
each kept as it is written (never counted from the history on a read)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import standings

if TYPE_CHECKING:   # the store's Database imports the migrations, which import this
    from .db import Database

SCHEMA = """
    CREATE TABLE judge_verdicts (
        call TEXT PRIMARY KEY, turn TEXT NOT NULL, collection TEXT NOT NULL, judge TEXT NOT NULL, judge_call TEXT,
        useful INTEGER NOT NULL, created REAL NOT NULL);
    CREATE INDEX judge_verdicts_turn ON judge_verdicts (turn);
    CREATE TABLE judge_spend (
        month TEXT NOT NULL, collection TEXT NOT NULL, usd REAL NOT NULL DEFAULT 0, calls INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (month, collection));
    CREATE TABLE judge_agreement (
        collection TEXT NOT NULL, judge TEXT NOT NULL, compared INTEGER NOT NULL DEFAULT 0,
        agreed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (collection, judge))
"""
_AGREE = ("INSERT INTO judge_agreement (collection, judge, compared, agreed) VALUES (?, ?, ?, ?) ON CONFLICT "
          "(collection, judge) DO UPDATE SET compared = compared + excluded.compared, "
          "agreed = agreed + excluded.agreed")
_STANDING = ("INSERT INTO standings (model, scope, judge_useful, judge_not_useful) VALUES (?, ?, ?, ?) ON CONFLICT "
             "(model, scope) DO UPDATE SET judge_useful = judge_useful + excluded.judge_useful, "
             "judge_not_useful = judge_not_useful + excluded.judge_not_useful")


class JudgeStore:
    def __init__(self, db: Database):
        self.db = db

    def add(self, turn: str, collection: str, judge: str, judge_call: str | None, verdicts: list, spend: tuple,
            created: float) -> None:
        """A judge's verdicts on a turn's answers, `verdicts` each (call, model, useful), and what it cost: `spend`
        (month, USD or None when unpriced). One transaction: the verdicts, the models' judge counts, the agreement
        with any user verdict on the same call, the month's spending."""
        def write(conn):
            for call, model, useful in verdicts:
                cur = conn.execute("INSERT INTO judge_verdicts (call, turn, collection, judge, judge_call, useful, "
                                   "created) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (call) DO NOTHING",
                                   (call, turn, collection, judge, judge_call, int(useful), created))
                if not cur.rowcount:
                    continue
                conn.execute(_STANDING, (model, collection, int(useful), int(not useful)))
                user = conn.execute("SELECT useful FROM verdicts WHERE call = ? AND current = 1", (call,)).fetchone()
                if user is not None:
                    conn.execute(_AGREE, (collection, judge, 1, int(int(user[0]) == int(useful))))
            month, usd = spend
            conn.execute("INSERT INTO judge_spend (month, collection, usd, calls) VALUES (?, ?, ?, 1) ON CONFLICT "
                         "(month, collection) DO UPDATE SET usd = usd + excluded.usd, calls = calls + 1",
                         (month, collection, usd or 0.0))
        self.db.call(write)

    def spent(self, month: str, collection: str) -> tuple[float, int]:
        """(USD, judge calls) of a collection's judge in a month."""
        row = self.db.one("SELECT usd, calls FROM judge_spend WHERE month = ? AND collection = ?", (month, collection))
        return (row["usd"], row["calls"]) if row else (0.0, 0)

    def of_call(self, call: str) -> dict | None:
        r = self.db.one("SELECT * FROM judge_verdicts WHERE call = ?", (call,))
        return None if r is None else {"judge": r["judge"], "judge_call": r["judge_call"], "useful": bool(r["useful"]),
                                       "turn": r["turn"], "created": r["created"]}


def agreement_rows(db: Database, collections: tuple | None) -> dict[str, list]:
    """collection -> [(judge, compared, agreed)]: how often each judge agreed with the user on the same answers, for
    these collections (or all)."""
    where, params = ("", ()) if collections is None else \
        (f" WHERE collection IN ({', '.join('?' * len(collections))})", tuple(collections))
    out: dict[str, list] = {}
    for r in db.query(f"SELECT collection, judge, compared, agreed FROM judge_agreement{where}", params):
        out.setdefault(r["collection"], []).append((r["judge"], r["compared"], r["agreed"]))
    return out


def user_judged(conn, call: str, old: int | None, new: int) -> None:
    """The user's verdict on `call` went from `old` (None: none) to `new`, inside the verdict's transaction: where the
    judge judged the same call, its agreement with the user follows."""
    row = conn.execute("SELECT collection, judge, useful FROM judge_verdicts WHERE call = ?", (call,)).fetchone()
    if row is None:
        return
    collection, judge, said = row[0], row[1], int(row[2])
    compared = 1 - (old is not None)
    agreed = int(int(new) == said) - (int(int(old) == said) if old is not None else 0)
    if compared or agreed:
        conn.execute(_AGREE, (collection, judge, compared, agreed))


def rebuild(conn) -> None:
    """The kept counts of agent signs and judge verdicts made again from the history (migration 27, `bench store
    rebuild`)."""
    standings.rebuild_signs(conn)
    conn.execute("UPDATE standings SET judge_useful = 0, judge_not_useful = 0")
    conn.executemany(_STANDING, conn.execute(
        "SELECT c.model, j.collection, SUM(j.useful = 1), SUM(j.useful = 0) FROM judge_verdicts j JOIN calls c "
        "ON c.id = j.call GROUP BY 1, 2").fetchall())
    conn.execute("DELETE FROM judge_agreement")
    conn.executemany(_AGREE, conn.execute(
        "SELECT j.collection, j.judge, COUNT(*), SUM(v.useful = j.useful) FROM judge_verdicts j JOIN verdicts v "
        "ON v.call = j.call AND v.current = 1 GROUP BY 1, 2").fetchall())
