"""Call records: one row per seat, merge or route turn, written through the one writer; read back by id."""
from __future__ import annotations

import builtins
import hashlib
import json
import operator
import time
from dataclasses import dataclass, field
from typing import Any

from ..canonical import Ask, Image, Text, ToolCall, ToolResult
from ..redaction import forget_known
from . import compaction, ledger, standings
from .batches import Written, insert_sql
from .db import Database
from .ledger import Line

COLUMNS = ("id", "panel", "collection", "model", "endpoint", "served", "kind", "mode", "seat", "status", "error",
           "request", "prompt_hash", "answer", "ttft", "seconds", "input_tokens", "output_tokens", "tokens_estimated",
           "caller", "created", "extra", "session", "turn", "finish_reason", "signs")


PANEL_HEAD = ("INSERT INTO panels (id, collection, mode, seats, caller, created, passed_over, request, points, previous, "
              "conversation, turn_start, set_aside, blind)")
# A call as read back: a panel seat's request is its panel's (kept once there); an older call has its own.
CALL_SELECT = ("SELECT c.rowid AS _row, c.*, p.request AS panel_request FROM calls c "
               "LEFT JOIN panels p ON p.id = c.panel")
PAGE = 50   # calls read per query when listing

EXTRA, ANSWER, REQUEST = COLUMNS.index("extra"), COLUMNS.index("answer"), COLUMNS.index("request")
_ROW = operator.attrgetter(*COLUMNS)   # a record's values in COLUMNS' order
CALL_HEAD = f"INSERT INTO calls ({', '.join(COLUMNS)})"
# The record of a call the panel stopped waiting for, made again by its worker: the same row updated in place (so
# verdicts given on it meanwhile stay), created when the panel made it; a row the store lost then is made now.
AMEND_CALL = insert_sql(CALL_HEAD, len(COLUMNS)) + " ON CONFLICT (id) DO UPDATE SET " + ", ".join(
    f"{c} = excluded.{c}" for c in COLUMNS if c not in ("id", "created"))


def clip_stored(text: str | None, limit: int) -> str | None:
    """`text` as stored: at most `limit` characters, and a note of how many more there were."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n…[{len(text) - limit} more characters not stored]"


def summarise_request(ask: Ask, limit: int | None = None) -> str:
    """What was asked, as compact JSON: text kept (about `limit` characters in all, when given), images named but
    not stored, tool traffic noted."""
    text = json.dumps(_summary(ask), ensure_ascii=False)
    if limit is not None and len(text) > limit:
        text = json.dumps(_fit(_summary(ask), limit, len(text)), ensure_ascii=False)
    return forget_known(text)     # a key pasted into a prompt goes upstream as asked, never into the record


def _fit(d: dict, limit: int, size: int) -> dict:
    """The summary cut to about `limit` characters: each text clipped to an equal share; then, if that is not
    enough, the oldest messages left out. `truncated` says how long it was."""
    share = max(200, limit // (1 + len(d["messages"])))
    d["system"] = clip_stored(d["system"], share)
    for m in d["messages"]:
        m["content"] = clip_stored(m["content"], share)
    d["truncated"] = {"chars": size, "messages_left_out": 0}
    while len(d["messages"]) > 1 and len(json.dumps(d, ensure_ascii=False)) > limit + share:
        d["messages"].pop(0)
        d["truncated"]["messages_left_out"] += 1
    return d


def _summary(ask: Ask) -> dict:
    messages = []
    for m in ask.messages:
        parts = []
        for p in m.parts:
            if isinstance(p, Text):
                parts.append(p.text)
            elif isinstance(p, Image):
                parts.append(f"[image {p.url or p.media_type}]")
            elif isinstance(p, ToolCall):
                parts.append(f"[tool call {p.name} {p.arguments[:2000]}]")
            elif isinstance(p, ToolResult):
                parts.append(f"[tool result {p.content[:2000]}]")
        messages.append({"role": m.role, "content": "\n".join(parts)})
    params = {k: v for k, v in (("max_tokens", ask.max_tokens), ("temperature", ask.temperature),
                                ("top_p", ask.top_p), ("stop", ask.stop or None)) if v is not None}
    return {"system": ask.system, "messages": messages, "params": params, "tools": [t.name for t in ask.tools]}


def request_of(row) -> str | None:
    """What a call was asked, as stored: its own, else its panel's (CALL_SELECT's `panel_request`), without any key
    known now (one recorded before it was known is kept out as it is read)."""
    if row["request"] is not None:
        return forget_known(row["request"])
    return forget_known(row["panel_request"]) if "panel_request" in row.keys() and row["panel_request"] else None


def as_read(text: str | None) -> str | None:
    """A recorded text as it is served: without any key known now."""
    return forget_known(text) if text else text


def prompt_hash(ask: Ask) -> str:
    """The hash of the ask's prompt text, fed piece by piece (a large ask's text is never joined into a copy)."""
    digest = hashlib.sha256()
    for n, chunk in enumerate(ask.prompt_chunks()):
        if n:
            digest.update(b"\n")
        digest.update(chunk.encode())
    return digest.hexdigest()[:16]


@dataclass
class CallRecord:
    id: str
    model: str
    status: str
    created: float = field(default_factory=time.time)
    panel: str | None = None
    collection: str | None = None
    endpoint: str | None = None
    served: str | None = None
    kind: str | None = None
    mode: str | None = None
    seat: int | None = None
    error: str | None = None
    request: str | None = None
    prompt_hash: str | None = None
    answer: str | None = None
    ttft: float | None = None
    seconds: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_estimated: bool = False   # the upstream reported no usage: the token counts are our estimate
    caller: str | None = None
    extra: dict | None = None
    session: str | None = None
    turn: str | None = None          # a shadow seat's: the route turn (its call id) it answered beside
    finish_reason: str | None = None   # why the answer ended: stop, length (cut at its cap), tool_calls, ...
    signs: str | None = None         # what an agent's turn showed: its tool calls checked and faulted (toolcheck.py)

    @classmethod
    def from_row(cls, row) -> "CallRecord":
        d = {k: row[k] for k in COLUMNS}
        d["request"] = request_of(row)
        d["answer"], d["error"] = as_read(d["answer"]), as_read(d["error"])
        d["extra"] = json.loads(d["extra"]) if d["extra"] else None
        d["tokens_estimated"] = bool(d["tokens_estimated"])
        return cls(**d)

    def to_dict(self) -> dict:
        """The record as the API shows it; the asking session's id stays inside (it names a live MCP session)."""
        d = {k: getattr(self, k) for k in COLUMNS if k != "session"}
        d["request"] = json.loads(self.request) if self.request else None
        return d


class Calls:
    def __init__(self, db: Database):
        self.db = db

    def add(self, rec: CallRecord, line: Line | None = None, amend: float | None = None) -> Written:
        """Queue the call and, for a call sent upstream, its usage-ledger line; the writer commits them together
        in its next batch (the Written says when). `amend`: the call was recorded already (a panel seat it stopped
        waiting for), its ledger line at or after that moment: its row and that line are brought up to date instead."""
        values = list(_ROW(rec))
        values[EXTRA] = json.dumps(rec.extra) if rec.extra else None
        new: dict[str, Any] = {"model": rec.model, "collection": rec.collection, "kind": rec.kind,
                               "status": rec.status, "seconds": rec.seconds, "created": rec.created,
                               "signs": rec.signs}
        if amend is not None:
            def write(conn):
                old = conn.execute(f"SELECT {standings.CALL_COLS}, answer, request FROM calls WHERE id = ?",
                                   (rec.id,)).fetchone()
                conn.execute(AMEND_CALL, values)
                if old is not None:   # the row keeps its moment: the panel's, not the amend's
                    new["created"] = old["created"]
                standings.amended(conn, rec.id, old, new)
                ledger.amend(conn, rec.id, line, amend)
                text = [compaction.part(new["created"], values[ANSWER], values[REQUEST])]
                if old is not None:
                    text.append((compaction.part(old["created"])[0], -compaction.chars(old["answer"], old["request"])))
                compaction.apply(conn, text)
            return self.db.submit(write)
        kept = (standings.apply_new, standings.part(new, None))
        text = (compaction.apply, compaction.part(rec.created, values[ANSWER], values[REQUEST]))
        if line is None:
            return self.db.insert((CALL_HEAD, values), keep=(kept, text))
        row = line.values()
        return self.db.insert((CALL_HEAD, values), (ledger.HEAD, row), keep=(kept, ledger.keep(row), text))

    def add_signs(self, call: str, more: list[str]) -> Written:
        """Signs a later turn showed of an earlier call (the client sent its turn again, or reported its tool call
        malformed): added to its row and to its model's standing, in one transaction."""
        def write(conn):
            old = standings.call_row(conn, call)
            if old is None:
                return
            had = old["signs"].split(",") if old["signs"] else []
            signs = ",".join(dict.fromkeys(had + list(more)))
            if signs == old["signs"]:
                return
            conn.execute("UPDATE calls SET signs = ? WHERE id = ?", (signs, call))
            standings.amended(conn, call, old, {**dict(old), "signs": signs})
        return self.db.submit(write)

    def add_panel(self, panel_id: str, collection: str, mode: str, seats: int, caller: str | None,
                  passed_over: list | None = None, request: str | None = None, points: str | None = None,
                  links=None, blind: bool = False) -> Written:
        """The panel's row; `passed_over`: the explore candidates it could not seat, each {model, reason}; `request`:
        what it was asked, as stored (its seats' records leave theirs empty: see request_of); `points`: its points'
        info while the referee reads (JSON; the points replace it: store/pointstore.py); `links`: where it stands in its
        conversation (store/conversations.py's Links; None: a first turn); `blind`: no model is named to its asker
        until it is judged (store/bestpicks.py says when)."""
        passed = json.dumps(passed_over) if passed_over else None
        now = time.time()
        linked = (links.previous, links.conversation, links.turn_start, links.set_aside) if links else (None,) * 4
        return self.db.insert((PANEL_HEAD, (panel_id, collection, mode, seats, caller, now, passed, request, points,
                                            *linked, 1 if blind else None)),
                              keep=((compaction.apply, compaction.part(now, request)),))

    def get(self, call_id: str) -> CallRecord | None:
        sql = CALL_SELECT + " WHERE c.id = ?"
        row = self.db.one(sql, (call_id,))
        if row is None:
            self.db.sync()   # it may still be in the writer's queue
            row = self.db.one(sql, (call_id,))
        return CallRecord.from_row(row) if row else None

    def list(self, collection: str | None = None, model: str | None = None, panel: str | None = None,
             limit: int = 50, collections: list | None = None) -> list[CallRecord]:
        return [rec for page in self.pages(collection, model, panel, limit, collections) for rec in page]

    def pages(self, collection: str | None = None, model: str | None = None, panel: str | None = None,
              limit: int = 50, collections: builtins.list | None = None, size: int = PAGE):
        """The newest `limit` calls matching, in pages of `size` read one query at a time: a listing of large
        records holds one page in memory, never all of them, and holds no reader between pages."""
        self.db.sync()
        where, params = [], []
        for column, value in (("model", model), ("panel", panel)):
            if value:
                where.append(f"c.{column} = ?")
                params.append(value)
        lanes: list = [collection or None]
        if collections is not None and "*" not in collections:   # a lane a collection, each down its own index
            lanes = [c for c in collections if not collection or c == collection]
        after: tuple | None = None
        while limit > 0:
            rows = []
            for lane in lanes:
                lane_where = where + (["c.collection = ?"] if lane else []) + \
                    (["(c.created, c.rowid) < (?, ?)"] if after else [])
                sql = (CALL_SELECT + (" WHERE " + " AND ".join(lane_where) if lane_where else "")
                       + " ORDER BY c.created DESC, c.rowid DESC LIMIT ?")
                rows += self.db.query(sql, (*params, *([lane] if lane else []), *(after or ()), min(size, limit)))
            rows = sorted(rows, key=lambda r: (r["created"], r["_row"]), reverse=True)[:min(size, limit)]
            if not rows:
                return
            yield [CallRecord.from_row(r) for r in rows]
            limit -= len(rows)
            after = (rows[-1]["created"], rows[-1]["_row"])

    def last_asked(self, models) -> dict[str, float]:
        """When each of `models` was last given a seat, for explore rotation: one look each down calls_model."""
        out = {}
        for model in models:
            row = self.db.one("SELECT MAX(created) AS t FROM calls WHERE model = ?", (model,))
            if row is not None and row["t"] is not None:
                out[model] = row["t"]
        return out
