"""/bench/collections: list (gateway keys see theirs), save and delete collections."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..catalog import Catalog
from ..core.collection import Collections
from ..core.overview import overview
from ..core.rankings import Rankings
from ..core.refereepick import Picker
from ..roster.registry import Registry
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, GATEWAY, Route

if TYPE_CHECKING:
    from ..bench import Bench


class CollectionListParts(Protocol):
    """The collections, and the roster they seat models from."""
    collections: Collections
    registry: Registry


class CollectionParts(CollectionListParts, Protocol):
    catalog: Catalog
    rankings: Rankings
    referees: Picker


NAMES = {"type": ["array", "string"], "items": STRING}
COLLECTION = obj(("name", "members", "explore"), name=STRING, description=STRING, members={"type": "array"},
                 explore={"type": "integer"}, merge_model={"type": ["string", "null"]}, shadow={"type": "integer"},
                 purpose=STRING, referee={"type": ["string", "null"]}, points=STRING,
                 points_wait={"type": "number"})
POINT_MODES = {"type": "string", "enum": ["off", "contested", "all"]}
SAVE = obj(members=NAMES, add=NAMES, remove=NAMES, description=STRING, explore={"type": "integer"},
           merge_model={"type": ["string", "null"]}, shadow={"type": "integer"}, purpose=STRING,
           referee={"type": ["string", "null"]}, points=POINT_MODES, points_wait={"type": ["number", "null"]})


def view(col, models: dict) -> dict:
    """A collection as the API shows it, with its members that no panel seats: retired, or gone from the bench."""
    return {**col.public(), "retired": [m for m in col.members if m in models and not models[m].active],
            "gone": [m for m in col.members if m not in models]}


def collections_view(bench: CollectionListParts, key=None) -> dict:
    """The collections, by name; a gateway key (`key`) sees those it reaches."""
    models = bench.registry.models()
    return {"collections": [view(c, models) for name, c in sorted(bench.collections.all().items())
                            if key is None or key.allows(name)]}


def list_collections(req: Request, bench: CollectionParts) -> Response:
    return Response.json(collections_view(bench, req.caller))


def get_collection(req: Request, bench: CollectionParts) -> Response:
    name = req.params["name"]
    if req.caller:
        req.caller.check_collection(name)
    return Response.json(view(bench.collections.get(name), bench.registry.models()))


def overview_view(bench: CollectionParts, name: str) -> dict:
    """The collection with the calls one ask makes, what its members share, their record and suggestions, and who
    would referee its panels now (explore seats aside) with the referees passed over and why."""
    col = bench.collections.get(name)
    return {**overview(col, bench.registry.models(), bench.rankings.models(name), bench.rankings.models(),
                       bench.registry.transport.limits.snapshot(), bench.catalog),
            "referee_now": bench.referees.preview(col)}


def collection_overview(req: Request, bench: CollectionParts) -> Response:
    name = req.params["name"]
    if req.caller:
        req.caller.check_collection(name)
    return Response.json(overview_view(bench, name))


def save_collection(req: Request, bench: CollectionParts) -> Response:
    col = bench.collections.save(req.params["name"], req.json())
    return Response.json(col.public())


def delete_collection(req: Request, bench: CollectionParts) -> Response:
    bench.collections.delete(req.params["name"])
    return Response.json({"deleted": req.params["name"]})


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/collections", list_collections, "bench", GATEWAY, doc=op(
        "The collections (a gateway key sees those it reaches).",
        ok=obj(("collections",), collections={"type": "array", "items": COLLECTION}))),
    Route("GET", "/bench/collections/{name}", get_collection, "bench", GATEWAY, doc=op("One collection.",
                                                                                      ok=COLLECTION)),
    Route("GET", "/bench/collections/{name}/overview", collection_overview, "bench", GATEWAY, doc=op(
        "A collection with the calls one ask makes (its referee's included), what its members share, their record "
        "and suggestions, and who would referee its panels now.",
        ok=obj(("name", "seats"), name=STRING, seats=obj(("calls",))))),
    Route("PUT", "/bench/collections/{name}", save_collection, "bench", ADMIN, doc=op(
        "Create or change a collection: members replace, add and remove edit.", body=SAVE, ok=COLLECTION)),
    Route("POST", "/bench/collections/{name}", save_collection, "bench", ADMIN, doc=op(
        "The same as PUT.", body=SAVE, ok=COLLECTION)),
    Route("DELETE", "/bench/collections/{name}", delete_collection, "bench", ADMIN, doc=op(
        "Delete a collection.", ok=obj(("deleted",), deleted=STRING))),
]
