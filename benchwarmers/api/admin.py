"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record and the suite."""
from . import calls, collections, endpoints, keys, models, suite

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES, *suite.ROUTES]
