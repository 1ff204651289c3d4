"""One redaction for keys in errors, logs and outputs: every key seen, the secrets given, and key shapes."""
from __future__ import annotations

import re

MIN_SECRET = 6                 # shorter strings are too common to replace wherever they appear
_known: set[str] = set()       # every key value handed out or accepted, so redact() can find it anywhere
# Key shapes: OpenAI-style sk-..., Google AIza..., a bearer token, a ?key= query value.
_SHAPES = re.compile(r"sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|(?i:bearer)\s+[A-Za-z0-9._\-]{8,}"
                     r"|(?<=key=)[A-Za-z0-9._\-]{8,}")


def remember(key: str | None) -> None:
    """From now on, this key is redacted wherever it appears."""
    if key and len(key) >= MIN_SECRET:
        _known.add(key)


def redact(text: str, *secrets: str | None) -> str:
    """`text` without any known key, any of `secrets`, or anything shaped like a key."""
    if not text:
        return text
    for secret in [*_known, *secrets]:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, "[redacted]")
    return _SHAPES.sub("[redacted]", text)
