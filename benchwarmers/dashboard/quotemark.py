"""Each seat's quoted words marked in its rendered answer, at a cost linear in the answer whatever the quotes hold.

The rendered markup's text is read once into one plain string (entities decoded, whitespace folded, inline tags
left out, every other tag a line break that no folded quote holds) with a map back to the markup; each quote is
then one `str.find` in it (linear in CPython, which falls back to the Two-Way search on hard inputs). The only
markup added is <mark> around text between tags, so a hostile quote can mark text but never make markup.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from ..core.quotes import CONTROL
from .inline_marks import inline
from .markup import Html, trusted

# What reads differently as text: an inline tag (its group set: a quote may run across those), a hard line break (a
# space), a run of other tags (one piece however deeply nested the lists are), an entity of the renderer's escaping,
# a run of spaces. Each is one regex step; everything between is copied at C speed (each alternative starts with
# its own character, which keeps the regex engine's search fast).
PIECE = re.compile(r"<(/?(?:strong|em|del|code|a|span)\b)[^<>]*>|<br>|(?:<[^<>]*>)+|&(?:amp|lt|gt|quot|#x27|#39);"
                   r"|  +")
ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'"}
WHITE = re.compile(r"[^\S ]")               # whitespace but the plain space, which stays as it is
BREAK = "\n"                   # a block's edge in the text: a folded quote never holds one


def mark(rendered: Html, quotes: list[str]) -> Html:
    """`rendered` (markup from the escaping Markdown renderer) with each quote's first match in its text, after
    whitespace folding, put in <mark>. A quote is matched as the text its own Markdown reads as (`a **b**` as `a
    b`), else as written; a match may run across inline marks (bold, code, links), never across blocks."""
    out = str(rendered)
    if not any(q and q.strip() for q in quotes):
        return trusted(out)
    text = FoldedText(out)
    spans = []
    for quote in quotes:
        found = next((s for s in (text.find(w) for w in forms(quote)) if s), None)
        if found:
            spans.append(found)
    return trusted(text.marked(merged(spans)))


def forms(quote: str) -> list[str]:
    """The quote folded as its Markdown reads and as it was written (a referee quotes the answer's source)."""
    written = fold(quote)
    read = fold("".join(flat(inline(quote)))) if written else ""
    return [read, written] if read and read != written else [written]


def fold(words: str) -> str:
    """Control and invisible characters and every run of whitespace one space, as the referee compares quotes."""
    return " ".join(CONTROL.sub(" ", words).split())


def flat(nodes: list):
    """The text of inline nodes, a hard line break (`<br>`) a space as in the answer's text."""
    for n in nodes:
        if isinstance(n, str):
            yield n
        elif n["t"] == "br":
            yield " "
        else:
            yield from flat(n["c"])


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping matches as one: two quotes sharing words are one highlight."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


class FoldedText:
    """The text of rendered markup as one folded string (`self.folded`), with where each position is in it.

    `folded_at[k]` and `markup_at[k]` pair positions on both sides of each piece that reads differently (its start
    and its end); between two pairs both sides move together. An inline tag reads as nothing, so its pair's two
    entries share a folded position: a match starting there starts after the tag, one ending there ends before."""

    def __init__(self, markup: str):
        self.markup = markup
        self.folded_at, self.markup_at, self.inline_tags = [0], [0], []
        spaced = CONTROL.sub(" ", WHITE.sub(" ", markup))      # one character for one: positions are kept
        parts: list[str]
        parts, last, shift = [], 0, 0                           # shift: markup position minus folded position
        for m in PIECE.finditer(spaced):
            start, end = m.span()
            inline_tag, first = m[1] is not None, m[0][0]
            reads = ("" if inline_tag else " " if first == " " or m[0] == "<br>" else BREAK if first == "<"
                     else ENTITIES[m[0]])
            at = start - shift
            parts += (spaced[last:start], reads)
            self.folded_at += (at, at + len(reads))
            self.markup_at += (start, end)
            if inline_tag:
                self.inline_tags.append((start, end))
            shift, last = end - at - len(reads), end
        parts.append(spaced[last:])
        self.folded = "".join(parts)

    def find(self, words: str) -> tuple[int, int] | None:
        """The markup span of the first match of folded `words`, or None."""
        if not words:
            return None
        at = self.folded.find(words)
        return None if at < 0 else (self.start(at), self.end(at + len(words)))

    def start(self, at: int) -> int:
        k = bisect_right(self.folded_at, at) - 1               # the last piece at `at`: past an inline tag there
        return self.markup_at[k] + at - self.folded_at[k]

    def end(self, at: int) -> int:
        k = bisect_left(self.folded_at, at)                     # the first piece at `at`: before a tag there
        if k < len(self.folded_at) and self.folded_at[k] == at:
            return self.markup_at[k]
        return self.markup_at[k - 1] + at - self.folded_at[k - 1]

    def marked(self, spans: list[tuple[int, int]]) -> str:
        """The markup with each span's text in <mark>: split around the inline tags inside it, so every <mark>
        holds text (and hard line breaks) alone and the markup stays well formed."""
        out, done = [], 0
        tags = self.inline_tags
        for start, end in spans:
            out.append(self.markup[done:start])
            k = bisect_left(tags, (start, start))
            at = start
            while k < len(tags) and tags[k][1] <= end:
                out += (_marked(self.markup[at:tags[k][0]]), self.markup[tags[k][0]:tags[k][1]])
                at, k = tags[k][1], k + 1
            out.append(_marked(self.markup[at:end]))
            done = end
        out.append(self.markup[done:])
        return "".join(out)


def _marked(text: str) -> str:
    return f"<mark>{text}</mark>" if text else ""
