"""Every scheduled model call goes through Pacer.complete: one call at a time per endpoint, a gap between calls,
never while the endpoint rests on a rate limit, and only once the user's own asks on it are answered.

Scheduled calls use their own small connection pool, so they never hold a connection an ask could use; the
user's asks are counted in flight by the registry's transport, which the pacer waits on."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from ..providers.transport import Timeouts, Transport
from ..registry import Registry

LIST_TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)


class Held(Exception):
    """A scheduled call not made, and why (its endpoint rests, or stayed busy with the user's asks)."""


class Pacer:
    def __init__(self, registry, clock, settings, resting, stop: threading.Event):
        self.registry = registry
        self.clock = clock
        self.settings = settings              # () -> the effective settings (gap and yield seconds)
        self.resting = resting                # endpoint name -> until when it rests, or None
        self.stop = stop
        # The same endpoints and keys, on a pool of their own; rate-limit facts shared with the asks.
        self.own = Registry(registry.config, Transport(limits=registry.transport.limits, max_idle_per_host=2))
        self._lock = threading.Lock()
        self._turns: dict[str, threading.Lock] = {}
        self._last: dict[str, float] = {}

    # ---- the seam: every scheduled call ------------------------------------------------------------
    def complete(self, model, ask, timeouts, sent=None):
        """`sent()` is called as the call goes out (never for a call held back)."""
        endpoint = self.registry.endpoint(model.endpoint)
        with self.turn(endpoint.name, sent):
            return self.own.provider(endpoint).complete(ask, model.served, timeouts=timeouts)

    def list_models(self, endpoint, sent=None) -> list[dict]:
        with self.turn(endpoint.name, sent):
            return self.own.provider(endpoint).list_models(timeouts=LIST_TIMEOUTS)

    # ---- pacing -------------------------------------------------------------------------------------
    @contextmanager
    def turn(self, name: str, sent=None):
        """Hold the endpoint's one scheduled seat for a call: after the gap, and after the user's asks."""
        with self._lock:
            seat = self._turns.setdefault(name, threading.Lock())
        with seat:
            self._check(name)
            gap = self.settings()["scheduler_gap_seconds"] - (self.clock.now() - self._last.get(name, -1e12))
            self.clock.sleep(gap, self.stop)
            self._check(name)
            self._yield(name)
            if sent:
                sent()
            try:
                yield
            finally:
                self._last[name] = self.clock.now()

    def _check(self, name: str) -> None:
        if self.stop.is_set():
            raise Held("the service is stopping")
        until = self.resting(name)
        if until:
            raise Held("its endpoint rests on a rate limit until "
                       + time.strftime("%Y-%m-%d %H:%M", time.localtime(until)))

    def _yield(self, name: str) -> None:
        """Wait while the user's own asks are in flight on this endpoint (checked again after each one)."""
        asks = self.registry.transport
        limit = self.settings()["scheduler_yield_seconds"]
        started = time.monotonic()
        while asks.in_flight(name):
            left = limit - (time.monotonic() - started)
            if left <= 0:
                raise Held(f"its endpoint stayed busy with your asks for {limit:g} s")
            asks.wait_quiet(name, min(left, 1.0))
            self._check(name)

    def close(self) -> None:
        self.own.transport.close()
