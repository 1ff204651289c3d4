"""/bench/keys: create (the secret is shown once), list and revoke gateway keys."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.collection import Collections
from ..errors import BadRequest
from ..roster.registry import suggest
from ..server.gatewaykeys import GatewayKeys, enforcement
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from .parts import EffectiveSettings

if TYPE_CHECKING:
    from ..bench import Bench


class KeysParts(EffectiveSettings, Protocol):
    """Gateway keys, whether they are enforced (the admin token, a setting), the collections a key may name."""
    admin_token: str | None
    collections: Collections
    gateway_keys: GatewayKeys


KEY = obj(("name", "collections", "created"), name=STRING, collections={"type": "array", "items": STRING},
          rpm={"type": ["integer", "null"]}, created={"type": "number"}, revoked={"type": ["number", "null"]},
          prefix=STRING)


def create_key(req: Request, bench: KeysParts) -> Response:
    body = req.json()
    collections = body.get("collections")
    if isinstance(collections, str):
        collections = [c.strip() for c in collections.split(",") if c.strip()]
    check_collections(collections, bench)
    key, secret = bench.gateway_keys.create(body.get("name"), collections, body.get("rpm"))
    enforced = enforcement(bench.admin_token, bench.settings())
    return Response.json({**key.to_dict(), "key": secret, "note": "Shown once: store it now. Only its hash is kept.",
                          "enforced": enforced["enforced"], "enforcement": enforced["note"]}, status=201)


def check_collections(collections, bench: KeysParts) -> None:
    """A key reaches collections that exist (or '*'): a typo would make a key that reaches nothing."""
    if not isinstance(collections, list):
        return   # the key store says what a key needs
    known = bench.collections.all()
    for name in collections:
        if isinstance(name, str) and name != "*" and name not in known:
            raise BadRequest(f"No collection named {name!r}: a key for it would reach nothing.",
                             suggest(name, known, "collection"))


def keys_view(bench: KeysParts) -> dict:
    """Every gateway key, revoked ones too: its name, prefix, reach and limit (never the key)."""
    return {"keys": [k.to_dict() for k in bench.gateway_keys.list()]}


def list_keys(req: Request, bench: KeysParts) -> Response:
    return Response.json(keys_view(bench))


def revoke_key(req: Request, bench: KeysParts) -> Response:
    return Response.json(bench.gateway_keys.revoke(req.params["name"]).to_dict())


ROUTES: list[Route[Bench]] = [
    Route("POST", "/bench/keys", create_key, "bench", ADMIN, doc=op(
        "Make a gateway key; its secret is in `key`, shown this once.", status=201,
        body=obj(("name", "collections"), name=STRING, collections={"type": ["array", "string"], "items": STRING},
                 rpm={"type": ["integer", "null"]}),
        ok={**KEY, "required": ["name", "collections", "key"]})),
    Route("GET", "/bench/keys", list_keys, "bench", ADMIN, doc=op(
        "Every gateway key (never a secret).", ok=obj(("keys",), keys={"type": "array", "items": KEY}))),
    # {name:path}: a key made before names had one rule may hold a '/', and must still be revocable
    Route("DELETE", "/bench/keys/{name:path}", revoke_key, "bench", ADMIN, doc=op("Revoke a key.", ok=KEY)),
]
