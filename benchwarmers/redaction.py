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


class Scrubber:
    """Known keys taken out of a text that arrives in pieces (a streamed answer), also when a key is split between
    two pieces: a tail that could be the start of a key waits for the next piece (or flush) to tell. Only known keys,
    not key shapes: an answer may rightly show `sk-...` examples."""

    def __init__(self, *secrets: str | None):
        found = {s for s in [*_known, *secrets] if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(found, key=len, reverse=True)
        self.held = ""

    def feed(self, text: str) -> str:
        """What of `held + text` can go out now."""
        if not self.secrets or not (text or self.held):
            return text
        text = self.held + text
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        keep = self._started(text)
        self.held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def flush(self) -> str:
        out, self.held = self.held, ""
        return out

    def _started(self, text: str) -> int:
        """The length of the longest end of `text` that is the start of some key."""
        best = 0
        for secret in self.secrets:
            for size in range(min(len(secret) - 1, len(text)), best, -1):
                if text.endswith(secret[:size]):
                    best = size
                    break
        return best
