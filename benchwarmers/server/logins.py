"""Dashboard sessions: a random id per login, kept in memory with its expiry, ended by log-out or a restart.

The cookie holds only the id (256 random bits); the service keeps the id's SHA-256 digest, so nothing in memory is a
usable cookie either. A session ends SESSION_IDLE after its last request or SESSION_MOST after its login,
whichever comes first; the cookie's Max-Age is SESSION_MOST so a browser forgets it by then too.
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import OrderedDict
from typing import Callable

SESSION_IDLE = 12 * 3600          # seconds without a request
SESSION_MOST = 7 * 24 * 3600      # seconds from the login
MAX_LOGINS = 1000                 # sessions kept at once; past it the longest idle goes (all are the admin's)


def _digest(sid: str) -> bytes:
    return hashlib.sha256(sid.encode("utf-8", "replace")).digest()


class Logins:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._live: OrderedDict[bytes, tuple[float, float]] = OrderedDict()   # digest -> (started, last used)
        self._lock = threading.Lock()

    def start(self) -> str:
        """A new session's id, for the cookie."""
        sid = secrets.token_urlsafe(32)
        now = self.clock()
        with self._lock:
            self._live[_digest(sid)] = (now, now)
            while len(self._live) > MAX_LOGINS:
                self._live.popitem(last=False)
        return sid

    def valid(self, sid: str | None) -> bool:
        """Whether the id is a live session; using it keeps it from idling out."""
        if not sid:
            return False
        key, now = _digest(sid), self.clock()
        with self._lock:
            found = self._live.get(key)
            if found is None:
                return False
            started, last = found
            if now - last > SESSION_IDLE or now - started > SESSION_MOST:
                del self._live[key]
                return False
            self._live[key] = (started, now)
            self._live.move_to_end(key)
            return True

    def end(self, sid: str | None) -> None:
        if sid:
            with self._lock:
                self._live.pop(_digest(sid), None)

    def __len__(self) -> int:
        return len(self._live)
