"""The backlog and the record as data: POST /bench/pending/set-aside sets waiting answers aside in bulk; GET
/bench/export/{kind} streams preference pairs, verdicts, claims or points as JSON Lines."""
from __future__ import annotations

import math
import time

from ..errors import BadRequest, NotFound
from ..names import check_name
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import export
from ..store.pending import set_aside_waiting
from .parts import Records

SET_ASIDE = obj((), False, all={"type": "boolean"}, before={"type": "number"}, collection=STRING)


def when(value, name: str) -> float:
    """A moment given as epoch seconds, checked."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise BadRequest(f"`{name}` must be a moment in epoch seconds (e.g. {time.time() - 7 * 86400:.0f}: a week "
                         "ago).")
    return float(value)


def post_set_aside(req: Request, bench: Records) -> Response:
    """Every waiting answer (`all`), those asked before `before`, or one `collection`'s (the last two together
    too), set aside as only tests."""
    body = req.json()
    if not isinstance(body, dict) or not body or set(body) - {"all", "before", "collection"}:
        raise BadRequest('Say which answers to set aside: {"all": true}, {"before": EPOCH_SECONDS} and/or '
                         '{"collection": NAME}.')
    if "all" in body and (body["all"] is not True or len(body) > 1):
        raise BadRequest('`all` must be true, alone: {"all": true} sets aside every answer waiting for a verdict.')
    before = when(body["before"], "before") if "before" in body else time.time()
    collection = body.get("collection")
    if collection is not None:
        if not isinstance(collection, str):
            raise BadRequest("`collection` must be a collection's name.")
        check_name(collection, "Collection name")
    panels = set_aside_waiting(bench.db, before, collection)
    return Response.json({"set_aside": panels, "before": before, "collection": collection})


def get_export(req: Request, bench: Records) -> Response:
    kind = req.params["kind"]
    if kind not in export.KINDS:
        raise NotFound(f"No export {kind!r}.", "Export one of: " + ", ".join(export.KINDS) + ".")
    since = req.query.get("since")
    if since is not None:
        try:
            since = when(float(since), "since")
        except ValueError:
            raise BadRequest("`since` must be a moment in epoch seconds.") from None
    collection = req.query.get("collection") or None
    return Response.streaming(export.lines(bench.db, kind, since, collection), "application/x-ndjson")


ROUTES = [
    Route("POST", "/bench/pending/set-aside", post_set_aside, "bench", ADMIN, doc=op(
        "Set the backlog aside as only tests: every panel with an answer waiting for a verdict (all), those asked "
        "before a moment, or one collection's; their answers and points stop waiting.", body=SET_ASIDE,
        ok=obj(("set_aside",), set_aside={"type": "integer"}, before={"type": "number"}))),
    Route("GET", "/bench/export/{kind}", get_export, "bench", ADMIN, doc=op(
        "The record as JSON Lines, oldest first, streamed: pairs (a best pick's chosen answer over each other), "
        "verdicts, claims (the judged points' claims) or points.", query={"since": STRING, "collection": STRING},
        content=("application/x-ndjson",))),
]
