"""What is running and where: /healthz for anyone, /bench/status for the CLI and the dashboard."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from ..catalog import Catalog
from ..core.collection import Collections
from ..errors import ConfigError
from ..roster.registry import Registry
from ..server.gatewaykeys import enforcement
from ..server.messages import Request, Response
from ..store import Config, Database
from .parts import EffectiveSettings


class StatusParts(EffectiveSettings, Protocol):
    """The server's own facts, the data folder, and what is on the bench."""
    admin_token: str | None
    catalog: Catalog
    collections: Collections
    config: Config
    db: Database
    home: Path
    host: str
    port: int
    registry: Registry
    role: str
    started: float
    version: str

    @property
    def url(self) -> str: ...


def healthz(req: Request, bench: StatusParts) -> Response:
    """200 while the service can keep its records; 503 naming why while it cannot (a full disk)."""
    store = bench.db.health()
    if store["ok"]:
        return Response.json({"status": "ok", "version": bench.version, "store": store})
    return Response.json({"status": "failing", "version": bench.version, "store": store}, 503)


def head_root(req: Request, bench: object) -> Response:
    """Claude Code warms its connection with HEAD /; any quick answer will do."""
    return Response(200, b"", {"Content-Type": "text/plain"})


def summary(bench: StatusParts) -> dict:
    problems = bench.config.check_all()
    counts: dict[str, int | None] = {}
    for key, read in (("endpoints", bench.registry.endpoints), ("models", bench.registry.models),
                      ("collections", bench.collections.all)):
        try:
            counts[key] = len(read())
        except ConfigError:   # a file is broken by hand: config_problems says where
            counts[key] = None
    return {
        "service": "benchwarmers",
        "version": bench.version,
        "role": bench.role,
        "url": bench.url,
        "bind": f"{bench.host}:{bench.port}",
        "data_folder": str(bench.home),
        "admin_token_set": bool(bench.admin_token),
        "gateway_keys": enforcement(bench.admin_token, bench.settings()),
        "uptime_seconds": round(time.time() - bench.started, 1),
        "counts": counts,
        "config_problems": problems,
        "store": bench.db.health(),
        "held": held(bench),
    }


def held(bench: StatusParts) -> list:
    """Free models that turned paid, waiting for the user to confirm (never blocks the status answer)."""
    try:
        return bench.catalog.holds()
    except ConfigError:    # models.json broken by hand: config_problems says where; status still answers
        return []


def status(req: Request, bench: StatusParts) -> Response:
    return Response.json(summary(bench))
