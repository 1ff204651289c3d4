"""/bench/keys: create (the secret is shown once), list and revoke gateway keys."""
from __future__ import annotations

from ..server.bench import Bench
from ..server.messages import Request, Response
from ..server.routes import ADMIN, Route




def create_key(req: Request, bench: Bench) -> Response:
    body = req.json()
    collections = body.get("collections")
    if isinstance(collections, str):
        collections = [c.strip() for c in collections.split(",") if c.strip()]
    key, secret = bench.gateway_keys.create(body.get("name"), collections, body.get("rpm"))
    return Response.json({**key.to_dict(), "key": secret,
                          "note": "Shown once: store it now. Only its hash is kept."}, status=201)


def list_keys(req: Request, bench: Bench) -> Response:
    return Response.json({"keys": [k.to_dict() for k in bench.gateway_keys.list()]})


def revoke_key(req: Request, bench: Bench) -> Response:
    return Response.json(bench.gateway_keys.revoke(req.params["name"]).to_dict())


ROUTES = [
    Route("POST", "/bench/keys", create_key, "bench", ADMIN),
    Route("GET", "/bench/keys", list_keys, "bench", ADMIN),
    Route("DELETE", "/bench/keys/{name}", revoke_key, "bench", ADMIN),
]
