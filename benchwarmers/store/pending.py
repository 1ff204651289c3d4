"""Answers waiting for a verdict: panel seats that answered, that nobody has judged yet and that no retry replaced,
newest first; and before them the points of those panels that nobody judged (one judgement of a point counts for
every seat that took a side)."""
from __future__ import annotations

import time
from typing import Callable

from ..redaction import forget_known, names_pattern, unnamed
from .db import Database
from .pointstore import PointStore, names_of

EXCERPT = 200      # characters of an answer shown beside its call id
REACH = 2_000      # the latest calls (of the caller, session or calls asked about) looked through for waiting answers
# A seat's answer of a panel (members, explorers, models added with `with`), not a merge, a route turn or a shadow:
# the answers an asker reads and is asked to judge.
WAITING = ("c.status = 'ok' AND c.panel IS NOT NULL AND c.kind IN ('member', 'explore', 'with') "
           "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call = c.id AND v.current = 1) "
           "AND NOT EXISTS (SELECT 1 FROM usage u WHERE u.call = c.id AND u.kind = 'suite') "   # the suite scores its own
           "AND NOT EXISTS (SELECT 1 FROM panels p WHERE p.id = c.panel AND p.set_aside IS NOT NULL) "   # only a test
           # asked again (a retry's record names it): the retry's answer holds the seat now, a few rows by the panel
           "AND NOT EXISTS (SELECT 1 FROM calls r WHERE r.panel = c.panel AND r.seat = c.seat AND r.id <> c.id "
           "AND json_extract(r.extra, '$.retry_of') = c.id)")


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    flat = " ".join(forget_known(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def blind_among(db: Database, panels: list) -> tuple[set, Callable]:
    """(the blind panels among `panels` not judged yet, whose seats name no model; a text with their seats' model
    names as "a model"): a few rows of the panels listed, never more."""
    marks = ", ".join("?" * len(panels))
    hidden = {r["id"] for r in db.query(f"SELECT id FROM panels WHERE id IN ({marks}) AND blind = 1 AND "
                                        "revealed IS NULL", panels)} if panels else set()
    names = names_pattern(names_of(db.query(f"SELECT model, served FROM calls WHERE panel IN "
                                            f"({', '.join('?' * len(hidden))})", list(hidden)))) if hidden else None
    return hidden, lambda text: unnamed(text, names) if text else text


def _floor(db: Database, where: list, params: list, lanes: list) -> tuple | None:
    """(the time past which calls are not looked through, how many are), or None when every matching call is within
    REACH. Each collection is a lane of its own (its index, calls_collection): the newest of the lanes' floors."""
    floors = []
    for lane in lanes:
        cond = where + (["c.collection = ?"] if lane is not None else [])
        row = db.one(f"SELECT c.created FROM calls c WHERE {' AND '.join(cond) or '1'} ORDER BY c.created DESC "
                     "LIMIT 1 OFFSET ?", (*params, *([lane] if lane is not None else []), REACH))
        if row is not None:
            floors.append(row["created"])
    return (max(floors), REACH) if floors else None


def pending(db: Database, *, caller: str | None = None, since: float | None = None, collections: list | None = None,
            session: str | None = None, calls: list | None = None, limit: int = 50) -> dict:
    """{"points": [...], "points_total", "pending": [...], "total", "looked_through", "total_capped"}: the newest
    `limit` unjudged points of the panels looked through (newest panel first, most contested first) and how many
    there are, then the newest `limit` waiting answers (each kind has its own `limit`, so neither hides the other),
    among the latest REACH calls asked by `caller` (a key's name) since `since` (that key's making: a key made again
    under an old name is another key, and its predecessor's asks are not its own) within `collections` (None or '*':
    any), by `session`, and among `calls`, each condition only when given. `total_capped`: there are older calls than
    those looked through (older answers may wait too): a read costs the same at any size of the record."""
    db.sync()
    where: list[str] = []
    params: list = []
    if since is not None:
        where.append("c.created >= ?")
        params.append(since)
    for column, value in (("caller", caller), ("session", session)):
        if value is not None:
            where.append(f"c.{column} = ?")
            params.append(value)
    if calls is not None:
        where.append(f"c.id IN ({', '.join('?' * len(calls))})" if calls else "0")
        params.extend(calls)
    lanes = [None] if collections is None or "*" in collections else list(collections)
    floor = _floor(db, where, params, lanes)
    if lanes != [None]:
        where.append(f"c.collection IN ({', '.join('?' * len(lanes))})" if lanes else "0")
        params.extend(lanes)
    within, bound = " AND ".join(where + ["c.created > ?"]), (*params, floor[0] if floor else 0.0)
    total = db.first(f"SELECT COUNT(*) AS n FROM calls c WHERE {within} AND {WAITING}", bound)["n"]
    rows = db.query(f"SELECT c.id, c.panel, c.collection, c.seat, c.kind, c.model, c.created FROM calls c "
                    f"WHERE {within} AND {WAITING} ORDER BY c.created DESC, c.seat LIMIT ?", (*bound, limit))
    answers = {r["id"]: r["answer"] for r in db.query(   # read for the answers shown only
        f"SELECT id, answer FROM calls WHERE id IN ({', '.join('?' * len(rows))})", [r["id"] for r in rows])} \
        if rows else {}
    hidden, unnamed = blind_among(db, list({r["panel"] for r in rows}))
    seen = floor[1] if floor else db.first(f"SELECT COUNT(*) AS n FROM calls c WHERE {within}", bound)["n"]
    points, points_total = PointStore(db).unjudged(   # the panels of the seats looked through, whether judged or not
        f"SELECT c.panel FROM calls c WHERE {within} AND c.panel IS NOT NULL AND c.kind IN ('member', 'explore', "
        "'with') AND NOT EXISTS (SELECT 1 FROM panels p WHERE p.id = c.panel AND p.set_aside IS NOT NULL)", bound, limit)
    return {"points": points, "points_total": points_total,
            "pending": [{"call": r["id"], "panel": r["panel"], "collection": r["collection"], "seat": r["seat"],
                         "kind": r["kind"], "model": f"Seat {r['seat']}" if r["panel"] in hidden else r["model"],
                         "created": r["created"],
                         "excerpt": excerpt(unnamed(answers.get(r["id"])) if r["panel"] in hidden else
                                            answers.get(r["id"]))} for r in rows],
            "total": total, "looked_through": seen, "total_capped": floor is not None}


def set_aside_waiting(db: Database, before: float, collection: str | None = None) -> int:
    """Set aside, as only tests, the panels asked before `before` (of `collection`) that still have an answer
    waiting for a verdict: their answers and points stop waiting. How many panels; one statement, through the
    writer, whatever the backlog's size."""
    where = ["p.created <= ?", "p.set_aside IS NULL"]
    params: list = [before]
    if collection is not None:
        where.append("p.collection = ?")
        params.append(collection)
    waiting = ("EXISTS (SELECT 1 FROM calls c WHERE c.panel = p.id AND c.status = 'ok' AND c.kind IN ('member', "
               "'explore', 'with') AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call = c.id AND v.current = 1))")
    return db.execute(f"UPDATE panels AS p SET set_aside = ? WHERE {' AND '.join(where)} AND {waiting}",
                      (time.time(), *params), wait=True)
