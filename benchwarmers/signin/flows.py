"""Sign-in flows: state and PKCE verifier kept in memory with an expiry, the code or device exchange for a key."""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TypeGuard
from urllib.parse import urlencode, urljoin, urlsplit

from ..errors import FaultKind, UpstreamFailed
from ..providers.framing import clip
from ..providers.transport import Timeouts, default_transport
from ..redaction import key_problem, redact, remember
from .vendors import HANDOFF, OAUTH, Vendor

FLOW_SECONDS = 600        # a flow not finished within this is refused (the providers' codes last 10 minutes too)
RESULT_SECONDS = 600      # how long the page can still show how a finished flow went
MAX_PENDING = 32          # unfinished flows kept at once; the oldest goes first
TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)


@dataclass
class Flow:
    """One sign-in this service started: only `state`, the challenge and the binding cookie leave the server."""
    provider: str
    kind: str                          # handoff or device (connect.HANDOFF, connect.DEVICE)
    endpoint: str                      # the endpoint name to add
    replace: bool                      # an endpoint of that name exists for this provider: replace it
    state: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48))
    binding: str = field(default_factory=lambda: secrets.token_urlsafe(24))   # the browser's cookie
    started: float = field(default_factory=time.time)
    expires: float = 0.0
    device: dict = field(default_factory=dict)    # device flow: device_code, user_code, verify_url, interval
    polled: float = 0.0
    redirect: str = ""                 # oauth: the registered callback URL, sent again with the code

    def __post_init__(self):
        self.expires = self.expires or self.started + FLOW_SECONDS

    @property
    def landing(self) -> str:
        """This service's path the browser comes back to (handoff, oauth) or waits on (device). An oauth callback
        is one fixed path, as the user registered it with their app: `state` comes back in the query there."""
        if self.kind == OAUTH:
            return f"/connect/{self.provider}/callback"
        return f"/connect/{self.provider}/{'callback' if self.kind == HANDOFF else 'wait'}/{self.state}"

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires

    def bound_to(self, cookie: str | None) -> bool:
        return cookie is not None and cookie != "" and secrets.compare_digest(cookie.encode(), self.binding.encode())


class Flows:
    """Unfinished flows by state, and the results of finished ones by a fresh id; in memory (the Bench's
    `signins`), so a restart ends every unfinished sign-in (the user starts again)."""

    def __init__(self):
        self._flows: dict[str, Flow] = {}
        self._results: dict[str, tuple[float, dict]] = {}
        self._lock = threading.Lock()

    def add(self, flow: Flow) -> Flow:
        with self._lock:
            self._prune()
            while len(self._flows) >= MAX_PENDING:
                del self._flows[min(self._flows, key=lambda s: self._flows[s].started)]
            self._flows[flow.state] = flow
        return flow

    def take(self, state: str) -> Flow | None:
        """The flow, removed: a state works once."""
        with self._lock:
            return self._flows.pop(state, None)

    def put_back(self, flow: Flow) -> None:
        """A device flow still waiting for approval."""
        with self._lock:
            self._flows[flow.state] = flow

    def finish(self, result: dict) -> str:
        rid = secrets.token_urlsafe(12)
        with self._lock:
            self._prune()
            self._results[rid] = (time.time() + RESULT_SECONDS, result)
        return rid

    def result(self, rid: str | None) -> dict | None:
        with self._lock:
            found = self._results.get(rid or "")
        return found[1] if found and found[0] > time.time() else None

    def _prune(self) -> None:
        now = time.time()
        for state in [s for s, f in self._flows.items() if f.expires <= now]:
            del self._flows[state]
        for rid in [r for r, (until, _) in self._results.items() if until <= now]:
            del self._results[rid]


def challenge(verifier: str) -> str:
    """RFC 7636 S256: base64url(sha256(verifier)) without padding."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


# ---- handoff: the browser to the provider and back with a code --------------------------------------------

def auth_redirect(provider: Vendor, flow: Flow, origin: str) -> str:
    """The provider's auth page URL. `state` rides in the callback path: OpenRouter sends back only `code`."""
    params = {"callback_url": origin + flow.landing, "code_challenge": challenge(flow.verifier),
              "code_challenge_method": "S256", **provider.auth_params}
    if provider.echoes_state:
        params["state"] = flow.state
    return provider.auth_url + "?" + urlencode(params)


def exchange_code(provider: Vendor, code: str, verifier: str) -> str:
    """The key for a code: the provider checks the verifier against the challenge it was given."""
    body = {"code": code, "code_verifier": verifier, **provider.exchange_params}
    status, data = post_json(provider.exchange_url, body)
    if status >= 400:
        raise UpstreamFailed(FaultKind.AUTH, f"{provider.name} refused the sign-in code (HTTP {status}: "
                             f"{error_text(data)})", "Start the sign-in again.", upstream_status=status)
    return key_from(provider, data, "key", "access_token")


# ---- device: the user approves a code at the provider while this service polls ----------------------------

def device_start(provider: Vendor, flow: Flow) -> None:
    assert provider.device_url is not None     # a device sign-in's entry names it
    status, data = post_json(provider.device_url + "/code", dict(provider.device_params))
    if status >= 400 or not isinstance(data, dict) or not data.get("device_code") or not data.get("user_code"):
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"{provider.name} did not start a device sign-in "
                             f"(HTTP {status}: {error_text(data)})", "Try again later, or paste a key instead.")
    flow.device = {"device_code": str(data["device_code"]), "user_code": str(data["user_code"])[:32],
                   "verify_url": verify_url(provider, data), "interval": interval_of(data)}
    if isinstance(data.get("expires_in"), (int, float)) and data["expires_in"] > 0:
        flow.expires = min(flow.expires, time.time() + data["expires_in"])


def device_poll(provider: Vendor, flow: Flow) -> str | None:
    """The key once the user approved; None while it waits; UpstreamFailed when denied or gone."""
    flow.polled = time.time()
    assert provider.device_url is not None
    status, data = post_json(provider.device_url + "/token", {"device_code": flow.device["device_code"]})
    if status < 400 and isinstance(data, dict) and (data.get("access_token") or data.get("key")):
        return key_from(provider, data, "access_token", "key")
    err = data.get("error") if isinstance(data, dict) else None
    if err == "authorization_pending" or (isinstance(data, dict) and data.get("status") == "authorization_pending"):
        return None
    if err == "slow_down":
        flow.device["interval"] = min(flow.device["interval"] + 5, 30)
        return None
    raise UpstreamFailed(FaultKind.AUTH, f"{provider.name} ended the sign-in (HTTP {status}: {error_text(data)})",
                         "Start the sign-in again.", upstream_status=status)


def verify_url(provider: Vendor, data: dict) -> str:
    """Where the user approves: the provider's URL (relative ones are on its site), only ever http(s)."""
    assert provider.device_url is not None
    site = provider.device_url.split("/api/", 1)[0] + "/"
    found = urljoin(site, str(data.get("verification_uri_complete") or data.get("verification_uri") or "device"))
    return found if urlsplit(found).scheme in ("http", "https") else site + "device"


def interval_of(data: dict) -> int:
    value = data.get("interval")
    return int(min(max(value, 2), 30)) if isinstance(value, (int, float)) else 5


# ---- HTTP -------------------------------------------------------------------------------------------------

def post_json(url: str, body: dict) -> tuple[int, object]:
    """(status, parsed body or text) of a JSON POST; connection faults raise UpstreamFailed."""
    return post(url, json.dumps(body).encode(), "application/json")


def post(url: str, data: bytes, content_type: str) -> tuple[int, object]:
    """(status, parsed body or text) of a POST asking for JSON, the answer read up to 1 MB."""
    with default_transport().request("POST", url, headers={"Content-Type": content_type,
                                                           "Accept": "application/json"},
                                     body=data, timeouts=TIMEOUTS) as response:
        raw = response.read(1 << 20)
    text = raw.decode("utf-8", "replace")
    try:
        return response.status, json.loads(text)
    except ValueError:
        return response.status, text


def usable_key(value) -> TypeGuard[str]:
    """Whether a sign-in's key (or token) can go into a header as it is: the rule for every provider key
    (redaction.key_problem: visible ASCII, at most 512 characters)."""
    return isinstance(value, str) and key_problem(value) is None


def key_from(provider: Vendor, data, *fields: str) -> str:
    value = next((data.get(f) for f in fields if isinstance(data, dict) and data.get(f)), None)
    value = value.strip() if isinstance(value, str) else value
    if not usable_key(value):
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"{provider.name} answered the sign-in without a usable key",
                             "Try again, or paste a key instead.")
    remember(value)     # from here on, redaction knows it
    return value


def error_text(data) -> str:
    """The provider's own words about a refusal, short and with anything key-shaped removed."""
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            err = err.get("message") or err.get("code")
        data = data.get("error_description") or data.get("message") or err or data.get("status") or ""
    return redact(clip(str(data or "no details"), 200))
