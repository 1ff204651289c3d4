"""A request's body, read off the connection: its framing (Content-Length or chunked), its size limit, its deadline
and its share of the bodies the service holds at once."""
from __future__ import annotations

import time

from ..errors import BadRequest, BenchError, PayloadTooLarge
from ..words import plural
from .bodies import BodiesFull, Share
from .reading import MAX_CHUNK_LINE, MAX_TRAILERS, Deadlined, TooSlow, chunk_size

# A body must arrive within BODY_SECONDS plus a second for each BODY_BYTES_PER_SECOND received: a socket timeout
# bounds one read only, so a client trickling a byte now and then once held a thread for ever. Module constants:
# tests make them small.
BODY_SECONDS = 60.0
BODY_BYTES_PER_SECOND = 16 * 1024


class BodyTooSlow(BenchError):
    """A 408 in the route's own error shape: the body did not arrive in time."""
    status, code = 408, "request_timeout"


def has_body(headers: dict) -> bool:
    return "transfer-encoding" in headers or (headers.get("content-length") or "0").strip() not in ("", "0")


def read_body(rfile, clock: Deadlined, headers: dict, max_mb: float, share: Share) -> bytes:
    """The body, read from `rfile` (buffered over `clock`) within its deadline: BODY_SECONDS, and a second more for
    each BODY_BYTES_PER_SECOND received (a large body on a slow line gets its time, a trickle does not); BodyTooSlow
    past it. Its bytes count in `share` as they arrive: Crowded when they would pass the bodies the service holds
    at once."""
    limit = int(max_mb * 1024 * 1024)
    length = body_length(headers, limit)
    if length == 0:
        return b""
    if length is not None and not share.fits(length):
        raise share.refusal()
    clock.start(BODY_SECONDS, 1 / BODY_BYTES_PER_SECOND)
    began, at = time.monotonic(), rfile.tell()
    clock.share = share
    try:
        return read_chunked(rfile, limit) if length is None else read_exactly(rfile, length)
    except BodiesFull:
        raise share.refusal() from None
    except TooSlow:
        got = rfile.tell() - at     # what arrived: the read that timed out kept none of it
        what = f"{got} bytes of its chunks" if length is None else f"{min(got, length)} of {length} bytes"
        raise BodyTooSlow(f"The request body did not arrive in time: {what} after "
                          f"{seconds(time.monotonic() - began)}.",
                          f"Send the whole body at once: the service waits {seconds(BODY_SECONDS)} for a body, "
                          f"and a second more for each {BODY_BYTES_PER_SECOND // 1024} KB received.") from None
    finally:
        clock.share = None


def body_length(headers: dict, limit: int) -> int | None:
    """The body's size by Content-Length, or None for a chunked one; 400 for framing we do not read, 413 for a
    size past the limit."""
    if "transfer-encoding" in headers:
        if headers["transfer-encoding"].strip().lower() != "chunked" or "content-length" in headers:
            raise BadRequest("Only Transfer-Encoding: chunked is understood, and never with Content-Length.",
                             "Send Content-Length, or chunked alone.")
        return None
    raw = (headers.get("content-length") or "0").strip()
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 15:   # int() would take "+5", "1_0" and " 5"
        raise BadRequest("Content-Length is not a number.", "Send the body's size in bytes, digits only.")
    length = int(raw)
    if length > limit:
        raise PayloadTooLarge(f"The request body is {length} bytes; the limit is {limit} bytes.",
                              "Send a smaller request, or raise max_body_mb in settings.")
    return length


def read_exactly(rfile, length: int) -> bytes:
    data = rfile.read(length) if length else b""
    if len(data) < length:
        raise BadRequest(f"The request body ended after {len(data)} of {length} bytes.",
                         "Send the whole body Content-Length announces.")
    return data


def read_chunked(rfile, limit: int) -> bytes:
    """Chunk sizes are hex digits only (a few of them), and every byte read, framing included, counts against
    the limit: a size like -1 once read until the client hung up, past every check."""
    parts: list[bytes] = []
    total = 0
    while True:
        line = rfile.readline(MAX_CHUNK_LINE + 1)
        total += len(line)
        size = chunk_size(line)
        if size is None:
            raise BadRequest("Malformed chunked request body.", "Each chunk starts with its size in hex digits.")
        if total + size > limit:
            raise PayloadTooLarge(f"The request body passes the limit of {limit} bytes.",
                                  "Send a smaller request, or raise max_body_mb in settings.")
        if size == 0:
            for _ in range(MAX_TRAILERS):      # trailers, bounded too
                trailer = rfile.readline(MAX_CHUNK_LINE + 1)
                total += len(trailer)
                if not trailer.strip() or total > limit:
                    break
            return b"".join(parts)
        parts.append(read_exactly(rfile, size))
        total += size
        if rfile.readline(3) not in (b"\r\n", b"\n"):
            raise BadRequest("Malformed chunked request body.", "Each chunk ends with CR LF.")


def seconds(value: float) -> str:
    """A duration for a message: "1 second", "60 seconds", "2.5 seconds"."""
    return plural(int(value), "second") if value == int(value) else f"{value:.1f} seconds"
