"""Fake providers that speak the documented sign-in flows: OpenRouter's and NanoGPT's PKCE key handoff, and
Pollinations' device sign-in; each serves an OpenAI-compatible models list that takes only the key it issued.

    with FakeOpenRouter() as fake:                  # fake.site: its /auth page; fake.url: the API base (/api/v1)
        with pointed_at("openrouter", site=fake.site, base_url=fake.url): ...   # tests.helpers.signin
        fake.issued                                 # the keys it handed out; fake.refused: exchanges it refused
    with FakePollinations() as fake:                # fake.device_url, fake.url (/v1)
        fake.approve_all()                          # the user approves every pending code (or fake.deny_all())
"""
from __future__ import annotations

import base64
import hashlib
import html
import secrets
from urllib.parse import urlencode

from .openai import FakeOpenAI
from .server import Recorded


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


class FakeHandoff(FakeOpenAI):
    """GET /auth approves at once and sends the browser to callback_url with a code (or, with `consent`, shows a
    page whose Authorize link does, as a real provider's page does once the user clicks); POST <api>/auth/keys
    gives a key only for a code it issued, once, with the verifier whose S256 hash was the challenge."""
    url_suffix = "/api/v1"
    key_prefix = "sk-fake-"
    echoes_state = False
    exchange_extra: dict = {}         # fields the provider's exchange wants beside code and code_verifier

    def __init__(self, **kw):
        super().__init__(**kw)
        self.codes: dict[str, str] = {}   # code -> challenge
        self.issued: list[str] = []
        self.refused: list[dict] = []
        self.deny = False                 # the user says no on the auth page
        self.consent = False              # show an Authorize link instead of redirecting at once

    @property
    def site(self) -> str:
        return self.root

    @property
    def exchanges(self) -> list[Recorded]:
        """The key exchanges that reached it."""
        return [r for r in list(self.requests) if r.path == "/api/v1/auth/keys"]

    def route(self, h, rec: Recorded) -> None:
        if rec.method == "GET" and rec.path == "/auth":
            return self.auth_page(h, rec)
        if rec.method == "POST" and rec.path == "/api/v1/auth/keys":
            return self.exchange(h, rec)
        if rec.path.startswith("/api/v1/"):
            rec.path = rec.path[len("/api"):]      # the OpenAI fake serves /v1/...
        return super().route(h, rec)

    def auth_page(self, h, rec: Recorded) -> None:
        q = rec.query
        if not q.get("callback_url") or q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return h.send_json(400, {"error": {"message": "callback_url and an S256 code_challenge are required"}})
        back = {"error": "access_denied"} if self.deny else {"code": self.new_code(q["code_challenge"])}
        if self.echoes_state and q.get("state"):
            back["state"] = q["state"]
        sep = "&" if "?" in q["callback_url"] else "?"
        back_url = q["callback_url"] + sep + urlencode(back)
        if self.consent:
            page = f'<!doctype html><title>Authorize</title><a id="authorize" href="{html.escape(back_url)}">OK</a>'
            return h.send_bytes(200, "text/html; charset=utf-8", page.encode())
        h.send_bytes(302, "text/plain", b"", {"Location": back_url})

    def new_code(self, challenge: str) -> str:
        code = secrets.token_urlsafe(16)
        with self._lock:
            self.codes[code] = challenge
        return code

    def exchange(self, h, rec: Recorded) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        with self._lock:
            challenge = self.codes.pop(str(body.get("code")), None)   # a code works once
        wants = all(body.get(k) == v for k, v in self.exchange_extra.items())
        if challenge is None or not wants or s256(str(body.get("code_verifier"))) != challenge:
            self.refused.append(body)
            return h.send_json(403, {"error": {"message": "Invalid code or code_verifier", "code": 403}})
        key = self.key_prefix + secrets.token_hex(16)
        self.issued.append(key)
        self.expect_key(key)             # from now on the models list takes this key only
        h.send_json(200, {"key": key, "user_id": "user_fake"})


class FakeOpenRouter(FakeHandoff):
    key_prefix = "sk-or-v1-"
    exchange_extra = {"code_challenge_method": "S256"}


class FakeNanoGPT(FakeHandoff):
    key_prefix = "sk-nano-"
    echoes_state = True
    exchange_extra = {"grant_type": "authorization_code"}


class FakePollinations(FakeOpenAI):
    """POST /api/device/code and /api/device/token as Pollinations documents them; /v1/models takes the key."""
    url_suffix = "/v1"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.pending: dict[str, dict] = {}   # device_code -> {"user_code", "state": pending|approved|denied}
        self.issued: list[str] = []

    @property
    def device_url(self) -> str:
        return self.root + "/api/device"

    def approve_all(self, state: str = "approved") -> None:
        with self._lock:
            for entry in self.pending.values():
                entry["state"] = state

    def deny_all(self) -> None:
        self.approve_all("denied")

    def route(self, h, rec: Recorded) -> None:
        if rec.method == "POST" and rec.path == "/api/device/code":
            device, user = secrets.token_urlsafe(24), "ABCD-" + secrets.token_hex(2).upper()
            with self._lock:
                self.pending[device] = {"user_code": user, "state": "pending"}
            return h.send_json(200, {"device_code": device, "user_code": user, "verification_uri": "/device",
                                     "expires_in": 600, "interval": 5})
        if rec.method == "POST" and rec.path == "/api/device/token":
            return self.token(h, rec)
        return super().route(h, rec)

    def token(self, h, rec: Recorded) -> None:
        device = (rec.body or {}).get("device_code") if isinstance(rec.body, dict) else None
        with self._lock:
            entry = self.pending.get(device)
            if entry and entry["state"] != "pending":
                del self.pending[device]
        if entry is None:
            return h.send_json(400, {"error": "invalid_grant"})
        if entry["state"] == "pending":
            return h.send_json(400, {"error": "authorization_pending"})
        if entry["state"] == "denied":
            return h.send_json(400, {"error": "access_denied"})
        key = "sk_" + secrets.token_hex(16)
        self.issued.append(key)
        self.expect_key(key)
        h.send_json(200, {"access_token": key, "token_type": "bearer"})
