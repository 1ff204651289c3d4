"""/bench/panels/{id}/best: a panel's best answer in one judgement (or none good), withdrawn in one."""
from __future__ import annotations

from typing import Protocol

from ..core.bestpick import Best, check_seat
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import GATEWAY, Route
from .points import PointsParts, panel_reach


class BestParts(PointsParts, Protocol):
    best: Best


SEAT = {"type": ["integer", "null"]}
BODY = obj(("seat",), False, seat=SEAT)
PICKED = obj(("panel", "seat", "comparisons", "proposals"), panel=STRING, seat=SEAT, blind={"type": "boolean"},
             comparisons={"type": "array"}, proposals={"type": "array"})


def _panel(req: Request, bench: BestParts) -> str:
    panel = req.params["id"]
    panel_reach(req, bench, panel, f"panel {panel!r}")
    return panel


def post_best(req: Request, bench: BestParts) -> Response:
    seat = check_seat(req.json())
    return Response.json(bench.best.pick(_panel(req, bench), seat))


def delete_best(req: Request, bench: BestParts) -> Response:
    return Response.json(bench.best.withdraw(_panel(req, bench)))


def get_best(req: Request, bench: BestParts) -> Response:
    return Response.json(bench.best.of_panel(_panel(req, bench)))


ROUTES = [
    Route("GET", "/bench/panels/{id}/best", get_best, "bench", GATEWAY, doc=op(
        "A panel's best pick (null: none yet; its seat null: no answer was good) and the verdicts it proposes.",
        ok=obj(("panel", "best", "proposals"), panel=STRING, best={"type": ["object", "null"]},
               proposals={"type": "array"}))),
    Route("POST", "/bench/panels/{id}/best", post_best, "bench", GATEWAY, doc=op(
        "Pick a panel's best answer: the chosen seat beat each other seat that answered (the ratings' comparisons); "
        "seat null says no answer was good. A pick replaces the one before; on a blind panel it shows who sat where.",
        body=BODY, ok=PICKED)),
    Route("DELETE", "/bench/panels/{id}/best", delete_best, "bench", GATEWAY, doc=op(
        "Withdraw a panel's best pick: its comparisons go with it.",
        ok=obj(("panel", "withdrawn"), panel=STRING, withdrawn={"type": "boolean"}))),
]
