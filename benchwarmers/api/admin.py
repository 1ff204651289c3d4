"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record, the catalog and
the suite."""
from . import calls, catalog, collections, endpoints, keys, models, suite

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                *catalog.ROUTES, *suite.ROUTES]
