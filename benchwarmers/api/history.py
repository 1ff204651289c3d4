"""/bench/history and /bench/stats: asks newest first (panels and route turns), one ask whole, calls per day."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import stats
from ..core.blind import still_blind
from ..errors import BadRequest, NotFound
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store.history import VERDICT_FILTERS, History, read_cursor
from .onboard import whole_number
from .parts import Records

if TYPE_CHECKING:
    from ..bench import Bench


def cursor(q: dict, name: str) -> tuple | None:
    if not q.get(name):
        return None
    found = read_cursor(q[name])
    if found is None:
        raise BadRequest(f"{name} must be a cursor from a page's `next` or `newer`, not {q[name][:80]!r}.",
                         "Page on with the `next` (older) or `newer` value of the page you have.")
    return found


def history_page(bench: Records, q: dict) -> dict:
    """One page of asks from the query's filters and cursor (every value a string, as a URL gives it)."""
    verdict = q.get("verdict") or None
    if verdict and verdict not in VERDICT_FILTERS:
        raise BadRequest(f"verdict must be one of: {', '.join(VERDICT_FILTERS)}.")
    if "page" in q:
        raise BadRequest("Pages are cursors: there is no page number.",
                         "Ask for older asks with before=<the page's `next`>, newer ones with after=<its `newer`>.")
    filters = {"collection": q.get("collection"), "model": q.get("model"), "status": q.get("status"),
               "verdict": verdict}
    per_page = whole_number(q.get("per_page", 25), "per_page", 1, 200)
    before, after = cursor(q, "before"), cursor(q, "after")
    if before and after:
        raise BadRequest("Give before or after, not both.")
    d = History(bench.db).page(filters, per_page, before, after)
    d["filters"] = {k: v for k, v in filters.items() if v}
    return d


def list_history(req: Request, bench: Records) -> Response:
    return Response.json(history_page(bench, req.query))


def history_item(bench: Records, ident: str) -> dict:
    """One ask whole; 404 for an id that is none."""
    item = History(bench.db).item(ident)
    if item is None:
        raise NotFound(f"No panel or route turn {ident!r}.", "GET /bench/history lists them.")
    return still_blind(item)   # until a judgement shows them


def get_history(req: Request, bench: Records) -> Response:
    return Response.json(history_item(bench, req.params["id"]))


def set_aside(req: Request, bench: Records) -> Response:
    """A panel that was only a test set aside (its answers no longer wait for a verdict), or brought back."""
    body = req.json()
    aside = body.get("aside", True)
    if not isinstance(aside, bool):
        raise BadRequest("aside must be true (set the ask aside) or false (bring it back).")
    if not History(bench.db).set_aside(req.params["id"], aside):
        raise NotFound(f"No panel {req.params['id']!r}.", "GET /bench/history lists them (a route turn cannot be "
                       "set aside: it never waits for a verdict).")
    return Response.json({"id": req.params["id"], "set_aside": aside})


def daily_view(bench: Records, q: dict) -> dict:
    """Calls per day for `days` (default 30), of one model or collection when the query names one."""
    days = whole_number(q.get("days", 30), "days", 1, 366)
    model, collection = q.get("model") or None, q.get("collection") or None
    return {"days": stats.daily(bench.db, days, model, collection), "model": model, "collection": collection}


def daily(req: Request, bench: Records) -> Response:
    return Response.json(daily_view(bench, req.query))


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/history", list_history, "bench", ADMIN, doc=op(
        "Asks, newest first: panels and route turns, a page at a time (cursors: before, after).",
        query={"collection": STRING, "model": STRING, "status": STRING, "verdict": STRING,
               "before": STRING, "after": STRING, "per_page": {"type": "integer"}},
        ok=obj(("items", "total", "per_page", "next"), items={"type": "array"}, total={"type": "integer"},
               next={"type": ["string", "null"]}))),
    Route("GET", "/bench/history/{id}", get_history, "bench", ADMIN, doc=op(
        "One ask whole: a panel with its seats and merge, or a route turn with its shadow seats.")),
    Route("POST", "/bench/history/{id}/aside", set_aside, "bench", ADMIN, doc=op(
        "Set a panel aside as only a test (its answers stop waiting for a verdict), or bring it back.",
        body=obj((), aside={"type": "boolean"}), ok=obj(("id", "set_aside")))),
    Route("GET", "/bench/stats/daily", daily, "bench", ADMIN, doc=op(
        "Calls per day (the service's local days, oldest first), with their verdicts.",
        query={"days": {"type": "integer"}, "model": STRING, "collection": STRING},
        ok=obj(("days",), days={"type": "array"}))),
]
