"""Reading an upstream's body: server-sent events, NDJSON lines, JSON, and telling a whole body from a stream."""
from __future__ import annotations

from typing import Iterator

from ..errors import FaultKind, UpstreamFailed
from ..strictjson import lenient
from .response import UpstreamResponse

MESSAGE_LIMIT = 500


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def iter_sse(pieces) -> Iterator[tuple[str, str]]:
    """(event name, data) per server-sent event, from runs of whole lines (UpstreamResponse.pieces; a line alone is a
    run too); a last event not closed by a blank line is not complete. Each run is split and read as bytes, a data
    line taken without decoding it: only an event's data is decoded, once."""
    data: list[bytes]
    event, data = "", []
    for piece in pieces:
        lines = piece.split(b"\n")
        if not lines[-1]:          # after the run's last line ending: no line
            lines.pop()
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line:
                if data:
                    yield event or "message", b"\n".join(data).decode("utf-8")
                event, data = "", []
            elif line.startswith(b"data: "):
                data.append(line[6:])
            elif not line.startswith(b":"):
                field, _, value = line.partition(b":")
                value = value[1:] if value.startswith(b" ") else value
                if field == b"data":
                    data.append(value)
                elif field == b"event":
                    event = value.decode("utf-8")


def iter_ndjson(lines) -> Iterator[dict]:
    """One JSON object a line; blank lines skipped; a last line cut mid-object counts as cut, not garbage."""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if not raw.endswith(b"\n"):            # only the last line can lack its newline
            try:
                value = lenient(line)
            except ValueError:
                return
            yield value
            return
        yield lenient(line)


def load_json(data, what: str = "response"):
    try:
        return lenient(data)
    except (ValueError, TypeError):
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"unreadable {what}: {clip(repr(data)[:200], 200)}") from None


def is_whole(response: UpstreamResponse) -> bool:
    """A JSON body rather than a stream (SSE or NDJSON): asked for whole, or a server that ignored `stream`.
    UpstreamFailed for a web page: read as a stream it would only say the stream ended early."""
    ctype = response.headers.get("content-type", "")
    if "html" in ctype:     # a wrong base URL, a sign-in wall or a proxy's error page, sent as a 200
        raise UpstreamFailed(FaultKind.BAD_RESPONSE, f"answered with a web page ({ctype}), not JSON or an event "
                             "stream", "Check the endpoint's base URL: it should be where the API's paths start "
                             "(often ending in /v1).")
    return "json" in ctype and "event-stream" not in ctype and "ndjson" not in ctype
