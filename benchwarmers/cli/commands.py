"""Every sub-command module, in the order --help lists them."""
from . import (ask, catalog, collection, endpoint, jobs, key, mcp, models, onboard, serve, settings, status, suite,
               verdicts)

MODULES = [serve, status, ask, verdicts, collection, models, onboard, catalog, suite, endpoint, key, settings, jobs, mcp]
