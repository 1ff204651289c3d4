"""Wrong secrets slow a guesser down: after a few failures from one source, its wrong credentials get 429."""
from __future__ import annotations

import ipaddress
import threading
import time
from collections import deque

from ..errors import RateLimited

FAILURES = 10      # wrong admin tokens, logins or gateway keys one address may send ...
WINDOW = 60.0      # ... within this many seconds; then every credential it sends is refused until the window moves
MAX_ADDRESSES = 4096   # addresses remembered at once: a flood of addresses cannot grow this without bound


def source(address: str) -> str:
    """Where guesses come from, as counted: every loopback address is one source (127.0.0.2 is the same machine as
    127.0.0.1), an IPv4 address mapped into IPv6 is that IPv4 address, and an IPv6 address counts as its /64 (one
    host or one network's share, which hands its machines any number of addresses within it)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class Guesses:
    """Failed credentials per source (see source()). `check` before refusing a credential, `failed` after a wrong
    one. A right one is let through first, throttled or not (an app's key and a session id are 192 and 256 random
    bits, nothing to guess; the admin token's owner must not be locked out by a guesser behind the same proxy), so
    while a source is over the limit only its wrong credentials get 429, and none of them counts again."""

    def __init__(self, failures: int = FAILURES, window: float = WINDOW):
        self.failures, self.window = failures, window
        self._seen: dict[str, deque] = {}
        self._lock = threading.Lock()

    def check(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            recent = self._recent(source(address), now)
            if recent is None or len(recent) < self.failures:
                return
            wait = self.window - (now - recent[0])
        raise RateLimited(f"Too many wrong tokens or keys from {address}.",
                          f"Wait {wait:.0f} s, then send the right one.", retry_after=wait)

    def failed(self, address: str) -> None:
        now, address = time.monotonic(), source(address)
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
