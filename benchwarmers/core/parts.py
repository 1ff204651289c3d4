"""The core's parts, built once per service and shared: registry, collections, record, seating, panel."""
from __future__ import annotations

from .. import catalog
from ..registry import Registry
from ..store.calls import Calls
from ..store.verdicts import Verdicts
from .collections import Collections
from .panel import Panel
from .record import Record
from .seating import Resting, Seating


class Parts:
    def __init__(self, ctx):
        self.ctx = ctx
        self.registry: Registry = ctx.service("registry", lambda c: Registry(c.config))
        self.collections = Collections(ctx.config, self.registry)
        self.calls = Calls(ctx.db)
        self.verdicts = Verdicts(ctx.db)
        self.resting = Resting(ctx.db, self.registry.transport.limits)
        self.catalog = catalog.of(ctx)
        self.seating = Seating(self.registry, self.calls.last_asked(), self.resting, self.catalog)
        self.record = Record(ctx.db, ctx.settings["confidently_wrong_ratio"])
        self.panel = Panel(self, ctx.settings["panel_workers"])

    def settings(self) -> dict:
        return self.ctx.settings

    def close(self) -> None:
        self.panel.close()


def parts(ctx) -> Parts:
    return ctx.service("parts", Parts)
