"""/bench/keys: create (the secret is shown once), list and revoke gateway keys."""
from __future__ import annotations

from ..core.gatewaykeys import gateway_keys
from ..server.context import Context
from ..server.messages import Request, Response
from ..server.routes import ADMIN, Route




def create_key(req: Request, ctx: Context) -> Response:
    body = req.json()
    collections = body.get("collections")
    if isinstance(collections, str):
        collections = [c.strip() for c in collections.split(",") if c.strip()]
    key, secret = gateway_keys(ctx).create(body.get("name"), collections, body.get("rpm"))
    return Response.json({**key.to_dict(), "key": secret,
                          "note": "Shown once: store it now. Only its hash is kept."}, status=201)


def list_keys(req: Request, ctx: Context) -> Response:
    return Response.json({"keys": [k.to_dict() for k in gateway_keys(ctx).list()]})


def revoke_key(req: Request, ctx: Context) -> Response:
    return Response.json(gateway_keys(ctx).revoke(req.params["name"]).to_dict())


ROUTES = [
    Route("POST", "/bench/keys", create_key, "bench", ADMIN),
    Route("GET", "/bench/keys", list_keys, "bench", ADMIN),
    Route("DELETE", "/bench/keys/{name}", revoke_key, "bench", ADMIN),
]
