"""Every sub-command module, in the order --help lists them."""
from . import ask, collection, endpoint, key, mcp, models, serve, status, suite

MODULES = [serve, status, ask, collection, models, suite, endpoint, key, mcp]
