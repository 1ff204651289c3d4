"""Point a sign-in provider's fixed URLs at a fake for a block. It lives with the tests, so no route, setting or
environment variable of the service can reach it."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from benchwarmers.signin import vendors


@contextmanager
def pointed_at(provider_id: str, **urls):
    """The provider's base_url, site or device_url, as `connect.get` and the sign-in flows read them, swapped for
    the block and put back after it."""
    old = vendors._table[provider_id]
    vendors._table[provider_id] = replace(old, **urls)
    try:
        yield vendors._table[provider_id]
    finally:
        vendors._table[provider_id] = old
