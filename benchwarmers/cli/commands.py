"""Every sub-command module, in the order --help lists them."""
from . import ask, catalog, collection, endpoint, jobs, key, mcp, models, serve, settings, status

MODULES = [serve, status, ask, collection, models, catalog, endpoint, key, settings, jobs, mcp]
