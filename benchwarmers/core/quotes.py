"""Whether a referee's quote is a whole sentence or clause of a seat's answer: it must start where one starts and end
where one ends (after folding), so a fragment of a seat's words ("The capital of Australia is") cannot be pinned on
it as what it claims."""
from __future__ import annotations

import re

# Invisible and control characters: out before comparing, as the referee's own text loses them.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
PUNCT = ".!?;:,\u2026"                       # ends a clause where a space, the end or another mark follows
CLOSERS = ")]}\"'\u201d\u2019\u00bb|"              # a clause may end right before one of these
OPENERS = "\"'\u201c\u2018\u00ab([{|"              # ...and start right after one of these
APOSTROPHES = "'\u2019"                          # inside a word ("isn't") they are no quotation mark
# A line that is a block of its own: a list item, a quote, a heading, a table row. Its start and end are a clause's.
BLOCK = re.compile(r"(?:[-*+\u2022]\s+|\d{1,3}[.)]\s+|>\s*|#{1,6}\s+|\|\s*)+")
DASH = re.compile(r" [-\u2014\u2013]{1,3} ")              # a spaced dash between clauses
DASH_BEFORE = re.compile(r" [-\u2014\u2013]{1,3} \Z")
PAD = "   "    # around the text: a character looked at past its ends (never more than 3: see _char) reads as a space


def fold(text: str) -> str:
    """Control and invisible characters out, every run of whitespace one space: how quotes are compared."""
    if text.isprintable():   # none of CONTROL (all unprintable), and no whitespace but the space: only runs of it
        if "  " not in text and text[:1] != " " and text[-1:] != " ":
            return text
        return " ".join(text.split())
    return " ".join(CONTROL.sub(" ", text).split())


class Clauses:
    """An answer folded as fold() does it, and where its sentences and clauses start and end: at its ends, at a
    paragraph's or a block line's ends, and around sentence and clause marks (. ! ? ; : , a spaced dash, brackets,
    quotation marks); the marks are looked at only where a quote is found."""

    def __init__(self, answer: str):
        self.starts: set[int] = {0}
        self.ends: set[int]
        if "\n" not in answer:           # one line: its ends and its marks are all there is
            self.text = fold(answer)
            self.ends = {len(self.text)}
            self._around = PAD + self.text + PAD
            return
        lines = [fold(line) for line in answer.split("\n")]
        self.ends = set()
        parts, at = [], 0
        for i, line in enumerate(lines):
            if not line:
                continue
            block = BLOCK.match(line)
            before = lines[i - 1] if i else ""
            after = lines[i + 1] if i + 1 < len(lines) else ""
            if not before or block or BLOCK.match(before):      # a paragraph's or a block's first line
                self.starts.add(at + (block.end() if block else 0))
            if not after or block or BLOCK.match(after):        # ... and its last
                self.ends.add(at + len(line))
            parts.append(line)
            at += len(line) + 1
        self.text = " ".join(parts)
        self.ends.add(len(self.text))
        self._around = PAD + self.text + PAD

    def whole(self, quote: str) -> bool:
        """Whether `quote` (folded) occurs in the answer from a clause's start to a clause's end."""
        if not quote:
            return False
        at, size = self.text.find(quote), len(quote)
        while at >= 0:
            if self._starts(at) and self._ends(at + size):
                return True
            at = self.text.find(quote, at + 1)
        return False

    def _char(self, i: int) -> str:
        """The character at `i`, a space past the text's ends: `i` is at most 3 outside it (a quote's start or end,
        and the marks either side of them), so the padded text holds it."""
        return self._around[i + 3]

    def _word_inside(self, i: int) -> bool:
        """An apostrophe between two letters ("isn't"): no quotation mark."""
        return self._char(i) in APOSTROPHES and self._char(i - 1).isalnum() and self._char(i + 1).isalnum()

    def _stop(self, i: int) -> bool:
        """The character at `i` ends a clause: a mark followed by a space, the end or another mark (not the dot of
        3.14, the comma of 1,000 or a URL's colon), or a closing bracket or quotation mark."""
        ch, nxt = self._around[i + 3], self._around[i + 4]     # _char(i), _char(i + 1)
        if ch in PUNCT:
            return nxt == " " or nxt in PUNCT or nxt in CLOSERS
        return ch in CLOSERS and not self._word_inside(i)

    def _starts(self, at: int) -> bool:
        if at in self.starts:
            return True
        before = self._char(at - 1)
        if before in OPENERS and not self._word_inside(at - 1):
            return True
        return before == " " and (self._stop(at - 2) or DASH_BEFORE.search(self.text, max(at - 5, 0), at) is not None)

    def _ends(self, end: int) -> bool:
        if end in self.ends:
            return True
        here = self._char(end)
        if self._stop(end) or here in OPENERS and self._char(end - 1) != " " and not self._word_inside(end):
            return True
        return here == " " and (self._stop(end + 1) or self._char(end + 1) in OPENERS
                                or DASH.match(self.text, end) is not None)
