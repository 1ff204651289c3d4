"""/bench/store: the record's size and what the retention setting would prune; compact it; rebuild what is kept."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from ..errors import BadRequest
from ..scheduler import Clock
from ..server.messages import Request, Response
from ..server.openapi import obj, op
from ..server.routes import ADMIN, Route
from ..store import Database, compaction
from ..store.migrations import rebuild_kept
from .parts import EffectiveSettings

if TYPE_CHECKING:
    from ..bench import Bench


class StoreParts(EffectiveSettings, Protocol):
    clock: Clock
    db: Database


STORE = obj(("bytes", "free_bytes", "wal_bytes", "text_chars", "keep_days", "would_prune_chars"),
            bytes={"type": "integer"}, free_bytes={"type": "integer"}, wal_bytes={"type": "integer"},
            text_chars={"type": "integer"}, keep_days={"type": "integer"}, would_prune_chars={"type": "integer"})
ROOM = obj(("needed_bytes", "free_bytes", "enough"), needed_bytes={"type": "integer"}, free_bytes={"type": "integer"},
           enough={"type": "boolean"})


def store_view(bench: StoreParts) -> dict:
    """The record's size, free pages, WAL and text kept, what compacting now would prune, and the free disk it
    needs beside what there is (`room`)."""
    return {**compaction.size(bench.db, bench.settings()["record_keep_days"], bench.clock.now()),
            "room": compaction.room(bench.db)}


def get_store(req: Request, bench: StoreParts) -> Response:
    return Response.json(store_view(bench))


def post_compact(req: Request, bench: StoreParts) -> Response:
    """{"full": false}: prune the text the retention setting says to, give free pages back, in batches (the WAL
    emptied after each); `full`: rewrite the file (it needs twice what the record holds free, and writes wait for
    it). 507 before anything is done when the disk lacks the room, saying how much it needs and how much is free."""
    body = req.json() if req.body.strip() else {}
    extra = sorted(set(body) - {"full"})
    if extra or not isinstance(body.get("full", False), bool):
        raise BadRequest("A compaction takes {\"full\": true|false} only.", "e.g. {} or {\"full\": true}")
    return Response.json(compaction.compact(bench.db, bench.settings()["record_keep_days"], body.get("full", False),
                                            bench.clock.now()))


def post_rebuild(req: Request, bench: StoreParts) -> Response:
    """Every kept table (standings, calls per day, ledger totals, text per day) made again from the history, in one
    transaction: writes wait for it."""
    started = time.monotonic()
    bench.db.call(rebuild_kept)
    return Response.json({"rebuilt": True, "seconds": round(time.monotonic() - started, 2),
                          "store": compaction.size(bench.db, bench.settings()["record_keep_days"], bench.clock.now())})


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/store", get_store, "bench", ADMIN, doc=op(
        "The record's size (database, free pages, WAL), its text, what record_keep_days would prune, and the free "
        "disk a compaction needs.", ok=dict(STORE, properties={**STORE["properties"], "room": ROOM}))),
    Route("POST", "/bench/store/compact", post_compact, "bench", ADMIN, doc=op(
        "Prune the text older than record_keep_days and give free pages back, in batches (full: rewrite the file); "
        "507 when the disk lacks the room it needs.", body=obj((), full={"type": "boolean"}),
        ok=obj(("store", "keep_days", "notes"), store=STORE, keep_days={"type": "integer"}, room=ROOM,
               notes={"type": "array", "items": {"type": "string"}}))),
    Route("POST", "/bench/store/rebuild", post_rebuild, "bench", ADMIN, doc=op(
        "Make every kept table (the record's standings, calls per day, the ledger's totals) again from the history.",
        ok=obj(("rebuilt",), rebuilt={"type": "boolean"}))),
]
