"""Sign-in with the user's own app: the OAuth authorization code with PKCE (RFC 6749, 7636; Hugging Face) and the
device flow (RFC 8628; GitHub), both form-encoded as those RFCs say, and the refresh of the tokens they grant.

A grant is the access token (the endpoint's key), the refresh token where the provider gives one, and when the
access token expires. Every token a provider returns goes through signin.key_from's rule (visible ASCII, at
most redaction.MAX_KEY characters) before anything keeps it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from ..errors import FaultKind, SigninRefused, UpstreamFailed
from ..redaction import remember
from . import flows
from .vendors import Vendor

BUSY = (408, 429)                   # a renewal answered so is tried again later, not taken as refused
MAX_LIFETIME = 10 * 365 * 86400     # an expires_in past this (or not a number) is taken as no expiry given
DEVICE_ENDED = {"expired_token": "the code expired before it was approved",
                "access_denied": "the sign-in was denied at the provider",
                "incorrect_device_code": "the provider does not know this code",
                "device_flow_disabled": "the app does not have the device flow enabled",
                "incorrect_client_credentials": "the provider does not know this client id",
                "unsupported_grant_type": "the provider refused the grant type"}


@dataclass
class Grant:
    token: str
    refresh: str | None = None
    expires: float | None = None      # epoch seconds; None: the provider gave no expiry


# ---- the authorization code with PKCE ---------------------------------------------------------------------

def authorize_url(provider: Vendor, flow: flows.Flow) -> str:
    """The provider's authorization page for this flow (its redirect is the callback the user registered)."""
    params = {"client_id": provider.client_id, "redirect_uri": flow.redirect, "response_type": "code",
              "state": flow.state, "code_challenge": flows.challenge(flow.verifier), "code_challenge_method": "S256"}
    if provider.scope:
        params["scope"] = provider.scope
    assert provider.authorize_url is not None    # an own app's entry names it
    return provider.authorize_url + "?" + urlencode(params)


def exchange(provider: Vendor, code: str, flow: flows.Flow, secret: str | None) -> Grant:
    """The grant for a code: the provider checks the verifier against the challenge and the redirect URL."""
    body = {"grant_type": "authorization_code", "code": code, "redirect_uri": flow.redirect,
            "client_id": provider.client_id, "code_verifier": flow.verifier}
    assert provider.token_url is not None        # an own app's entry names it
    status, data = post_form(provider.token_url, body, secret)
    if status >= 400 or not isinstance(data, dict) or data.get("error"):
        raise UpstreamFailed(FaultKind.AUTH, f"{provider.name} refused the sign-in code (HTTP {status}: "
                             f"{flows.error_text(data)})", "Start the sign-in again.", upstream_status=status)
    return grant_from(provider, data)


# ---- the device flow --------------------------------------------------------------------------------------

def device_start(provider: Vendor, flow: flows.Flow) -> None:
    body = {"client_id": provider.client_id, **({"scope": provider.scope} if provider.scope else {})}
    status, data = post_form(provider.device_code_url, body)
    if status >= 400 or not isinstance(data, dict) or not isinstance(data.get("device_code"), str) \
            or not isinstance(data.get("user_code"), str) or data.get("error"):
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"{provider.name} did not start a device sign-in (HTTP "
                             f"{status}: {flows.error_text(data)})", "Check the client id in Settings, or paste a "
                             "token instead.", upstream_status=status)
    flow.device = {"device_code": data["device_code"], "user_code": data["user_code"][:32],
                   "verify_url": verify_url(provider, data), "interval": flows.interval_of(data)}
    if isinstance(data.get("expires_in"), (int, float)) and data["expires_in"] > 0:
        flow.expires = min(flow.expires, time.time() + data["expires_in"])


def device_poll(provider: Vendor, flow: flows.Flow) -> Grant | None:
    """The grant once the user approved; None while it waits (slow_down lengthens the wait as told); a refusal
    when denied, expired or refused. The provider answers all of these with a 200 and an `error`."""
    flow.polled = time.time()
    body = {"client_id": provider.client_id, "device_code": flow.device["device_code"], **provider.token_params}
    status, data = post_form(provider.device_token_url, body)
    err = data.get("error") if isinstance(data, dict) else None
    if status < 400 and isinstance(data, dict) and data.get("access_token") and not err:
        return grant_from(provider, data)
    if err == "authorization_pending":
        return None
    if err == "slow_down" and isinstance(data, dict):
        told = data.get("interval")
        told = told if isinstance(told, (int, float)) and not isinstance(told, bool) else 0
        flow.device["interval"] = int(min(max(flow.device["interval"] + 5, told), 60))
        return None
    why = DEVICE_ENDED.get(err) if isinstance(err, str) else None
    raise UpstreamFailed(FaultKind.AUTH, f"{provider.name} ended the sign-in: "
                         f"{why or flows.error_text(data)} (HTTP {status})", "Start the sign-in again.",
                         upstream_status=status)


def verify_url(provider: Vendor, data: dict) -> str:
    """Where the user enters the code: the provider's own https page, or its device page when it names none."""
    found = data.get("verification_uri_complete") or data.get("verification_uri")
    site = urlsplit(provider.device_code_url)
    fallback = f"{site.scheme}://{site.netloc}/login/device"
    if not isinstance(found, str) or urlsplit(found).scheme not in ("http", "https") or len(found) > 500:
        return fallback
    return found


# ---- renewal ----------------------------------------------------------------------------------------------

def refresh(provider: Vendor, refresh_token: str, secret: str | None) -> Grant:
    """A new grant for a refresh token. The provider saying no (a 4xx, or an `error`) is a SigninRefused: only
    signing in again helps; a connection fault, a 5xx or a 408 or 429 (busy, not a no) is an UpstreamFailed, worth
    trying again later."""
    body = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": provider.client_id}
    assert provider.token_url is not None        # an own app's entry names it
    status, data = post_form(provider.token_url, body, secret)
    if status in BUSY:
        raise UpstreamFailed(FaultKind.RATE_LIMITED, f"{provider.name} is busy and did not renew the sign-in (HTTP "
                             f"{status})", "It is tried again on a later call.", upstream_status=status)
    if 400 <= status < 500 or (isinstance(data, dict) and data.get("error")):
        raise SigninRefused(f"{provider.name} refused to renew the sign-in: {flows.error_text(data)} "
                            f"(HTTP {status}).", "Sign in again from the Endpoints page.")
    if status >= 500 or not isinstance(data, dict):
        raise UpstreamFailed(FaultKind.SERVER, f"{provider.name} did not answer the renewal (HTTP {status})",
                             "It is tried again on the next call.", upstream_status=status)
    grant = grant_from(provider, data)
    grant.refresh = grant.refresh or refresh_token     # a provider that does not rotate keeps the old one working
    return grant


def grant_from(provider: Vendor, data: dict) -> Grant:
    token = flows.key_from(provider, data, "access_token")
    refresh_token = data.get("refresh_token")
    refresh_token = refresh_token.strip() if isinstance(refresh_token, str) else None
    if refresh_token is not None and not flows.usable_key(refresh_token):
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"{provider.name} answered the sign-in with a refresh token "
                             "that cannot be used", "Try again, or paste a token instead.")
    if refresh_token:
        remember(refresh_token)
    lifetime: Any = data.get("expires_in")
    if isinstance(lifetime, str) and lifetime.isdigit():
        lifetime = int(lifetime)
    usable = isinstance(lifetime, (int, float)) and not isinstance(lifetime, bool) and 0 < lifetime < MAX_LIFETIME
    return Grant(token, refresh_token or None, time.time() + lifetime if usable else None)


# ---- HTTP -------------------------------------------------------------------------------------------------

def post_form(url: str, body: dict, secret: str | None = None) -> tuple[int, object]:
    """(status, parsed body or text) of a form POST asking for JSON; the client secret, when the app has one, goes
    in the body as client_secret (RFC 6749 2.3.1 allows it, and both providers take it)."""
    fields = {**body, **({"client_secret": secret} if secret else {})}
    return flows.post(url, urlencode(fields).encode(), "application/x-www-form-urlencoded")
