"""A call's way to be stopped from another thread: its connection shut down, so the upstream stops generating."""
from __future__ import annotations

import socket
import threading

from ..errors import FaultKind, UpstreamFailed


class Hangup:
    """Given to one call through its Timeouts. The transport tells it the connection the call writes on and lets go
    of it once the answer is read; hang_up() shuts that socket down (a thread blocked reading it wakes at once with
    the end of the stream, and a server that generates only while its client is there, as llama.cpp's and Ollama's
    do, stops) and refuses any later write. `tag` is the hanger's own note of why (the panel's seat status)."""
    __slots__ = ("reason", "tag", "sent", "refused", "_conn", "_lock")

    def __init__(self) -> None:
        self.reason: str | None = None
        self.tag = None
        self.sent = False             # a request of this call reached a socket
        self.refused = False          # a write was refused because it was hung up (the call had been counted)
        self._conn = None
        self._lock = threading.Lock()

    def hold(self, conn) -> None:
        """The call writes on `conn` now; UpstreamFailed when it was hung up already (nothing is written)."""
        with self._lock:
            if self.reason is not None:
                self.refused = True
                raise self.failure()
            self._conn = conn

    def let_go(self, conn) -> None:
        """The call is done with `conn` (read to its end, or closed): hanging up no longer touches it."""
        with self._lock:
            if self._conn is conn:
                self._conn = None

    def hang_up(self, reason: str, tag=None) -> bool:
        """Stop the call; False when it was stopped already."""
        with self._lock:
            if self.reason is not None:
                return False
            self.reason, self.tag = reason, tag
            conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)   # not close(): the reading thread closes it, as for any end
            except (OSError, AttributeError):
                pass
        return True

    def failure(self) -> UpstreamFailed:
        return UpstreamFailed(FaultKind.DROPPED, f"the call was closed: {self.reason}")
