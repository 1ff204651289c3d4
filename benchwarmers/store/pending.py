"""Answers waiting for a verdict: panel seats that answered and that nobody has judged yet, newest first."""
from __future__ import annotations

from ..redaction import forget_known
from .db import Database

EXCERPT = 200      # characters of an answer shown beside its call id
# A seat's answer of a panel (members, explorers, models added with `with`), not a merge, a route turn or a shadow:
# the answers an asker reads and is asked to judge.
WAITING = ("c.status = 'ok' AND c.panel IS NOT NULL AND c.kind IN ('member', 'explore', 'with') "
           "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call = c.id AND v.current = 1) "
           "AND NOT EXISTS (SELECT 1 FROM usage u WHERE u.call = c.id AND u.kind = 'suite') "   # the suite scores its own
           "AND NOT EXISTS (SELECT 1 FROM panels p WHERE p.id = c.panel AND p.set_aside IS NOT NULL)")   # only a test


def excerpt(text: str | None, limit: int = EXCERPT) -> str:
    flat = " ".join(forget_known(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pending(db: Database, *, caller: str | None = None, since: float | None = None, collections: list | None = None,
            session: str | None = None, calls: list | None = None, limit: int = 50) -> dict:
    """{"pending": [...], "total"}: the waiting answers asked by `caller` (a key's name) since `since` (that key's
    making: a key made again under an old name is another key, and its predecessor's asks are not its own) within
    `collections` (None or '*': any), by `session`, and among `calls`, each condition only when given."""
    db.sync()
    where, params = [WAITING], []
    if since is not None:
        where.append("c.created >= ?")
        params.append(since)
    for column, value in (("caller", caller), ("session", session)):
        if value is not None:
            where.append(f"c.{column} = ?")
            params.append(value)
    for column, values in (("collection", None if collections is None or "*" in collections else collections),
                           ("id", calls)):
        if values is not None:
            where.append(f"c.{column} IN ({', '.join('?' * len(values))})" if values else "0")
            params.extend(values)
    clause = " AND ".join(where)
    total = db.one(f"SELECT COUNT(*) AS n FROM calls c WHERE {clause}", tuple(params))["n"]
    rows = db.query(f"SELECT c.id, c.panel, c.collection, c.seat, c.kind, c.model, c.answer, c.created FROM calls c "
                    f"WHERE {clause} ORDER BY c.created DESC, c.seat LIMIT ?", (*params, limit))
    return {"pending": [{"call": r["id"], "panel": r["panel"], "collection": r["collection"], "seat": r["seat"],
                         "kind": r["kind"], "model": r["model"], "created": r["created"],
                         "excerpt": excerpt(r["answer"])} for r in rows],
            "total": total}
