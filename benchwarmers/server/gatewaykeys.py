"""Gateway keys: named, revocable, stored hashed, each limited to some collections and a rate."""
from __future__ import annotations

import json
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass

from ..errors import BadRequest, Conflict, Forbidden, NotFound, RateLimited, Unauthorized
from ..names import check_name
from .guard import hash_key
from ..store import Database
from ..words import plural

PREFIX = "bw-"
MOST_RPM = 10 ** 9     # SQLite keeps an integer in 64 bits: a larger one would fail the insert


@dataclass
class GatewayKey:
    name: str
    collections: list
    rpm: int | None
    created: float
    revoked: float | None = None
    prefix: str = ""

    @classmethod
    def from_row(cls, row) -> "GatewayKey":
        return cls(row["name"], json.loads(row["collections"]), row["rpm"], row["created"], row["revoked"],
                   row["prefix"] or "")

    def to_dict(self) -> dict:
        return {"name": self.name, "collections": self.collections, "rpm": self.rpm, "created": self.created,
                "revoked": self.revoked, "prefix": self.prefix}

    def allows(self, collection: str) -> bool:
        return "*" in self.collections or collection in self.collections

    def check_collection(self, collection: str) -> None:
        if not self.allows(collection):
            raise Forbidden(f"The key {self.name!r} does not reach the collection {collection!r}.",
                            "Ask one of: " + ", ".join(self.collections) + ", or widen the key.")


def keys_required(admin_token: str | None, settings: dict) -> bool:
    """Gateway routes need a key when the service has an admin token, or when require_keys is set."""
    return bool(admin_token) or bool(settings.get("require_keys"))


def enforcement(admin_token: str | None, settings: dict) -> dict:
    """Whether gateway keys are enforced and why, in the words `bench status` and `bench key create` show."""
    if admin_token:
        return {"enforced": True, "note": "Gateway keys are required on the gateway routes (an admin token is set)."}
    if settings.get("require_keys"):
        return {"enforced": True, "note": "Gateway keys are required on the gateway routes (require_keys is on). "
                "The admin routes stay open to local clients until BENCHWARMERS_ADMIN_TOKEN is set."}
    return {"enforced": False, "note": "Gateway keys are not enforced: with no admin token any local client may call "
            "every route, and a revoked or narrower key still works. To enforce them, restart the service with "
            "BENCHWARMERS_ADMIN_TOKEN set (16+ characters), or set \"require_keys\": true in the data folder's "
            "config/settings.json (keys on loopback too, from the next request)."}


class GatewayKeys:
    def __init__(self, db: Database):
        self.db = db
        self._windows: dict[str, deque] = {}
        self._lock = threading.Lock()

    def create(self, name: str | None, collections: list | None, rpm: int | None) -> tuple[GatewayKey, str]:
        name = check_name(name, "Key name")
        if not isinstance(collections, list) or not collections or \
                not all(isinstance(c, str) and c for c in collections):
            raise BadRequest("A key needs the collections it may reach (or '*').",
                             "For example: bench key create my-app --collections core")
        if rpm is not None and (not isinstance(rpm, int) or isinstance(rpm, bool) or not 0 < rpm <= MOST_RPM):
            raise BadRequest(f"rpm must be a whole number of requests a minute, from 1 to {MOST_RPM:,}.")
        secret = PREFIX + secrets.token_urlsafe(24)
        key = GatewayKey(name, list(collections), rpm, time.time(), None, secret[:7])

        def insert(conn):
            row = conn.execute("SELECT revoked FROM gateway_keys WHERE name = ?", (name,)).fetchone()
            if row and row["revoked"] is None:
                raise Conflict(f"A key named {name!r} exists.", "Revoke it first or choose another name.")
            conn.execute("INSERT OR REPLACE INTO gateway_keys (name, hash, prefix, collections, rpm, created, revoked)"
                         " VALUES (?, ?, ?, ?, ?, ?, NULL)",
                         (name, hash_key(secret), key.prefix, json.dumps(key.collections), rpm, key.created))
        self.db.call(insert)
        return key, secret

    def list(self) -> list[GatewayKey]:
        self.db.sync()
        return [GatewayKey.from_row(r) for r in self.db.query("SELECT * FROM gateway_keys ORDER BY name")]

    def revoke(self, name: str) -> GatewayKey:
        n = self.db.call(lambda c: c.execute("UPDATE gateway_keys SET revoked = ? WHERE name = ? AND revoked IS NULL",
                                             (time.time(), name)).rowcount)
        if not n:
            raise NotFound(f"No active key named {name!r}.", "See them with: bench key list")
        return next(k for k in self.list() if k.name == name)

    def authenticate(self, secret: str | None, found: GatewayKey | None = None) -> GatewayKey:
        """The key record for a presented secret, or 401; also enforces its requests-a-minute limit (`found`: the
        record find() gave for it already)."""
        if not secret:
            raise Unauthorized("This service needs a gateway key.",
                               "Send it as Authorization: Bearer <key> (or x-api-key, x-goog-api-key, ?key=); "
                               "make one with: bench key create NAME --collections ...")
        key = found or self.find(secret)
        if key is None or key.revoked is not None:
            raise Unauthorized("That gateway key is not valid (unknown or revoked).",
                               "Check BENCHWARMERS_KEY, or ask the admin for a new key.")
        self.pace(key)
        return key

    def find(self, secret: str | None) -> GatewayKey | None:
        """The key record a secret belongs to (revoked ones too), or None."""
        if not secret:
            return None
        # Read on every request (one indexed row): a key revoked by another process on the same data
        # folder must stop working at once, and unknown secrets must not grow a cache.
        row = self.db.one("SELECT * FROM gateway_keys WHERE hash = ?", (hash_key(secret),))
        return GatewayKey.from_row(row) if row else None

    def pace(self, key: GatewayKey | None) -> None:
        """Count one request against the key's requests a minute; RateLimited past it (no key, no limit)."""
        if key is None or not key.rpm:
            return
        now = time.monotonic()
        with self._lock:
            window = self._windows.setdefault(key.name, deque())
            while window and now - window[0] >= 60:
                window.popleft()
            if len(window) >= key.rpm:
                wait = 60 - (now - window[0])
                raise RateLimited(f"The key {key.name!r} is limited to {plural(key.rpm, 'request')} a minute.",
                                  f"Try again in {wait:.0f} s.", retry_after=wait)
            window.append(now)

