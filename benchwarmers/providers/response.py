"""An upstream response: its head, and its body read whole or line by line, the connection handed back after."""
from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from ..errors import FaultKind, UpstreamFailed
from .wire import Body, WireError

if TYPE_CHECKING:
    from .transport import Sent

MAX_LINE = 64 << 20                    # one SSE/NDJSON line; Gemini inline images make lines of megabytes


def read_error(exc: BaseException, host: str, idle: float | None = None) -> UpstreamFailed:
    """A fault while reading a body that had started: a stall is a timeout, anything else a cut stream."""
    if isinstance(exc, (TimeoutError, socket.timeout)):
        wait = f" for {idle:g}s" if idle else ""
        return UpstreamFailed(FaultKind.TIMEOUT, f"{host} stopped sending{wait} in the middle of its answer",
                              "Raise the idle timeout for slow models, or try again later.")
    detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return UpstreamFailed(FaultKind.DROPPED, f"{host} cut its answer short ({detail[:200]})",
                          "The connection broke mid-answer; try again.")


class UpstreamResponse:
    """An upstream response: status, lower-cased headers, and a body read whole or line by line. `sent`: the request
    it answers (its transport, pool key, connection, host, timeouts and name); `keep`: its connection may be reused
    once the body is read."""

    def __init__(self, sent: "Sent", status: int, reason: str, headers: dict, body: Body, keep: bool):
        self.status, self.reason, self.headers, self.host = status, reason, headers, sent.host
        assert sent.conn is not None     # a response comes on the connection its request went out on
        self._transport, self._key, self._conn, self._body, self._keep = sent.transport, sent.key, sent.conn, body, keep
        self._idle = sent.t.idle
        self._hangup = sent.t.hangup     # let go of once the body is read or closed, before the pool may reuse it
        self._open = True
        self._name = sent.name           # counted in flight until the body is read or closed

    def read(self, limit: int | None = None) -> bytes:
        """The whole body (or its first `limit` bytes); the connection goes back to the pool when it can."""
        try:
            data = self._body.all(limit)
        except (OSError, WireError, ValueError) as exc:
            self.close()
            raise read_error(exc, self.host, self._idle) from None
        self._release()
        return data

    def lines(self):
        """Yields raw lines (with their line ending) as they arrive; never holds the whole body."""
        for piece in self.pieces():
            start = 0
            while (end := piece.find(b"\n", start)) >= 0:
                yield piece[start:end + 1]
                start = end + 1
            if start < len(piece):
                yield piece[start:]

    def pieces(self):
        """Yields what has arrived as runs of whole lines, each with its line ending (the body's last line maybe
        without); never holds the whole body, nor a line of MAX_LINE or more. One call per piece, not per line: a
        stream reader splits the run itself (iter_sse)."""
        buf = b""
        try:
            while True:
                try:
                    chunk = self._body.some(65536)
                except (OSError, WireError, ValueError) as exc:
                    raise read_error(exc, self.host, self._idle) from None
                if not chunk:
                    if buf:
                        yield buf
                    self._release()
                    return
                buf += chunk
                end = buf.rfind(b"\n") + 1
                # only the run's first line can be long: the ones after it came whole in this chunk
                if (buf.find(b"\n") if end else len(buf)) >= MAX_LINE:
                    raise self._too_long()
                if end:
                    whole, buf = buf[:end], buf[end:]
                    yield whole
        finally:
            self.close()

    def _too_long(self) -> UpstreamFailed:
        return UpstreamFailed(FaultKind.BAD_RESPONSE, f"{self.host} sent a line longer than {MAX_LINE >> 20} MB: "
                              "not a stream we can read")

    def finish(self, wait: float = 1.0, limit: int = 1 << 20) -> None:
        """After the protocol's end marker: read the little that is left, so the connection can be reused."""
        if not self._open:
            return
        try:
            self._conn.timeout(wait)
            while limit > 0 and not self._body.done:
                limit -= len(self._body.some(65536))
        except (OSError, WireError, ValueError):
            self.close()
            return
        self._release()

    def _release(self) -> None:
        if not self._open:
            return
        self._open = False
        if self._hangup is not None:
            self._hangup.let_go(self._conn)
        if self._body.done and self._keep and not self._conn.buffered:
            self._transport._leave(self._name, self._key, self._conn)   # and the connection back to the pool
        else:
            self._transport._leave(self._name)
            self._conn.close()

    def close(self) -> None:
        """Stop reading: an unfinished body cannot share its connection, so the connection is closed."""
        if self._open:
            self._open = False
            self._transport._leave(self._name)
            if self._hangup is not None:
                self._hangup.let_go(self._conn)
            self._conn.close()

    def __enter__(self) -> "UpstreamResponse":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
