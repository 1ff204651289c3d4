"""Tokens a sign-in gave that expire, renewed before they do.

When each signed-in endpoint's token expires, and whether its renewal was refused, is kept in the data folder's
signins.json (no token in it); the token itself is the endpoint's key in keys.json, its refresh token beside it
as `<endpoint>.refresh`. The Registry asks `Renewer.fresh` before it reads an endpoint's key: a token due within
MARGIN seconds is renewed under a file lock per endpoint, and the lock's holder reads signins.json again first,
so two processes on one data folder never both spend the same refresh token. A refused renewal (or an expired
token with no refresh token) marks the endpoint "sign in again": seating passes its models over with that
reason, and the endpoint's flag says so, until the user signs in again.
"""
from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TypeGuard

from .. import keys
from ..errors import BenchError, SigninRefused
from ..redaction import redact
from ..roster import healthrecord
from ..store.filelock import FileLock
from . import appflow, ownapps, vendors

log = logging.getLogger("benchwarmers.signin.renewal")
FILE = "signins.json"
MARGIN = 300.0        # seconds before expiry a token is renewed
RETRY = 30.0          # after a renewal that could not reach the provider, wait this long before the next try


def refresh_name(endpoint: str) -> str:
    return endpoint + keys.REFRESH


def entry(config, endpoint: str) -> dict | None:
    try:
        found = (config.view(FILE).get("endpoints") or {}).get(endpoint)
    except BenchError:        # a broken hand edit: no renewal until it is fixed (status names the file)
        return None
    return found if isinstance(found, dict) else None


def keep(config, endpoint: str, provider_id: str, grant: appflow.Grant) -> None:
    """What a sign-in (or a renewal) granted: the refresh token to keys.json, its expiry to signins.json."""
    if grant.refresh:
        keys.store(refresh_name(endpoint), grant.refresh)
    record = {"provider": provider_id, "expires": grant.expires, "refreshable": bool(grant.refresh),
              "renewed": time.time(), "refused": None}

    def change(d: dict) -> None:
        ends = d.setdefault("endpoints", {})
        if grant.expires is None and not grant.refresh:
            ends.pop(endpoint, None)        # a token that does not expire needs no looking after
        else:
            ends[endpoint] = record
    config.update(FILE, change)


def forget(config, endpoint: str) -> None:
    """The endpoint is gone (or got a pasted key): nothing of its sign-in is kept."""
    if entry(config, endpoint) is not None:
        config.update(FILE, lambda d: (d.get("endpoints") or {}).pop(endpoint, None))
    try:
        keys.delete(refresh_name(endpoint))
    except BenchError:
        pass


def view(config, endpoint: str) -> dict | None:
    """What the API shows of an endpoint's sign-in: its provider, expiry, renewal and refusal; never a token."""
    found = entry(config, endpoint)
    if not found:
        return None
    return {k: found.get(k) for k in ("provider", "expires", "refreshable", "renewed", "refused")}


class Renewer:
    """The Registry's hook before it reads a key (Registry.tokens): renews what is due, says what was refused."""

    def __init__(self, config, db, home: Path, clock=time.time):
        self.config, self.db, self.clock = config, db, clock
        self.locks = Path(home) / "locks"
        self._tried: dict[str, float] = {}     # endpoint -> when a renewal last failed to reach the provider

    def refused(self, endpoint: str) -> str | None:
        found = entry(self.config, endpoint)
        return found.get("refused") if found else None

    def fresh(self, endpoint: str) -> None:
        """Renew the endpoint's token if it expires within MARGIN (nothing to do for most endpoints: one read of
        signins.json, cached by the Config)."""
        found = entry(self.config, endpoint)
        if not self._due(found) or self.clock() - self._tried.get(endpoint, 0.0) < RETRY:
            return
        with FileLock(self.locks / f"renew-{endpoint}.lock"):
            found = entry(self.config, endpoint)      # another process may have renewed it while this one waited
            if self._due(found):
                self._renew(endpoint, found)

    def _due(self, found: dict | None) -> TypeGuard[dict]:
        expires = found.get("expires") if found else None
        return found is not None and isinstance(expires, (int, float)) and not found.get("refused") and \
            expires - self.clock() <= MARGIN

    def _renew(self, endpoint: str, found: dict) -> None:
        provider = vendors.get(str(found.get("provider")), ownapps.client_ids(self.config))
        token = keys.get(refresh_name(endpoint))[0]
        if provider is None or not provider.client_id or not provider.token_url or not token:
            if found["expires"] <= self.clock():
                self._refuse(endpoint, "its token expired and there is no refresh token (or no app) to renew it")
            return
        try:
            grant = appflow.refresh(provider, token, ownapps.client_secret(provider.id))
        except SigninRefused as err:
            self._refuse(endpoint, redact(err.message))
            return
        except BenchError as err:    # the provider did not answer: the token may still work; try again soon
            self._tried[endpoint] = self.clock()
            log.warning("renewing the sign-in of endpoint %s failed: %s", endpoint, redact(err.message))
            return
        keys.store(endpoint, grant.token)
        keep(self.config, endpoint, provider.id, grant)
        self._tried.pop(endpoint, None)
        log.info("renewed the sign-in of endpoint %s", endpoint)

    def _refuse(self, endpoint: str, why: str) -> None:
        self.config.update(FILE, lambda d: (d.setdefault("endpoints", {}).get(endpoint) or {}).__setitem__(
            "refused", f"sign in again: {why}"))
        healthrecord.flag(self.db, endpoint, healthrecord.SIGNIN_AGAIN, why)
        log.warning("the sign-in of endpoint %s needs renewing by hand: %s", endpoint, why)
