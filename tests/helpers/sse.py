"""Read a Server-Sent Events body back into (event, data) frames, JSON-decoded where they are JSON."""
from __future__ import annotations

import json


def sse_frames(raw: bytes) -> list[tuple[str | None, object]]:
    """(event name, data) for each SSE frame; data JSON-decoded where it can be."""
    out = []
    for block in raw.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        event, data = None, []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            text = "\n".join(data)
            try:
                out.append((event, json.loads(text)))
            except ValueError:
                out.append((event, text))
    return out


def sse_events(raw: bytes) -> list:
    """The data: payloads of an SSE body, JSON-decoded where possible."""
    return [data for _, data in sse_frames(raw)]
