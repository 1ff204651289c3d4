"""The admin API under /bench/: endpoints, models, the onboarding queue, collections, keys, calls, verdicts and
the record, the history of asks, settings, the catalog and the suite."""
from . import calls, catalog, collections, endpoints, history, keys, models, onboard, settings, suite

ROUTES: list = [*collections.ROUTES, *calls.ROUTES, *keys.ROUTES, *endpoints.ROUTES, *models.ROUTES,
                *onboard.ROUTES, *history.ROUTES, *settings.ROUTES, *catalog.ROUTES, *suite.ROUTES]
