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
# An IPv6 network is counted at its /48 and /32 as well (a site's and a provider's share: a /48 holds 65,536 /64s,
# each of which once got its own ten guesses a minute), each with a larger allowance and a table of its own, so a
# flood of /64s pushes no wider prefix out of memory: (prefix length, allowance in times FAILURES, entries kept).
WIDER = ((48, 4, 1024), (32, 16, 256))


def sources(address: str) -> list[str]:
    """Where guesses come from, as counted: every loopback address is one source (127.0.0.2 is the same machine as
    127.0.0.1), an IPv4 address mapped into IPv6 is that IPv4 address, and an IPv6 address counts as its /64 (one
    host or one network's share, which hands its machines any number of addresses within it), then as its wider
    networks (WIDER)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return [address]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return ["loopback"]
    if isinstance(ip, ipaddress.IPv6Address):
        return [str(ipaddress.IPv6Network((ip, bits), strict=False)) for bits in (64, *(w[0] for w in WIDER))]
    return [str(ip)]


class Guesses:
    """Failed credentials per source and, for IPv6, per wider network (see sources()). `check` before
    refusing a credential, `failed` after a wrong one. A right one is let through first, throttled or not (an app's
    key and a session id are 192 and 256 random bits, nothing to guess; the admin token's owner must not be locked
    out by a guesser behind the same proxy), so while a source is over the limit only its wrong credentials get
    429, and none of them counts again."""

    def __init__(self, failures: int = FAILURES, window: float = WINDOW):
        self.window = window
        # one table per level: (allowance, entries remembered at most, source -> the times of its failures)
        self._levels: list[tuple[int, int, dict[str, deque[float]]]] = [(failures, MAX_ADDRESSES, {})]
        self._levels += [(times * failures, most, {}) for _, times, most in WIDER]
        self._lock = threading.Lock()

    def check(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            for level, ((allowed, _, seen), where) in enumerate(zip(self._levels, sources(address))):
                recent = self._recent(seen, where, now)
                if recent is not None and len(recent) >= allowed:
                    wait = self.window - (now - recent[0])
                    break
            else:
                return
        whom = f"{address}'s network {where}" if level else address
        raise RateLimited(f"Too many wrong tokens or keys from {whom}.",
                          f"Wait {wait:.0f} s, then send the right one.", retry_after=wait)

    def failed(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            for (allowed, most, seen), where in zip(self._levels, sources(address)):
                recent = self._recent(seen, where, now)
                if recent is None:
                    if len(seen) >= most:
                        seen.pop(next(iter(seen)))   # the oldest source goes first
                    recent = seen[where] = deque(maxlen=allowed)
                recent.append(now)

    def _recent(self, seen: dict, where: str, now: float) -> deque | None:
        recent = seen.get(where)
        if recent is None:
            return None
        while recent and now - recent[0] >= self.window:
            recent.popleft()
        if not recent:
            del seen[where]
            return None
        return recent
