"""A flag set once that threads wait for: threading.Event's set, is_set and wait on a lock, in C calls (an Event's
are a Condition's Python calls, and a panel makes one for its seats and one for its referee)."""
from __future__ import annotations

import threading


class Once:
    """`_gate` is held until the first set() lets it go; a waiter that gets it gives it back at once."""
    __slots__ = ("_gate", "_guard", "_set")

    def __init__(self) -> None:
        self._gate, self._guard, self._set = threading.Lock(), threading.Lock(), False
        self._gate.acquire()

    def set(self) -> None:
        """The first call wakes every waiter; a later one (a panel's grace, then its last seat) does nothing."""
        with self._guard:
            if not self._set:
                self._set = True
                self._gate.release()

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float | None = None) -> bool:
        """As Event.wait: True once set, else False after `timeout` seconds (None: until it is)."""
        if self._set:      # no lock taken once set (another waiter may hold the gate for a moment)
            return True
        if timeout is None:
            got = self._gate.acquire()
        elif timeout > 0:
            got = self._gate.acquire(True, timeout)
        else:
            got = self._gate.acquire(False)
        if got:
            self._gate.release()
        return self._set
