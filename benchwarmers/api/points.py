"""/bench/panels/{id}/points and /bench/points/{id}/verdict: a panel's points, and judging one (or withdrawing it)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.pointverdicts import PointVerdicts
from ..errors import BadRequest, NotFound
from ..names import NOTE_MOST, check_text
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import GATEWAY, Route

if TYPE_CHECKING:
    from ..bench import Bench


class PointsParts(Protocol):
    points: PointVerdicts


POINT = obj(("id", "claim", "assert", "deny", "silent", "quotes"), id=STRING, claim=STRING,
            **{"assert": {"type": "array"}, "deny": {"type": "array"}, "silent": {"type": "array"},
               "quotes": {"type": "object"}})
PANEL_POINTS = obj(("panel", "points", "proposals"), panel=STRING, info={"type": ["object", "null"]},
                   points={"type": "array", "items": POINT}, proposals={"type": "array"})
JUDGED = obj(("point", "true", "claims", "proposals"), point=STRING, claims={"type": "array"},
             proposals={"type": "array"}, **{"true": {"type": ["boolean", "null"]}})
BODY = obj(("true",), False, note={"type": ["string", "null"]}, **{"true": {"type": ["boolean", "null"]}})


def _reach(req: Request, bench: PointsParts, panel: str, what: str) -> None:
    """A key sees the points of its collections' panels (a panel of no collection only with '*'); any other is
    answered as missing, as a call outside its reach is."""
    found = bench.points.store.panel_of(panel)
    key = req.caller
    if found is not None and key is not None:
        col = found["collection"]
        if not (key.allows(col) if col else "*" in key.collections):
            found = None
    if found is None:
        raise NotFound(f"No {what}.", "Panel ids come in the reply's `bench.panel` field (and X-Bench-Panel).")


def get_panel_points(req: Request, bench: PointsParts) -> Response:
    panel = req.params["id"]
    _reach(req, bench, panel, f"panel {panel!r}")
    return Response.json(bench.points.of_panel(panel))


def _point_panel(req: Request, bench: PointsParts) -> str:
    point = req.params["id"]
    found = bench.points.store.get(point)
    if found is None:
        raise NotFound(f"No point {point!r}.", "Point ids come in each point's `id` field (bench.points).")
    _reach(req, bench, found["panel"], f"point {point!r}")
    return point


def post_point_verdict(req: Request, bench: PointsParts) -> Response:
    body = req.json()
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object: {\"true\": true or false, \"note\": ...}.")
    extra = sorted(set(body) - {"true", "note"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "A point's verdict has true and note.")
    if "true" not in body or not (body["true"] is None or isinstance(body["true"], bool)):
        raise BadRequest("`true` must be true (the claim holds), false (it does not) or null (can't tell).")
    note = check_text(body.get("note"), "note", NOTE_MOST)
    point = _point_panel(req, bench)
    return Response.json(bench.points.judge(point, body["true"], note))


def delete_point_verdict(req: Request, bench: PointsParts) -> Response:
    return Response.json(bench.points.withdraw(_point_panel(req, bench)))


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/panels/{id}/points", get_panel_points, "bench", GATEWAY, doc=op(
        "A panel's points (where its seats disagree), each with its verdict, and the useful / not-useful its judged "
        "points propose per seat.", ok=PANEL_POINTS)),
    Route("POST", "/bench/points/{id}/verdict", post_point_verdict, "bench", GATEWAY, doc=op(
        "Judge a point once: every seat that asserted or denied it gains a real or a false claim (the latest "
        "verdict counts).", body=BODY, ok=JUDGED)),
    Route("DELETE", "/bench/points/{id}/verdict", delete_point_verdict, "bench", GATEWAY, doc=op(
        "Withdraw a point's verdict: the claims it gave go with it.",
        ok=obj(("point", "withdrawn"), point=STRING, withdrawn={"type": "boolean"}))),
]
