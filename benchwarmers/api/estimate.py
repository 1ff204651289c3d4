"""/bench/estimate: what an ask will cost at most before it is sent (each seat's estimate, the referee's and the
merge's), for the Ask page and `bench ask --dry-run`; the body is the OpenAI chat request the ask would be."""
from __future__ import annotations

from typing import Protocol

from .. import formats
from ..core.costs import ask_estimate
from ..core.panel import Panel
from ..errors import BadRequest
from ..formats.base import RequestInfo
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route

PATH = "/bench/estimate"


class EstimateParts(Protocol):
    """The panel: its seating, picker and dialer say who would be asked, and what each may cost."""
    panel: Panel


def estimate_view(bench: EstimateParts, body, headers: dict | None = None) -> dict:
    """The estimate of the ask `body` (an OpenAI chat request) as the panel would run it now."""
    if not isinstance(body, dict):
        raise BadRequest("Send the ask as an OpenAI chat request: {\"model\": ..., \"messages\": [...]}.")
    ask = formats.get("openai_chat").parse(body, RequestInfo(PATH, {}, headers or {})).ask
    return ask_estimate(bench.panel, ask)


def estimate(req: Request, bench: EstimateParts) -> Response:
    return Response.json(estimate_view(bench, req.json(), req.headers))


CALL = {"type": ["object", "null"]}
ROUTES = [
    Route("POST", PATH, estimate, "bench", ADMIN, doc=op(
        "What an ask will cost at most before it is sent: each seat's estimate (prompt and output cap at its model's "
        "price), the referee's and the merge's, their sum (most) and the models with no known price.",
        body=obj(("model", "messages"), model=STRING, messages={"type": "array"}),
        ok=obj(("seats", "most"), seats={"type": "array"}, most={"type": "number"}, referee=CALL, merge=CALL,
               unpriced={"type": "array"}))),
]
