"""/bench/onboard: put models on the onboarding queue, list the queue, follow one item with its log."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..errors import BadRequest
from ..roster.onboardqueue import OnboardQueue
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route

if TYPE_CHECKING:
    from ..bench import Bench


class OnboardParts(Protocol):
    onboard_queue: OnboardQueue


ITEM = obj(("id", "served", "state"), id={"type": "integer"}, served=STRING, state=STRING)
ITEMS = obj(("items",), items={"type": "array", "items": ITEM})


def whole_number(value: str, what: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{what} must be a whole number.") from None
    if not low <= number <= high:
        raise BadRequest(f"{what} must be from {low} to {high}.")
    return number


def post_onboard(req: Request, bench: OnboardParts) -> Response:
    items = bench.onboard_queue.enqueue(req.json())
    return Response.json({"items": items, "note": "Queued: models onboard one at a time, in order. "
                                                  "Follow them with GET /bench/onboard/{id}."}, 202)


def list_onboard(req: Request, bench: OnboardParts) -> Response:
    """Recent items, newest first; `ids=1,2,3` asks for those items (in id order), as a progress view polls."""
    raw_ids = (req.query.get("ids") or "").strip()
    ids = [whole_number(i, "Each id", 1, 2 ** 62) for i in raw_ids.split(",") if i.strip()] if raw_ids else None
    if ids and len(ids) > 500:
        raise BadRequest("Ask for at most 500 ids at once.")
    limit = whole_number(req.query.get("limit", 50), "limit", 1, 1000)
    return Response.json({"items": bench.onboard_queue.items(limit, ids)})


def get_onboard(req: Request, bench: OnboardParts) -> Response:
    return Response.json(bench.onboard_queue.item(whole_number(req.params["id"], "The item id", 1, 2 ** 62)))


ROUTES: list[Route[Bench]] = [
    Route("POST", "/bench/onboard", post_onboard, "bench", ADMIN, doc=op(
        "Put models on the onboarding queue; they onboard one at a time, in order (202 at once).", status=202,
        body=obj(("models",), models={"type": "array", "items": {"type": ["string", "object"]}}, mode=STRING,
                 endpoint={"type": ["string", "null"]}, alias={"type": ["string", "null"]}), ok=ITEMS)),
    Route("GET", "/bench/onboard", list_onboard, "bench", ADMIN, doc=op(
        "The queue's items, newest first (`ids`: those items, in id order).",
        query={"limit": {"type": "integer"}, "ids": STRING}, ok=ITEMS)),
    Route("GET", "/bench/onboard/{id}", get_onboard, "bench", ADMIN, doc=op(
        "One item of the queue, with the last lines of its log.", ok=ITEM)),
]
