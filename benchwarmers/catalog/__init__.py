"""The catalog: what each model can do and costs (models.dev, OpenRouter, FreeLLMAPI, the user), and Discover.

The service builds one Catalog at start-up (the Bench's `catalog`), over the Bench's one Registry:
facts(model), sourced(model), roles(model), unfit(model, purpose), price(model), held(alias), holds(),
confirm(alias), status(), and refresh(), which fetches every source now (a fetch that fails changes nothing).
"""
from __future__ import annotations

from .core import Catalog

__all__ = ["Catalog"]
