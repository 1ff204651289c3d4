"""One redaction for keys in errors, logs and outputs: every key seen, the secrets given, and key shapes."""
from __future__ import annotations

import re

MIN_SECRET = 6                 # shorter strings are too common to replace wherever they appear
_known: set[str] = set()       # every key value handed out or accepted, so redact() can find it anywhere
# Key shapes: OpenAI-style sk-..., Google AIza..., a bearer token, a ?key= query value.
_SHAPES = re.compile(r"sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|(?i:bearer)\s+[A-Za-z0-9._\-]{8,}"
                     r"|(?<=key=)[A-Za-z0-9._\-]{8,}")


MAX_KEY = 512                  # characters in a provider key, pasted or got by a sign-in


def key_problem(value: str) -> str | None:
    """What keeps `value` from being a provider key to send in a header, or None: a key is visible ASCII (no space,
    control character or NUL, which would corrupt or split the header it goes in), at most MAX_KEY characters."""
    if not value:
        return "it is empty"
    if len(value) > MAX_KEY:
        return f"it is {len(value):,} characters long, more than the {MAX_KEY} a key may have"
    if not all("!" <= c <= "~" for c in value):
        return "it holds spaces, control characters or characters outside ASCII"
    return None


def remember(key: str | None) -> None:
    """From now on, this key is redacted wherever it appears."""
    if key and len(key) >= MIN_SECRET:
        _known.add(key)


def names_a_key(text: str, *secrets: str | None) -> bool:
    """Whether `text` holds a known key (or one of `secrets`): such a text is never shown or kept as a name (an
    upstream may list a model under a name equal to its key)."""
    return bool(text) and any(s and len(s) >= MIN_SECRET and s in text for s in [*_known, *secrets])


def redact(text: str, *secrets: str | None) -> str:
    """`text` without any known key, any of `secrets`, or anything shaped like a key."""
    if not text:
        return text
    for secret in [*_known, *secrets]:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, "[redacted]")
    return _SHAPES.sub("[redacted]", text)


def forget_known(text: str) -> str:
    """`text` without any known key; key shapes stay (what a user asked may rightly show `sk-...` examples)."""
    for secret in list(_known):
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


class Scrubber:
    """Known keys taken out of a text that arrives in pieces (a streamed answer), also when a key is split between
    two pieces. A tail that could be the start of a key (HOLD characters or more) waits for the next piece, or for
    flush, to tell; a shorter one goes out at once (holding every trailing "s" back would reshape every stream),
    and if the next piece completes a key that began there, the rest of the key is cut: at most HOLD - 1 of its
    first characters can pass, and those are the public part of a key's shape ("sk-"). Only known keys, not key
    shapes: an answer may rightly show `sk-...` examples."""

    HOLD = 4

    def __init__(self, *secrets: str | None):
        found = {s for s in [*_known, *secrets] if s and len(s) >= MIN_SECRET}
        self.secrets = sorted(found, key=len, reverse=True)
        self.held = ""
        self.sent = ""       # the end of what already went out, where a key may have begun

    def feed(self, text: str) -> str:
        """What of `held + text` can go out now."""
        if not self.secrets or not (text or self.held):
            return text
        text = self._redact(self.held + text)
        keep = self._started(self.sent + text)      # a key's start may have begun in what went out already
        keep = min(keep, len(text)) if keep >= self.HOLD else 0
        self.held = text[len(text) - keep:] if keep else ""
        out = text[:len(text) - keep]
        self.sent = (self.sent + out)[-len(self.secrets[0]):]
        return out

    def flush(self) -> str:
        out, self.held = self.held, ""
        return out

    def _redact(self, text: str) -> str:
        """`text` with every key in it, or whose start went out just before it, replaced (the sent part stays)."""
        sent = len(self.sent)
        window = self.sent + text
        for secret in self.secrets:
            at = window.find(secret, max(0, sent - len(secret) + 1))
            while at != -1:
                cut = max(at, sent)
                window = window[:cut] + "[redacted]" + window[at + len(secret):]
                at = window.find(secret, cut + len("[redacted]"))
        return window[sent:]

    def _started(self, text: str) -> int:
        """The length of the longest end of `text` that is the start of some key."""
        best = 0
        for secret in self.secrets:
            for size in range(min(len(secret) - 1, len(text)), best, -1):
                if text.endswith(secret[:size]):
                    best = size
                    break
        return best
