"""/bench/panels/{id}: one panel with its seats and their answers, and its conversation's turns (the panel it
followed, the ones that followed it), so a client that does not hold the history can show and continue it."""
from __future__ import annotations

import json

from ..core.blind import still_blind
from ..errors import NotFound
from ..server.messages import Request, Response
from ..server.openapi import obj, op
from ..server.routes import ADMIN, Route
from ..store.conversations import Conversations
from ..store.history import History, prompt_of
from .parts import Records


def panel_view(bench: Records, ident: str) -> dict:
    """The panel whole (as /bench/history/{id} shows it) with `previous` and `conversation`: its first panel's id and
    every turn of it, oldest first, each with its prompt. 404 for an id that is no panel."""
    item = History(bench.db).item(ident)
    talk = conversation_of(bench, ident) if item is not None and item["kind"] == "panel" else None
    if item is None or talk is None:
        raise NotFound(f"No panel {ident!r}.", "GET /bench/history lists the panels; a reply's `bench.panel` names "
                       "its own.")
    item = {**item, **talk}
    # a blind panel names no model until it is judged; from then on its seats say who sat where
    return still_blind(item)


def conversation_of(bench: Records, ident: str) -> dict | None:
    """{previous, conversation} of panel `ident` (None when the record has no such panel): the panel it followed, and
    its conversation's first panel's id with every turn, oldest first (the call page shows them)."""
    store = Conversations(bench.db)
    turn = store.turn(ident)
    if turn is None:
        return None
    root = turn.conversation or turn.panel
    first = store.turn(root) if root != turn.panel else turn
    turns = [{"panel": root, "previous": None, "created": first.created if first else None,
              "prompt": prompt_of(json.dumps(first.request)) if first else ""}]
    turns += [{"panel": t["panel"], "previous": t["previous"], "created": t["created"],
               "prompt": prompt_of(t["request"])} for t in store.turns(root)]
    return {"previous": turn.previous, "conversation": {"id": root, "turns": turns}}


def get_panel(req: Request, bench: Records) -> Response:
    return Response.json(panel_view(bench, req.params["id"]))


ROUTES = [
    Route("GET", "/bench/panels/{id}", get_panel, "bench", ADMIN, doc=op(
        "One panel with its seats, their answers and verdicts, and its conversation: the panel it followed "
        "(`previous`) and every turn (`conversation.turns`, oldest first).",
        ok=obj(("id", "seats", "previous", "conversation")))),
]
