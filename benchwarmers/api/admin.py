"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record and the catalog."""
from . import calls, catalog, collections, endpoints, keys, models

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                 *catalog.ROUTES]
