"""POST /bench/panels/{id}/stop and /retry: one seat of a panel the service holds (its newest asks) stopped, or asked
again (core/again.py). The Ask page's column controls do the same through /ask/stop and /ask/retry."""
from __future__ import annotations

from typing import Protocol

from ..canonical import STOPPED
from ..core import again
from ..core.blind import Unnamed
from ..core.panel import Panel
from ..core.panelrun import PanelRun
from ..errors import BadRequest, NotFound
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import GATEWAY, Route
from .parts import EffectiveSettings
from .points import PointsParts


class PanelSeatParts(PointsParts, EffectiveSettings, Protocol):
    """The panel (its held asks), and the record's panels (an id it no longer holds)."""
    panel: Panel


def seat_number(body) -> int:
    if not isinstance(body, dict) or set(body) - {"seat"}:
        raise BadRequest("The body must be a JSON object naming one seat: {\"seat\": 2}.")
    number = body.get("seat")
    if isinstance(number, bool) or not isinstance(number, int):
        raise BadRequest("seat must be the seat's number (1, 2, ...), as its heading and bench.seats give it.")
    return number


def held_run(req: Request, bench: PanelSeatParts, panel: str) -> PanelRun:
    """The panel's run, within the caller's reach: a key sees its own collections' panels only (any other is
    answered as missing, as in /bench/panels/{id}/points)."""
    run = again.held(bench.panel.recent, panel, bench.points.store.panel_of(panel) is not None)
    key = req.caller
    if key is not None and not (key.allows(run.collection_name) if run.collection_name else "*" in key.collections):
        raise NotFound(f"No panel {panel!r}.", "Panel ids come in the reply's `bench.panel` field (and X-Bench-Panel).")
    return run


def stop_seat(req: Request, bench: PanelSeatParts) -> Response:
    number = seat_number(req.json())
    return stopped(held_run(req, bench, req.params["id"]), number)


def stopped(run: PanelRun, number: int) -> Response:
    """Seat `number` of `run` hung up, answered as this route and the Ask page's Stop both answer it."""
    seat = again.stop(run, number)
    return Response.json({"panel": run.id, "seat": number, "call": seat.call, "status": STOPPED})


def retry_seat(req: Request, bench: PanelSeatParts) -> Response:
    """The seat asked again, answered once it is done, with its record kept (its call id names it)."""
    number = seat_number(req.json())
    run = held_run(req, bench, req.params["id"])
    seats = sent_again(bench, run, number, live=False)
    retried, seat = seats.retried, None
    for seat in bench.panel.finished(seats, gone=req.gone):
        pass
    bench.panel.settle(seats)
    hidden = unseen_by(bench, run)
    shown = seat.to_dict() if seat else None
    return Response.json({"panel": run.id, "retry_of": retried,
                          "seat": hidden.seat(shown) if hidden and shown else shown})


def unseen_by(bench: PanelSeatParts, run: PanelRun) -> Unnamed | None:
    """What hides the models' names of a blind panel not judged yet (None: not blind, or judged: it names them)."""
    found = bench.points.store.panel_of(run.id)
    return run.hidden if run.hidden and (found is None or found["hidden"]) else None


def sent_again(bench: PanelSeatParts, run: PanelRun, number, live: bool) -> PanelRun:
    """The retried seat's run, its call sent."""
    seats, sp, seat = again.retry(run, number, bench.settings()["seat_timeout"], bench.panel.registry.endpoints(),
                                  live)
    bench.panel.again(seats, sp, seat)
    return seats


SEAT_BODY = obj(("seat",), False, seat={"type": "integer"})
ROUTES = [
    Route("POST", "/bench/panels/{id}/stop", stop_seat, "bench", GATEWAY, doc=op(
        "Stop one seat of a panel the service holds (its newest asks) while it is out: its call is hung up upstream "
        "and recorded as stopped.", body=SEAT_BODY,
        ok=obj(("panel", "seat", "call", "status"), panel=STRING, seat={"type": "integer"}, call=STRING,
               status=STRING))),
    Route("POST", "/bench/panels/{id}/retry", retry_seat, "bench", GATEWAY, doc=op(
        "Ask one seat of a panel the service holds again: the same model and ask, a new call that replaces the "
        "seat's answer in the panel's record (it names the call it replaces); answered once it is done.",
        body=SEAT_BODY, ok=obj(("panel", "retry_of", "seat"), panel=STRING, retry_of=STRING,
                               seat={"type": ["object", "null"]}))),
]
