"""What is running and where: /healthz for anyone, /bench/status for the CLI and the dashboard."""
from __future__ import annotations

import time

from .. import catalog
from ..errors import ConfigError
from ..server.context import Context
from ..server.messages import Request, Response


def healthz(req: Request, ctx: Context) -> Response:
    return Response.json({"status": "ok", "version": ctx.version})


def head_root(req: Request, ctx: Context) -> Response:
    """Claude Code warms its connection with HEAD /; any quick answer will do."""
    return Response(200, b"", {"Content-Type": "text/plain"})


def summary(ctx: Context) -> dict:
    cfg = ctx.config
    problems = cfg.check_all()
    counts = {}
    for name, key in (("endpoints.json", "endpoints"), ("models.json", "models"),
                      ("collections.json", "collections")):
        try:
            counts[key] = len(cfg.view(name).get(key) or {})
        except Exception:
            counts[key] = None
    return {
        "service": "benchwarmers",
        "version": ctx.version,
        "role": ctx.role,
        "url": ctx.url,
        "bind": f"{ctx.host}:{ctx.port}",
        "data_folder": str(ctx.home),
        "admin_token_set": bool(ctx.admin_token),
        "uptime_seconds": round(time.time() - ctx.started, 1),
        "counts": counts,
        "config_problems": problems,
        "held": held(ctx),
    }


def held(ctx: Context) -> list:
    """Free models that turned paid, waiting for the user to confirm (never blocks the status answer)."""
    try:
        return catalog.of(ctx).holds()
    except ConfigError:    # models.json broken by hand: config_problems says where; status still answers
        return []


def status(req: Request, ctx: Context) -> Response:
    return Response.json(summary(ctx))
