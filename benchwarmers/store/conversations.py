"""The record of conversations: each panel's reply found again by the hash of its text, the panel before it, and a
turn as the record keeps it (its seats' answers, what it was asked). Every read is by a key: a reply's hash, a
panel's id, a conversation's root; never the history."""
from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from .calls import as_read
from .db import Database

# The columns and indexes read here: migration 25 (store/migrations.py).
SEAT_KINDS = ("member", "explore", "with")
REPLY_HEAD = "INSERT OR IGNORE INTO replies (reply, panel)"
RECENT = 4096   # replies each process remembers as it sends them (a follow-up may come before they are committed)
LONGEST = 64   # turns of a conversation read back at most (a chain longer than that starts at its 64th-last turn)


def reply_hash(text: str) -> int:
    """The hash a reply is found by: its words, whatever whitespace a client trimmed, re-wrapped or added; 64 bits as
    an integer, so the key the replies are found by stays small."""
    digest = hashlib.sha256(" ".join(text.split()).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@dataclass
class Links:
    """Where a new panel stands in its conversation (all None for a first turn), and whether it is only a chat UI's
    background task (set aside at once: its answer waits for no verdict)."""
    previous: str | None = None
    conversation: str | None = None
    turn_start: int | None = None
    set_aside: float | None = None


@dataclass
class SeatSaid:
    seat: int
    model: str
    kind: str
    status: str
    answer: str | None
    useful: bool | None = None      # its current verdict's


@dataclass
class PanelTurn:
    """One panel of a conversation as the record keeps it."""
    panel: str
    collection: str | None
    caller: str | None
    created: float
    previous: str | None
    conversation: str | None
    turn_start: int
    request: dict
    seats: list = field(default_factory=list)      # SeatSaid, in seat order
    blind: bool = False                            # its seats were shown as Seat 1..N with no model named
    revealed: bool = False                         # and a judgement has since shown who sat where


PANEL_COLS = "id, collection, caller, created, previous, conversation, turn_start, request, blind, revealed"
SEATS = ("SELECT c.seat, c.model, c.kind, c.status, c.answer, v.useful AS useful FROM calls c "
         "LEFT JOIN verdicts v ON v.call = c.id AND v.current = 1 WHERE c.panel = ? ORDER BY c.seat, c.created")


class Conversations:
    def __init__(self, db: Database):
        self.db = db
        self._recent: OrderedDict[int, str] = OrderedDict()   # hash -> panel of the latest replies, committed or not
        self._lock = threading.Lock()

    def keep_reply(self, panel: str, text: str) -> None:
        """The panel's reply as it went out, kept as its hash: a client sending it back is found by it. Written with
        the writer's next batch, not waited for (the reply names nothing it holds); until then, and for a while,
        this process finds it in memory."""
        digest = reply_hash(text)
        recent = self._recent
        with self._lock:
            if digest in recent:   # (a new reply, nearly every one, goes in last already)
                recent.move_to_end(digest)
            recent[digest] = panel
            if len(recent) > RECENT:
                recent.popitem(last=False)
        self.db.insert((REPLY_HEAD, (digest, panel)))

    def by_reply(self, text: str) -> str | None:
        """The newest panel whose reply was `text` (whitespace aside), or None: one look down the replies' key (panel
        ids sort as they were made)."""
        digest = reply_hash(text)
        with self._lock:
            panel = self._recent.get(digest)
        if panel is not None:
            return panel
        row = self.db.one("SELECT panel FROM replies WHERE reply = ? ORDER BY panel DESC LIMIT 1", (digest,))
        return row["panel"] if row else None

    def replied(self, texts: list[str]) -> set[tuple[int, str]]:
        """(hash, panel) of every panel whose reply was one of `texts`: one look down the replies' key each."""
        hashes = list(dict.fromkeys(map(reply_hash, texts)))
        if not hashes:
            return set()
        with self._lock:
            found = {(h, self._recent[h]) for h in hashes if h in self._recent}
        rows = self.db.query(f"SELECT reply, panel FROM replies WHERE reply IN ({', '.join('?' * len(hashes))})",
                             hashes)
        return found | {(r["reply"], r["panel"]) for r in rows}

    def turn(self, panel: str) -> PanelTurn | None:
        """One panel with its seats' answers, by its id."""
        row = self.db.one(f"SELECT {PANEL_COLS} FROM panels WHERE id = ?", (panel,))
        if row is None:
            self.db.sync()   # it may still be in the writer's queue (a follow-up asked at once)
            row = self.db.one(f"SELECT {PANEL_COLS} FROM panels WHERE id = ?", (panel,))
        if row is None:
            return None
        try:
            request = json.loads(as_read(row["request"]) or "{}")
        except ValueError:
            request = {}
        latest = {r["seat"]: r for r in self.db.query(SEATS, (panel,)) if r["kind"] in SEAT_KINDS}   # a retried
        seats = [SeatSaid(r["seat"], r["model"], r["kind"], r["status"], as_read(r["answer"]),   # seat's last call
                          None if r["useful"] is None else bool(r["useful"])) for r in latest.values()]
        return PanelTurn(row["id"], row["collection"], row["caller"], row["created"], row["previous"],
                         row["conversation"], row["turn_start"] or 0, request, seats, bool(row["blind"]),
                         row["revealed"] is not None)

    def chain(self, panel: str, most: int = LONGEST) -> list[PanelTurn]:
        """The panel and the turns before it, oldest first (at most `most`, and LONGEST), each read by its id."""
        turns: list[PanelTurn] = []
        ident: str | None = panel
        while ident and len(turns) < min(most, LONGEST):
            turn = self.turn(ident)
            if turn is None:
                break
            turns.append(turn)
            ident = turn.previous
        return turns[::-1]

    def turns(self, conversation: str) -> list[dict]:
        """Every panel of a conversation, oldest first (down panels_conversation; its first turn is the root)."""
        rows = self.db.query("SELECT id, previous, created, request FROM panels WHERE conversation = ? "
                             "ORDER BY created LIMIT ?", (conversation, 10 * LONGEST))
        return [{"panel": r["id"], "previous": r["previous"], "created": r["created"], "request": as_read(r["request"])}
                for r in rows]

