"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record, the catalog,
the suite, the scheduler and its jobs."""
from . import calls, catalog, collections, endpoints, keys, models, scheduler, suite

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                *catalog.ROUTES, *suite.ROUTES, *scheduler.ROUTES]
