"""The catalog: what each model can do and costs (models.dev, OpenRouter, FreeLLMAPI, the user), and Discover.

    catalog.of(ctx)                  the service's one Catalog: facts(model), sourced(model), roles(model),
                                     unfit(model, purpose), held(alias), holds(), confirm(alias), status()
    catalog.refresh(ctx)             fetch every source now (also what a periodic refresh would call);
                                     a fetch that fails changes nothing
    catalog.price(ctx, model)        (USD in, USD out per million tokens, source), None where unknown
"""
from __future__ import annotations

from ..registry import Registry
from .core import Catalog


def of(ctx) -> Catalog:
    """The service's one Catalog, over the service's one Registry."""
    return ctx.service("catalog", lambda c: Catalog(c.home, c.config,
                                                    c.service("registry", lambda c2: Registry(c2.config))))


def refresh(ctx) -> dict:
    """{"sources": {name: {"ok", "models" | "error", "kept"}}, "held": [...]}; raises only Conflict when a
    refresh is already running."""
    return of(ctx).refresh()


def price(ctx, model) -> tuple[float | None, float | None, str | None]:
    return of(ctx).price(model)


__all__ = ["Catalog", "of", "price", "refresh"]
