"""Every sub-command module, in the order --help lists them."""
from . import ask, catalog, collection, endpoint, key, mcp, models, serve, status, suite

MODULES = [serve, status, ask, collection, models, catalog, suite, endpoint, key, mcp]
