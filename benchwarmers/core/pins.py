"""Route-mode pins: a conversation keeps its member for every turn; kept in SQLite so they survive a restart."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Pinned:
    """A conversation's pin as its last turn left it: the member, that turn's call and prompt hash, and how many of
    the member's turns in a row failed (its tool calls, or upstream mid-answer), with why the last did."""
    model: str
    call: str | None = None
    prompt: str | None = None
    strikes: int = 0
    struck: str | None = None


class Pins:
    def __init__(self, db: Database):
        self.db = db

    def state(self, key: str, idle_seconds: float) -> Pinned | None:
        sql = "SELECT model, last_used, call, prompt, strikes, struck FROM pins WHERE key = ?"
        row = self.db.one(sql, (key,))
        if row is None:
            self.db.sync()
            row = self.db.one(sql, (key,))
        if row is None or time.time() - row["last_used"] > idle_seconds:
            return None
        return Pinned(row["model"], row["call"], row["prompt"], row["strikes"], row["struck"])

    def set(self, key: str, collection: str, model: str) -> None:
        """The conversation's member for this turn (a new member starts with no failing turns)."""
        now = time.time()
        self.db.submit(lambda c: c.execute(
            "INSERT INTO pins (key, collection, model, created, last_used, turns) VALUES (?, ?, ?, ?, ?, 1) "
            "ON CONFLICT(key) DO UPDATE SET model = excluded.model, last_used = excluded.last_used, "
            "turns = pins.turns + 1, strikes = CASE WHEN pins.model = excluded.model THEN pins.strikes ELSE 0 END",
            (key, collection, model, now, now)))

    def ended(self, key: str, collection: str, model: str, turn: tuple, failed: str | None) -> None:
        """The pinned member's turn is over: `turn` (its call, its prompt hash); `failed`: why it failed (its tool
        calls, or upstream mid-answer), which adds a failing turn in a row, else None, which ends the run."""
        now = time.time()
        call, prompt = turn
        self.db.submit(lambda c: c.execute(
            "INSERT INTO pins (key, collection, model, created, last_used, turns, call, prompt, strikes, struck) "
            "VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET call = excluded.call, "
            "prompt = excluded.prompt, last_used = excluded.last_used, strikes = CASE WHEN excluded.strikes = 0 "
            "THEN 0 WHEN pins.model = excluded.model THEN pins.strikes + 1 ELSE 1 END, struck = excluded.struck, "
            "model = excluded.model",
            (key, collection, model, now, now, call, prompt, int(failed is not None), failed)))

    def strike(self, key: str, why: str) -> None:
        """The client reported the pinned member's last turn failed (a malformed tool call): one more failing turn."""
        self.db.submit(lambda c: c.execute("UPDATE pins SET strikes = strikes + 1, struck = ? WHERE key = ?",
                                           (why, key)))

    def expire(self, idle_seconds: float) -> None:
        cutoff = time.time() - idle_seconds
        self.db.submit(lambda c: c.execute("DELETE FROM pins WHERE last_used < ?", (cutoff,)))
