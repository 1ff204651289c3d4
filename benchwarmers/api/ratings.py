"""/bench/rankings: the models rated from best picks (Bradley-Terry, 95% intervals), per collection or overall, plain
and length-controlled; `blind=1` reads only the picks given before the models were shown."""
from __future__ import annotations

from typing import Protocol

from ..core.ratings import Ratings
from ..errors import BadRequest
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import GATEWAY, Route


class RatingsParts(Protocol):
    ratings: Ratings


RATED = obj(("model", "rating", "interval", "comparisons"), model=STRING, rating={"type": "number"},
            interval={"type": "array", "items": {"type": "number"}}, comparisons={"type": "integer"})
ANSWER = obj(("models", "length_controlled"), collection={"type": ["string", "null"]}, blind={"type": "boolean"},
             models={"type": "array", "items": RATED}, length_controlled={"type": "object"})


def scopes_for(req: Request, bench: RatingsParts, collection: str | None) -> tuple | None:
    """The collections a read covers: one, every one (None), or a limited key's own."""
    if collection:
        if req.caller:
            req.caller.check_collection(collection)
        return (collection,)
    if req.caller and "*" not in req.caller.collections:
        return tuple(sorted(req.caller.collections))
    return None


def flag(req: Request, name: str) -> bool:
    value = req.query.get(name, "0").lower()
    if value not in ("0", "1", "true", "false", ""):
        raise BadRequest(f"{name} must be 1 or 0.")
    return value in ("1", "true")


def rankings_view(bench: RatingsParts, scopes: tuple | None, blind: bool) -> dict:
    """The plain and the length-controlled ratings of these scopes, as the API and the pages show them."""
    plain, styled = bench.ratings.both(scopes, blind)
    return {"models": plain.to_dict()["models"], "length_controlled": styled.to_dict(), "blind": blind}


def get_rankings(req: Request, bench: RatingsParts) -> Response:
    collection = req.query.get("collection") or None
    scopes = scopes_for(req, bench, collection)
    return Response.json({"collection": collection, **rankings_view(bench, scopes, flag(req, "blind"))})


ROUTES = [
    Route("GET", "/bench/rankings", get_rankings, "bench", GATEWAY, doc=op(
        "The models rated from best picks: Bradley-Terry on the comparisons (the chosen seat beat each other that "
        "answered), each with a 95% interval; `length_controlled` with answer length as a covariate. One "
        "collection, or every one; blind=1: only picks given before the models were shown.",
        query={"collection": STRING, "blind": STRING}, ok=ANSWER)),
]
