"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record, the catalog,
the scheduler and its jobs."""
from . import calls, catalog, collections, endpoints, keys, models, scheduler

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                *catalog.ROUTES, *scheduler.ROUTES]
