"""Every scheduled model call goes through Pacer.complete: one call at a time per endpoint, a gap between calls,
never while the endpoint rests on a rate limit, and only once the user's own asks on it are answered.

Scheduled calls go through the bench's Dialer (the one way to call a member), set on a registry with its own
small connection pool, so they never hold a connection an ask could use; the user's asks are counted in flight
by the bench registry's transport, which the pacer waits on."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from ..providers import Transport
from ..roster.onboard import LIST_TIMEOUTS
from ..roster.registry import Registry


class Held(Exception):
    """A scheduled call not made, and why (its endpoint or its model rests, or the endpoint stayed busy with the
    user's asks); `whole`: the rest of the endpoint cannot be called either."""

    def __init__(self, why: str, whole: bool = True):
        super().__init__(why)
        self.whole = whole


class Pacer:
    def __init__(self, dialer, clock, resting, stop: threading.Event):
        self.registry = dialer.registry
        self.clock = clock
        self.settings = dialer.settings       # () -> the effective settings (gap and yield seconds)
        self.resting = resting                # the bench's one Resting
        self.stop = stop
        # The same endpoints and keys, on a pool of their own; rate-limit facts shared with the asks.
        self.own = Registry(self.registry.config,
                            Transport(limits=self.registry.transport.limits, max_idle_per_host=2))
        self.dialer = dialer.over(self.own, scheduled=True)
        self._lock = threading.Lock()
        self._turns: dict[str, threading.Lock] = {}
        self._last: dict[str, float] = {}

    # ---- the seam: every scheduled call ------------------------------------------------------------
    def complete(self, model, ask, timeouts, sent=None, kind: str = "probe"):
        """`sent()` is called as the call goes out (never for a call held back). A model the user's rate limits
        would keep waiting longer than `limit_wait_scheduled_seconds` is refused unsent (QuotaRefused): the job
        skips it until its next run."""
        endpoint = self.registry.endpoint(model.endpoint)
        self.dialer.refuse_early(model, ask, kind)
        with self.turn(endpoint.name, sent, model.served):
            return self.dialer.complete(model, ask, timeouts=timeouts, kind=kind)

    def list_models(self, endpoint, sent=None) -> list[dict]:
        with self.turn(endpoint.name, sent):
            return self.dialer.list_models(endpoint, LIST_TIMEOUTS)

    # ---- pacing -------------------------------------------------------------------------------------
    @contextmanager
    def turn(self, name: str, sent=None, served: str | None = None):
        """Hold the endpoint's one scheduled seat for a call (to the model `served`, or the endpoint's own list):
        after the gap, and after the user's asks; never while what it calls rests."""
        with self._lock:
            seat = self._turns.setdefault(name, threading.Lock())
        with seat:
            self._check(name, served)
            gap = self.settings()["scheduler_gap_seconds"] - (self.clock.now() - self._last.get(name, -1e12))
            self.clock.sleep(gap, self.stop)
            self._check(name, served)
            self._yield(name, served)
            if sent:
                sent()
            try:
                yield
            finally:
                self._last[name] = self.clock.now()

    def _check(self, name: str, served: str | None = None) -> None:
        if self.stop.is_set():
            raise Held("the service is stopping")
        until = self.resting.until(name, served)
        if until:
            whole = served is None or self.resting.until(name) == until
            raise Held(("its endpoint" if whole else "it") + " rests on a rate limit until "
                       + time.strftime("%Y-%m-%d %H:%M", time.localtime(until)), whole)

    def _yield(self, name: str, served: str | None = None) -> None:
        """Wait while the user's own asks are in flight on this endpoint (checked again after each one)."""
        asks = self.registry.transport
        limit = self.settings()["scheduler_yield_seconds"]
        started = time.monotonic()
        while asks.in_flight(name):
            left = limit - (time.monotonic() - started)
            if left <= 0:
                raise Held(f"its endpoint stayed busy with your asks for {limit:g} s")
            asks.wait_quiet(name, min(left, 1.0))
            self._check(name, served)

    def close(self) -> None:
        self.own.transport.close()
