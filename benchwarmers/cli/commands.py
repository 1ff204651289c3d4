"""Every sub-command module, in the order --help lists them."""
from . import ask, catalog, collection, endpoint, key, mcp, models, serve, status

MODULES = [serve, status, ask, collection, models, catalog, endpoint, key, mcp]
