"""Wrong secrets slow a guesser down: after a few failures from one address, its credentials are not even checked."""
from __future__ import annotations

import threading
import time
from collections import deque

from ..errors import RateLimited

FAILURES = 10      # wrong admin tokens, logins or gateway keys one address may send ...
WINDOW = 60.0      # ... within this many seconds; then every credential it sends is refused until the window moves
MAX_ADDRESSES = 4096   # addresses remembered at once: a flood of addresses cannot grow this without bound


class Guesses:
    """Failed credentials per client address. `check` before checking a secret, `failed` after a wrong one.
    While an address is over the limit it gets 429 without its secret being compared, so a right guess and a wrong
    one look the same: the throttle cannot be used to tell them apart."""

    def __init__(self, failures: int = FAILURES, window: float = WINDOW):
        self.failures, self.window = failures, window
        self._seen: dict[str, deque] = {}
        self._lock = threading.Lock()

    def check(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            recent = self._recent(address, now)
            if recent is None or len(recent) < self.failures:
                return
            wait = self.window - (now - recent[0])
        raise RateLimited(f"Too many wrong tokens or keys from {address}.",
                          f"Wait {wait:.0f} s, then send the right one.", retry_after=wait)

    def failed(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            recent = self._recent(address, now)
            if recent is None:
                if len(self._seen) >= MAX_ADDRESSES:
                    self._seen.pop(next(iter(self._seen)))   # the oldest address goes first
                recent = self._seen[address] = deque()
            recent.append(now)

    def _recent(self, address: str, now: float) -> deque | None:
        recent = self._seen.get(address)
        if recent is None:
            return None
        while recent and now - recent[0] >= self.window:
            recent.popleft()
        if not recent:
            del self._seen[address]
            return None
        return recent
