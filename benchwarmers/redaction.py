"""One redaction for keys in errors, logs and outputs: every key seen, the secrets given, and key shapes. The keys
the user configured (`remember`) are taken out of everything, the record included; the keys a third party listed
(a hub's admin answer, `note_listed`) only out of messages, errors and logs, and only those shaped like a key. And
the models' names a blind panel's readers must not see (its judges; its asker, until it is judged), as "a model"."""
from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from itertools import islice

MIN_SECRET = 6                 # shorter strings are too common to replace wherever they appear
_known: set[str] = set()       # every key value handed out or accepted, so redact() can find it anywhere
# Key shapes: OpenAI-style sk-..., Google AIza..., a bearer token, a ?key= query value.
_SHAPES = re.compile(r"sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|(?i:bearer)\s+[A-Za-z0-9._\-]{8,}"
                     r"|(?<=key=)[A-Za-z0-9._\-]{8,}")


MAX_KEY = 512                  # characters in a provider key, pasted or got by a sign-in


def key_problem(value: str | None) -> str | None:
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
    """Whether `text` holds a known key, a listed one (or one of `secrets`): such a text is never shown or kept as
    a name (an upstream may list a model under a name equal to its key)."""
    if not text:
        return False
    return any(s and len(s) >= MIN_SECRET and s in text for s in [*_known, *secrets]) or bool(_listed.spans(text))


def redact(text: str, *secrets: str | None) -> str:
    """`text` without any known key, any of `secrets`, any key a third party listed, or anything shaped like a
    key."""
    if not text:
        return text
    for secret in [*_known, *secrets]:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, "[redacted]")
    return _SHAPES.sub("[redacted]", _listed.cut(text))


def forget_known(text: str) -> str:
    """`text` without any known key; key shapes stay (what a user asked may rightly show `sk-...` examples)."""
    for secret in list(_known):
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return text


def answer_secrets(*secrets: str | None) -> list[str]:
    """The keys taken out of what a model wrote (Scrubber): every known key and `secrets`, longest first; [] when
    there is none, which is told before a Scrubber is made for nothing."""
    if not _known and not any(secrets):
        return []
    return sorted({s for s in [*_known, *secrets] if s and len(s) >= MIN_SECRET}, key=len, reverse=True)


def scrub_whole(text: str, secrets: list[str]) -> str:
    """What a fresh Scrubber of `secrets` lets out of `text`, fed whole and flushed: every key in it replaced."""
    for secret in secrets:
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
        self.secrets = answer_secrets(*secrets)
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


# ---- keys a third party listed ------------------------------------------------------------------------------
# A hub's admin answer lists the keys of its own upstreams, which its errors may echo. That list is not the
# user's: it may hold ordinary words, model names or hundreds of thousands of strings. So only what is shaped like
# a key joins (key_shaped), a bounded number of them, and they are taken out of messages, errors and logs alone
# (redact, names_a_key), never out of an answer or the record (Scrubber, forget_known).
LISTED_MIN = 16                # characters of a listed key, at least
LISTED_PER_SOURCE = 32         # one source's keys kept (its newest): more than the connections a hub has
LISTED_MOST = 256              # all sources' together: at most 256 x MAX_KEY characters (128 KiB)
LISTED_LOOKED = 4_096          # entries of one answer looked at; a longer list's rest is passed over
LISTED_BUCKET = 4              # keys kept that share one anchor (below); more could make a search cost more
# Prefixes providers give their keys: such a string needs no mix of characters to count as a key.
PREFIXES = ("sk-", "gsk_", "AIza", "hf_", "xai-", "csk-", "pplx-", "r8_", "fw_", "nvapi-", "ghp_", "github_pat_")
_VISIBLE = re.compile(r"[!-~]+")
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{10,}")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_DIGIT = re.compile(r"[0-9]")
_CHANGE = re.compile(r"[a-z](?=[A-Z0-9])|[A-Z](?=[a-z0-9])|[0-9](?=[A-Za-z])")
# A listed key is found through its anchor, its longest run of these characters (one of 10 or more: key_shaped
# asks for it); the text's runs are found by one pass of this pattern and each is looked up in a dict, so a search
# costs the same whatever the set holds.
_RUN = re.compile(r"[A-Za-z0-9_-]{10,}")


def key_shaped(value) -> bool:
    """Whether a string a third party listed as a key looks like one: 16 to 512 visible ASCII characters, no space,
    holding a run of 10 or more letters and digits, and either starting with a provider's key prefix (PREFIXES) or
    holding 2 digits or more with the kind of character (small letter, capital, digit) changing at least once
    every 4 letters and digits, as in random text. Words, sentences and model names (words and version numbers
    between separators) fail it."""
    if not isinstance(value, str) or not LISTED_MIN <= len(value) <= MAX_KEY or not _VISIBLE.fullmatch(value):
        return False
    if not _RANDOM_RUN.search(value):
        return False
    if value.startswith(PREFIXES):
        return True
    return len(_DIGIT.findall(value)) >= 2 and 4 * len(_CHANGE.findall(value)) >= len(_ALNUM.findall(value))


def _anchor(key: str) -> tuple[str, int]:
    """The key's longest run of _RUN's characters and where it starts in the key."""
    run = max(_RUN.finditer(key), key=lambda m: len(m.group()))
    return run.group(), run.start()


class ListedKeys:
    """The keys third parties listed, by source, bounded in count (so in size), found in a text in one pass."""

    def __init__(self):
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, str] = OrderedDict()        # key -> its source, the least recently listed first
        self._anchors: dict[str, tuple[tuple[str, int], ...]] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def chars(self) -> int:
        return sum(map(len, list(self._kept)))

    def note(self, source: str, values) -> int:
        """Keep the key-shaped strings of `values` as `source`'s keys; returns how many it listed."""
        fresh: list[str] = []
        for value in islice(values if isinstance(values, (list, tuple)) else (), LISTED_LOOKED):
            if key_shaped(value) and value not in fresh:
                fresh.append(value)
                if len(fresh) == LISTED_PER_SOURCE:
                    break
        with self._lock:
            before = list(self._kept.items())
            for key in fresh:
                self._kept.pop(key, None)
                self._kept[key] = source
            mine = [k for k, s in self._kept.items() if s == source]
            for key in mine[:-LISTED_PER_SOURCE]:
                del self._kept[key]
            while len(self._kept) > LISTED_MOST:
                self._kept.popitem(last=False)
            if set(before) != set(self._kept.items()):
                self._anchors = self._index()
        return len(fresh)

    def _index(self) -> dict[str, tuple[tuple[str, int], ...]]:
        """anchor -> the keys holding it, with where it starts in each (at most LISTED_BUCKET, the newest)."""
        found: dict[str, list[tuple[str, int]]] = {}
        for key in reversed(self._kept):
            anchor, at = _anchor(key)
            bucket = found.setdefault(anchor, [])
            if len(bucket) < LISTED_BUCKET:
                bucket.append((key, at))
        return {anchor: tuple(keys) for anchor, keys in found.items()}

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where listed keys stand in `text` (each apart from letters, digits, "-" and "_" around it), in order."""
        anchors = self._anchors
        if not anchors or not text:
            return []
        found = []
        for run in _RUN.finditer(text):
            for key, at in anchors.get(run.group(), ()):
                start = run.start() - at
                if start >= 0 and text.startswith(key, start):
                    found.append((start, start + len(key)))
        return sorted(found)

    def cut(self, text: str) -> str:
        spans = self.spans(text)
        if not spans:
            return text
        out, done = [], 0
        for start, end in spans:
            if start >= done:
                out += [text[done:start], "[redacted]"]
            done = max(done, end)       # a key overlapping the one cut before it: only its rest goes
        return "".join(out) + text[done:]


_listed = ListedKeys()


def note_listed(source: str, values) -> int:
    """Keys a third party (a hub: `source` is its endpoint) listed: from now on the key-shaped ones are taken out of
    messages, errors and logs. Returns how many of them were key-shaped (at most LISTED_PER_SOURCE)."""
    return _listed.note(source, values)


# ---- model names: what a blind panel's readers (its judges, its asker until judged) must not see ----------
# Our own replies name each seat's model ("## Seat 2 · m-b · member", "Seat 1 · m-a: “...”"): a conversation that
# carries an earlier panel's reply back gets the number alone.
OWN_LABEL = re.compile("(Seat \\d+)(?: \u00b7 [^\u00b7\\n:;,\u201c]+)+")
SHORTEST_NAME = 3          # a one- or two-letter alias is a word of the text as often as a name


def model_names(models) -> set[str]:
    """The names each of `models` ((alias, served name) pairs) goes by in a text: its alias, its served name and
    that name's last part (a served name may carry its vendor, org/model)."""
    return {n for alias, served in models for n in (alias, served, (served or "").rsplit("/", 1)[-1]) if n}


def names_pattern(names) -> re.Pattern | None:
    """One pattern for the models' names (aliases and served names) a judge must not read; None: none to hide."""
    return _pattern(frozenset(n for n in names if n and len(n) >= SHORTEST_NAME))


@functools.lru_cache(maxsize=256)     # a collection's panels ask with the same names: made once, not once a panel
def _pattern(names: frozenset) -> re.Pattern | None:
    kept = sorted(names, key=len, reverse=True)
    if not kept:
        return None
    return re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(n) for n in kept) + r")(?![\w-])", re.I)


def unnamed(text: str, names: re.Pattern | None) -> str:
    """`text` without our own seat labels' model names, and with the panel's model names as "a model"."""
    text = OWN_LABEL.sub(r"\1", text)
    return names.sub("a model", text) if names is not None else text
