"""The admin API under /bench/: endpoints and provider sign-in, models, the onboarding queue, collections, keys,
calls, verdicts and the record, the history of asks, settings, the catalog, the suite, the scheduler and its jobs."""
from . import (calls, catalog, collections, connect, endpoints, history, keys, models, onboard, scheduler, settings,
               suite)

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *connect.ROUTES,
                *models.ROUTES, *onboard.ROUTES, *history.ROUTES, *settings.ROUTES, *catalog.ROUTES, *suite.ROUTES,
                *scheduler.ROUTES]
