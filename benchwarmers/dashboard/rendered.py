"""Answers rendered once: the HTML of an answer (and of it with its quotes marked) kept by a hash of what it was
made from, compressed, within a bound in bytes.

A call's page is viewed again and again (the Ask page reads it again after each verdict), and its answers only
change when a seat is amended, which changes their text. Keyed by the content itself, a changed answer is a new
key, rendered anew: the HTML of an earlier text is never served for it, whoever changed it and however.
"""
from __future__ import annotations

import hashlib
import threading
import zlib
from collections import Counter, OrderedDict
from typing import Callable

from . import markdown
from .markup import Html
from .quotemark import mark

# Kept compressed: the worst shape of a 1 MB answer (one-line lists nested 8 deep) is 9 MB of HTML, 100 KB
# compressed; ordinary answers shrink about threefold. Decompressing is a millisecond or two a MB on a view.
MOST_BYTES = 16 * 1024 * 1024    # all kept HTML together, compressed; the least recently used goes first past it
MOST_ONE = MOST_BYTES // 4       # HTML larger than this compressed is made again each time, pushing out nothing
ENTRY = 256                      # bytes an entry costs besides its HTML: its key and its place in the table


class Kept:
    """HTML by a hash of the texts it was made from, least recently used out first past `most` bytes."""

    def __init__(self, most: int = MOST_BYTES, most_one: int = MOST_ONE):
        self.most, self.most_one = most, most_one
        self._kept: OrderedDict[bytes, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.made: Counter = Counter()          # how many times each kind was made, for tests and the curious

    def get(self, kind: str, texts: tuple[str, ...], make: Callable[[], Html]) -> Html:
        key = digest(kind, texts)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
        if found is not None:
            return Html(zlib.decompress(found).decode("utf-8", "surrogatepass"))
        made = make()                           # outside the lock: one long render holds up no other page
        packed = zlib.compress(made.encode("utf-8", "surrogatepass"), 1)
        with self._lock:
            self.made[kind] += 1
            if len(packed) + ENTRY <= self.most_one and key not in self._kept:
                self._kept[key] = packed
                self._bytes += len(packed) + ENTRY
                while self._bytes > self.most:
                    _, old = self._kept.popitem(last=False)
                    self._bytes -= len(old) + ENTRY
        return made

    def size(self) -> tuple[int, int]:
        """(entries, bytes) kept."""
        with self._lock:
            return len(self._kept), self._bytes


def digest(kind: str, texts: tuple[str, ...]) -> bytes:
    """One hash of the kind and each text with its length, so no two lists of texts run together into one."""
    h = hashlib.blake2b(kind.encode(), digest_size=20)
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")       # an answer may hold a lone surrogate from JSON
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.digest()


KEPT = Kept()


def answer_html(text: str, quotes: tuple[str, ...] | list[str] = ()) -> Html:
    """The answer rendered as Markdown, with its quotes marked when it has any: each made once, then kept."""
    text, quotes = text or "", tuple(quotes)
    if not quotes:
        return KEPT.get("markdown", (text,), lambda: markdown.render(text))
    return KEPT.get("marked", (text, *quotes), lambda: mark(answer_html(text), list(quotes)))
