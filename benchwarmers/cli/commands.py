"""Every sub-command module, in the order --help lists them."""
from . import ask, catalog, collection, endpoint, jobs, key, mcp, models, serve, settings, status, suite

MODULES = [serve, status, ask, collection, models, catalog, suite, endpoint, key, settings, jobs, mcp]
