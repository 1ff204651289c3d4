"""MCP sessions over HTTP, in memory: each made at initialize for whoever made it, found again only by the same
caller, ended by a DELETE or after idling; a restart ends them all (clients then initialize again)."""
from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from .protocol import Session
from .tools import Tools

PER_OWNER = 100          # sessions one caller may hold; its own longest idle goes when it opens one more
MAX_SESSIONS = 1000      # all callers together: past it a new session is refused, never someone else's ended


@dataclass
class Entry:
    session: Session
    owner: str                      # who made it (a key, the admin, or anyone when no token is set)
    last: float = field(default=0.0)


class Sessions:
    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._entries: dict[str, Entry] = {}
        self._lock = threading.Lock()

    def open(self, owner: str, tools: Tools, idle_seconds: float) -> tuple[str, Session] | None:
        """A new session and its id (32 random bytes, URL-safe, visible ASCII as the transport requires), or None
        when MAX_SESSIONS callers' sessions are live. A caller at PER_OWNER loses its own longest idle one: a flood
        of initializes from one caller ends only that caller's sessions."""
        sid = secrets.token_urlsafe(32)
        now = self.clock()
        entry = Entry(Session(tools), owner, now)
        with self._lock:
            self._expire(now, idle_seconds)
            own = [k for k, e in self._entries.items() if e.owner == owner]
            if len(own) >= PER_OWNER:
                del self._entries[min(own, key=lambda k: self._entries[k].last)]
            elif len(self._entries) >= MAX_SESSIONS:
                return None
            self._entries[sid] = entry
        return sid, entry.session

    def find(self, sid: str, owner: str, idle_seconds: float) -> Session | None:
        """The session, when it exists, has not idled past `idle_seconds` and belongs to `owner`; else None (the
        transport answers 404: unknown, expired and someone else's look the same)."""
        now = self.clock()
        with self._lock:
            self._expire(now, idle_seconds)
            entry = self._entries.get(sid)
            if entry is None or entry.owner != owner:
                return None
            entry.last = now
            return entry.session

    def end(self, sid: str, owner: str, idle_seconds: float) -> bool:
        if self.find(sid, owner, idle_seconds) is None:
            return False
        with self._lock:
            return self._entries.pop(sid, None) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def _expire(self, now: float, idle_seconds: float) -> None:
        for sid in [k for k, e in self._entries.items() if now - e.last > idle_seconds]:
            del self._entries[sid]
