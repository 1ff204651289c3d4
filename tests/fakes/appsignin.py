"""Fake providers for sign-in with the user's own app, each with an OpenAI-compatible models list that takes only
the token it issued last:

- FakeHuggingFace: RFC 6749 authorization code with PKCE (GET /oauth/authorize, POST /oauth/token, form-encoded)
  and the refresh_token grant, rotating the refresh token (a spent one is refused with invalid_grant).
- FakeGitHub: RFC 8628 device flow as GitHub documents it (POST /login/device/code, POST
  /login/oauth/access_token answering authorization_pending, slow_down with a new interval, expired_token and
  access_denied in a 200) and its refresh grant for expiring GitHub App tokens.

`hostile` (a dict, or raw bytes) replaces the next token answer, to test what the service does with a bad one;
`rotate = False` answers a refresh without a new refresh token (the old one keeps working), `refresh_down = N`
answers the next N refreshes with `down_status` (a 503, or say 429), and `client_secret` set makes a refresh need it (as GitHub's does).
"""
from __future__ import annotations

import base64
import hashlib
import secrets
from urllib.parse import parse_qs, urlencode

from .openai import FakeOpenAI
from .server import Recorded


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def form_of(rec: Recorded) -> dict:
    return {k: v[0] for k, v in parse_qs(rec.raw.decode("utf-8", "replace")).items()}


class TokenIssuer(FakeOpenAI):
    """What both fakes share: issuing access and refresh tokens, refreshing them, and a hostile answer."""
    token_prefix = "tok_"
    lifetime = 3600

    def __init__(self, client_id: str = "my-app", **kw):
        super().__init__(**kw)
        self.client_id = client_id
        self.issued: list[str] = []
        self.refresh_tokens: set[str] = set()
        self.refreshes: list[dict] = []      # every refresh request that reached it
        self.refuse_refresh = False
        self.rotate = True
        self.refresh_down = 0
        self.down_status = 503
        self.client_secret: str | None = None
        self.hostile: object = None

    def grant(self, h, refreshed: str | None = None) -> None:
        if self.hostile is not None:
            body, self.hostile = self.hostile, None
            if isinstance(body, bytes):
                return h.send_bytes(200, "application/json", body)
            return h.send_json(200, body)
        token, refresh = self.token_prefix + secrets.token_hex(16), "ref_" + secrets.token_hex(16)
        if refreshed and not self.rotate:
            refresh = refreshed
        with self._lock:
            self.issued.append(token)
            self.refresh_tokens.add(refresh)
        self.expect_key(token)
        answer = {"access_token": token, "token_type": "bearer", "expires_in": self.lifetime, "scope": "inference-api"}
        h.send_json(200, answer if refreshed and not self.rotate else {**answer, "refresh_token": refresh})

    def refresh(self, h, form: dict) -> None:
        with self._lock:
            self.refreshes.append(form)
            if self.refresh_down:
                self.refresh_down -= 1
                return h.send_bytes(self.down_status, "text/html", b"<html>Not now</html>")
            known = form.get("refresh_token") in self.refresh_tokens and not self.refuse_refresh
            if self.rotate:
                self.refresh_tokens.discard(form.get("refresh_token"))      # rotated: a refresh token works once
        if self.client_secret and form.get("client_secret") != self.client_secret:
            return h.send_json(200, {"error": "incorrect_client_credentials",
                                     "error_description": "The client_id and/or client_secret passed are incorrect."})
        if not known or form.get("client_id") != self.client_id:
            return h.send_json(400, {"error": "invalid_grant", "error_description": "The refresh token is invalid "
                                                                                     "or expired."})
        self.grant(h, form.get("refresh_token"))


class FakeHuggingFace(TokenIssuer):
    url_suffix = "/v1"
    token_prefix = "hf_oauth_"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.codes: dict[str, dict] = {}     # code -> {challenge, redirect_uri}
        self.deny = False
        self.refused: list[dict] = []

    def route(self, h, rec: Recorded) -> None:
        if rec.method == "GET" and rec.path == "/oauth/authorize":
            return self.authorize(h, rec)
        if rec.method == "POST" and rec.path == "/oauth/token":
            return self.token(h, form_of(rec))
        return super().route(h, rec)

    def authorize(self, h, rec: Recorded) -> None:
        q = rec.query
        if q.get("client_id") != self.client_id:
            return h.send_json(400, {"error": "invalid_client", "error_description": "Unknown client_id"})
        if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256" or \
                not q.get("code_challenge") or not q.get("redirect_uri") or "inference-api" not in q.get("scope", ""):
            return h.send_json(400, {"error": "invalid_request", "error_description": "Bad authorization request"})
        if self.deny:
            back = {"error": "access_denied", "error_description": "The user denied the request", "state": q["state"]}
        else:
            code = secrets.token_urlsafe(16)
            with self._lock:
                self.codes[code] = {"challenge": q["code_challenge"], "redirect_uri": q["redirect_uri"]}
            back = {"code": code, "state": q.get("state", "")}
        h.send_bytes(302, "text/plain", b"", {"Location": q["redirect_uri"] + "?" + urlencode(back)})

    def token(self, h, form: dict) -> None:
        if form.get("grant_type") == "refresh_token":
            return self.refresh(h, form)
        with self._lock:
            found = self.codes.pop(str(form.get("code")), None)
        if found is None or form.get("grant_type") != "authorization_code" or form.get("client_id") != self.client_id \
                or form.get("redirect_uri") != found["redirect_uri"] \
                or s256(str(form.get("code_verifier"))) != found["challenge"]:
            self.refused.append(form)
            return h.send_json(400, {"error": "invalid_grant", "error_description": "Invalid code or verifier"})
        self.grant(h)


class FakeGitHub(TokenIssuer):
    url_suffix = "/inference"
    token_prefix = "ghu_"
    lifetime = 28800

    def __init__(self, **kw):
        super().__init__(**kw)
        self.pending: dict[str, dict] = {}   # device_code -> {user_code, state, polls}
        self.script: list[str] = []          # the next poll answers, in order: pending, slow_down, expired, denied

    @property
    def site(self) -> str:
        return self.root

    def approve_all(self, state: str = "approved") -> None:
        with self._lock:
            for entry in self.pending.values():
                entry["state"] = state

    def route(self, h, rec: Recorded) -> None:
        if rec.method == "POST" and rec.path == "/login/device/code":
            return self.device_code(h, form_of(rec))
        if rec.method == "POST" and rec.path == "/login/oauth/access_token":
            return self.access_token(h, form_of(rec))
        if rec.path.startswith("/inference/"):
            rec.path = "/v1" + rec.path[len("/inference"):]     # the OpenAI fake serves /v1/...
        return super().route(h, rec)

    def device_code(self, h, form: dict) -> None:
        if form.get("client_id") != self.client_id:
            return h.send_json(404, {"error": "Not Found"})
        device, user = secrets.token_hex(20), f"{secrets.token_hex(2).upper()}-{secrets.token_hex(2).upper()}"
        with self._lock:
            self.pending[device] = {"user_code": user, "state": "pending", "polls": 0, "interval": 5}
        h.send_json(200, {"device_code": device, "user_code": user, "verification_uri": self.root + "/login/device",
                          "expires_in": 900, "interval": 5})

    def access_token(self, h, form: dict) -> None:
        if form.get("grant_type") == "refresh_token":
            return self.refresh(h, form)
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code":
            return h.send_json(200, {"error": "unsupported_grant_type"})
        if form.get("client_id") != self.client_id:
            return h.send_json(200, {"error": "incorrect_client_credentials"})
        with self._lock:
            entry = self.pending.get(form.get("device_code") or "")
            if entry:
                entry["polls"] += 1
            scripted = self.script.pop(0) if self.script else None
        if entry is None:
            return h.send_json(200, {"error": "incorrect_device_code"})
        state = scripted or entry["state"]
        if state == "pending":
            return h.send_json(200, {"error": "authorization_pending",
                                     "error_description": "The authorization request is still pending."})
        if state == "slow_down":           # as GitHub does: 5 s more each time, and the new interval said
            with self._lock:
                entry["interval"] += 5
            return h.send_json(200, {"error": "slow_down", "interval": entry["interval"],
                                     "error_description": "Too many requests have been made in the same timeframe."})
        with self._lock:
            self.pending.pop(form.get("device_code"), None)
        if state == "expired":
            return h.send_json(200, {"error": "expired_token", "error_description": "This 'device_code' has expired."})
        if state == "denied":
            return h.send_json(200, {"error": "access_denied",
                                     "error_description": "The authorization request was denied."})
        self.grant(h)
