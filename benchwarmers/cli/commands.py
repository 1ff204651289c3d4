"""Every sub-command module, in the order --help lists them."""
from . import ask, collection, endpoint, jobs, key, mcp, models, serve, settings, status

MODULES = [serve, status, ask, collection, models, endpoint, key, settings, jobs, mcp]
