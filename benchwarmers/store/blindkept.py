"""The useful rate from blind judgements alone, kept as verdicts are written: per model and collection, how many of
the current verdicts given while their panel was blind (`verdicts.blind`: a panel's first judgement, before its
models were shown) said useful and not useful. A read is a few rows a model, never the verdicts' history."""
from __future__ import annotations

from .standings import KINDS
from .windows import KINDS_SQL, NONE

SCHEMA = """
    CREATE TABLE blind_judged (
        model TEXT NOT NULL, scope TEXT NOT NULL, useful INTEGER NOT NULL DEFAULT 0,
        not_useful INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (model, scope)) WITHOUT ROWID;
"""
_UPSERT = ("INSERT INTO blind_judged (model, scope, useful, not_useful) VALUES (?, ?, ?, ?) ON CONFLICT (model, scope) "
           "DO UPDATE SET useful = useful + excluded.useful, not_useful = not_useful + excluded.not_useful")


def judged(conn, row, old: tuple | None, new: tuple | None) -> None:
    """(In the verdict's transaction.) A call's current verdict, `(useful, blind)`, went from `old` to `new` (None:
    none); a verdict counts here while it is the current one and was given blind. `row`: the call's (standings'
    CALL_COLS), None when the call is gone."""
    if row is None or row["kind"] not in KINDS:
        return
    useful = not_useful = 0
    for verdict, sign in ((old, -1), (new, 1)):
        if verdict is not None and verdict[1]:
            useful += sign * int(verdict[0] == 1)
            not_useful += sign * int(verdict[0] == 0)
    if useful or not_useful:
        conn.execute(_UPSERT, (row["model"], row["collection"] or NONE, useful, not_useful))


def counts(db, scopes: tuple | None) -> dict[str, tuple[int, int]]:
    """model -> (useful, not useful) of its current blind verdicts, over these scopes (None: every one)."""
    if scopes is not None and not scopes:
        return {}
    where = "" if scopes is None else f" WHERE scope IN ({', '.join('?' * len(scopes))})"
    out: dict[str, tuple[int, int]] = {}
    for r in db.query(f"SELECT model, useful, not_useful FROM blind_judged{where}", tuple(scopes or ())):
        had = out.get(r["model"], (0, 0))
        out[r["model"]] = (had[0] + r["useful"], had[1] + r["not_useful"])
    return out


def rebuild(conn) -> None:
    """The counts made again from the current verdicts given blind (migration 29's step, `bench store rebuild`)."""
    conn.execute("DELETE FROM blind_judged")
    conn.execute("INSERT INTO blind_judged (model, scope, useful, not_useful) SELECT c.model, COALESCE(c.collection, "
                 f"'{NONE}'), SUM(v.useful = 1), SUM(v.useful = 0) FROM verdicts v JOIN calls c ON c.id = v.call "
                 f"WHERE v.current = 1 AND v.blind = 1 AND c.kind IN {KINDS_SQL} GROUP BY c.model, "
                 f"COALESCE(c.collection, '{NONE}')")
