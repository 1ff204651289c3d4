"""The bytes of request bodies the service holds at once, across every request being read or answered: a large ask
costs several times its size in memory until it is answered, so past a bound (the bodies_in_flight_mb setting)
another body is refused with a 503 rather than read."""
from __future__ import annotations

import threading

from ..errors import Unavailable
from ..words import plural

RETRY_SECONDS = 5      # what a refused client is told to wait: bodies are given back as the requests they came with end
MB = 1024 * 1024


class Crowded(Unavailable):
    """A 503 in the route's own error shape: the body would pass the bytes of bodies the service may hold at once."""
    code = "overloaded"


class BodiesFull(Exception):
    """Raised from inside a read (Deadlined) when the bytes just received would pass the bound."""


class Bodies:
    """The count, for the whole process: each request takes a Share, which counts its body's bytes as they arrive
    (what a client announces is not counted until it is sent, so announcing large bodies holds nothing) and gives
    them back when the request ends. A request alone is always let in: the bound never refuses the only body."""

    def __init__(self) -> None:
        self.held = 0
        self._lock = threading.Lock()

    def share(self, limit_mb: float) -> "Share":
        return Share(self, int(limit_mb * MB))


class Share:
    """One request's part of the count."""

    def __init__(self, bodies: Bodies, limit: int):
        self.bodies, self.limit, self.held = bodies, limit, 0

    def fits(self, more: int) -> bool:
        """Whether `more` bytes would fit now (the others' bodies and this one's so far): asked before a body with a
        Content-Length is read, so a body that could not fit is refused before a byte of it is."""
        with self.bodies._lock:
            return self._fits(more)

    def take(self, more: int) -> bool:
        """Count `more` bytes received for this request; False (nothing counted) when they do not fit."""
        with self.bodies._lock:
            if not self._fits(more):
                return False
            self.bodies.held += more
            self.held += more
            return True

    def _fits(self, more: int) -> bool:
        others = self.bodies.held - self.held
        return others == 0 or self.bodies.held + more <= self.limit

    def release(self) -> None:
        """The request has ended: its bytes are given back."""
        with self.bodies._lock:
            self.bodies.held -= self.held
            self.held = 0

    def refusal(self) -> Crowded:
        return Crowded(f"The service holds {mb(self.bodies.held)} of request bodies already, and this one would pass "
                       f"the {mb(self.limit)} it holds at once (bodies_in_flight_mb).",
                       f"Try again in {plural(RETRY_SECONDS, 'second')}, send smaller requests, or raise "
                       "bodies_in_flight_mb in settings.", retry_after=RETRY_SECONDS)


def mb(size: int) -> str:
    return f"{size / MB:.1f} MB"
