"""Every sub-command module, in the order --help lists them."""
from . import (ask, best, catalog, collection, endpoint, export, jobs, key, limits, mcp, models, onboard, points,
               serve, settings, status, store, suite, usage, verdicts)

MODULES = [serve, status, ask, points, best, verdicts, export, collection, models, onboard, catalog, suite, endpoint,
           key, limits, usage, store, settings, jobs, mcp]
