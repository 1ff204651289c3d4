"""The admin API under /bench/: endpoints, models, collections, keys, calls, verdicts, the record, the scheduler
and its jobs."""
from . import calls, collections, endpoints, keys, models, scheduler

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                *scheduler.ROUTES]
