"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts and the record."""
from . import calls, collections, endpoints, keys, models

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES]
