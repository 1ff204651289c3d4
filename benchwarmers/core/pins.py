"""Route-mode pins: a conversation keeps its member for every turn; kept in SQLite so they survive a restart."""
from __future__ import annotations

import hashlib
import json
import time

from ..canonical import Ask
from ..store import Database

def conversation_key(ask: Ask, collection: str, session: str | None, caller_secret: str | None) -> str:
    """The client's own session (`session`: worked out at the edge from what the client sent, e.g. a header's
    name and value) when it names one, else a hash of what every turn of a conversation repeats: the collection,
    the caller's key, the system prompt and the first user message."""
    if session:
        return f"{collection}|{session}"[:300]
    first_user = next((m for m in ask.messages if m.role == "user"), None)
    first = ""
    if first_user:
        first = json.dumps([getattr(p, "text", "") or getattr(p, "url", "") or getattr(p, "data", "")[:64]
                            for p in first_user.parts], ensure_ascii=False)
    digest = hashlib.sha256("\x1f".join((collection, hashlib.sha256((caller_secret or "").encode()).hexdigest(),
                                         ask.system or "", first)).encode()).hexdigest()
    return f"{collection}|hash|{digest[:32]}"


class Pins:
    def __init__(self, db: Database):
        self.db = db

    def get(self, key: str, idle_seconds: float) -> str | None:
        row = self.db.one("SELECT model, last_used FROM pins WHERE key = ?", (key,))
        if row is None:
            self.db.sync()
            row = self.db.one("SELECT model, last_used FROM pins WHERE key = ?", (key,))
        if row is None or time.time() - row["last_used"] > idle_seconds:
            return None
        return row["model"]

    def set(self, key: str, collection: str, model: str) -> None:
        now = time.time()
        self.db.submit(lambda c: c.execute(
            "INSERT INTO pins (key, collection, model, created, last_used, turns) VALUES (?, ?, ?, ?, ?, 1) "
            "ON CONFLICT(key) DO UPDATE SET model = excluded.model, last_used = excluded.last_used, "
            "turns = pins.turns + 1", (key, collection, model, now, now)))

    def expire(self, idle_seconds: float) -> None:
        cutoff = time.time() - idle_seconds
        self.db.submit(lambda c: c.execute("DELETE FROM pins WHERE last_used < ?", (cutoff,)))
