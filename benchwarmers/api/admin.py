"""The admin API under /bench/: endpoints and provider sign-in, models, the onboarding queue, collections, keys,
calls, verdicts, points and the record, the history of asks, settings, the catalog, the suite, the scheduler and
its jobs, rate limits and the usage ledger, the record's store."""
from . import (calls, catalog, collection, connect, endpoints, estimate, history, keys, limits, models, onboard,
               panels, panelseats, points, scheduler, settings, store, suite, suitefetch, usage)

ROUTES: list = [*collection.ROUTES, *calls.ROUTES, *points.ROUTES, *panelseats.ROUTES, *keys.ROUTES,
                *endpoints.ROUTES, *connect.ROUTES, *models.ROUTES, *onboard.ROUTES, *history.ROUTES, *panels.ROUTES,
                *settings.ROUTES, *catalog.ROUTES, *suite.ROUTES, *suitefetch.ROUTES, *scheduler.ROUTES,
                *limits.ROUTES, *estimate.ROUTES, *usage.ROUTES, *store.ROUTES]
