"""Markdown's inline marks (code, links, emphasis, breaks) read in one pass: the cost is linear in the text.

A model's answer is hostile input, so nothing here may backtrack: each mark's closer is found by a forward search
whose answer is kept (`_Search`), so a flood of openers with no closer costs one scan, not one per opener. Marks
nest at most MAX_DEPTH deep; deeper, the text stays text.
"""
from __future__ import annotations

import re

MAX_DEPTH = 6
# Where a mark may start; everything between two of these is plain text, skipped by the regex engine at C speed.
START = re.compile(r"[`*_~\[!<\\\n]|https?://")
TICKS = re.compile(r"`+")
SPACE = re.compile(r"\s")
URL_STOP = re.compile(r"[\s<>()\[\]]")
URL_TRAIL = ".,;:!?'\""
AUTO_PREFIXES = ("https://", "http://", "mailto:")
SAFE_HREF = re.compile(r"(?:https?://|mailto:)[^\s<>\"']+\Z", re.I)


def node(tag: str, children=None, **attrs) -> dict:
    return {"t": tag, "c": children if children is not None else [], **attrs}


class _Search:
    """Forward searches over text[start:end] whose last answer is kept per kind.

    An answer (asked from p, found at f) also answers any later ask from q with p <= q <= f, as nothing was found
    in between; each kind is asked from positions that only grow, so each kind scans the text once at most.
    """

    def __init__(self, text: str, start: int, end: int):
        self.text, self.start, self.end = text, start, end
        self._kept: dict = {}
        self._runs: dict | None = None
        self._run_at: dict = {}
        self.tails: dict = {}           # link and image insides by the position of their `]`

    def next(self, kind, pos: int, find) -> int:
        asked, found = self._kept.get(kind, (None, None))
        if asked is None or not asked <= pos <= found:
            found = find(pos)
            self._kept[kind] = (pos, found)
        return found

    def char(self, ch: str, pos: int, kind=None) -> int:
        """Where `ch` (or a whole token) next occurs from pos; `end` when it does not. A kind of its own keeps
        a second series of asks (from positions that grow apart from the first) from undoing the first's."""
        def find(p):
            at = self.text.find(ch, p, self.end)
            return self.end if at < 0 else at
        return self.next(kind or ch, pos, find)

    def pattern(self, kind, pattern: re.Pattern, pos: int) -> int:
        def find(p):
            m = pattern.search(self.text, p, self.end)
            return m.start() if m else self.end
        return self.next(kind, pos, find)

    def closer(self, run_start: int, length: int) -> int:
        """The next run of exactly `length` backticks after the one at run_start; -1 when there is none."""
        if self._runs is None:
            self._runs, self._run_at = {}, {}
            for m in TICKS.finditer(self.text, self.start, self.end):
                self._runs.setdefault(len(m.group()), []).append(m.start())
        starts, at = self._runs.get(length, []), self._run_at.get(length, 0)
        while at < len(starts) and starts[at] <= run_start:
            at += 1
        self._run_at[length] = at
        return starts[at] if at < len(starts) else -1


def inline(text: str, start: int = 0, end: int | None = None, depth: int = 0) -> list:
    """text[start:end] as a list of strings and inline nodes."""
    end = len(text) if end is None else end
    if depth >= MAX_DEPTH:
        return [text[start:end]] if end > start else []
    search = _Search(text, start, end)
    out: list = []
    plain = i = start
    while i < end:
        m = START.search(text, i, end)
        if not m:
            break
        at = m.start()
        made, after, keep_to = _mark(search, at, plain, depth)
        if made is None:
            i = after
            continue
        if keep_to > plain:
            out.append(text[plain:keep_to])
        out.append(made)
        plain = i = after
    if plain < end:
        out.append(text[plain:end])
    return out


def _mark(s: _Search, at: int, plain: int, depth: int):
    """(node, where reading goes on, where the plain text before it ends); node None when no mark starts at `at`."""
    text, ch = s.text, s.text[at]
    if ch == "`":
        return _code(s, at)
    if ch == "!" and text.startswith("[", at + 1, s.end):
        return _image(s, at)
    if ch == "[":
        return _link(s, at, depth)
    if ch == "<":
        return _autolink(s, at)
    if ch == "h":
        return _bare(s, at)
    if ch in "*_~":
        return _emphasis(s, at, depth)
    if ch == "\\" and text.startswith("\n", at + 1, s.end):
        return node("br"), at + 2, at
    if ch == "\n" and at - 2 >= plain and text.startswith("  ", at - 2):
        return node("br"), at + 1, at - 2
    return None, at + 1, at


def _code(s: _Search, at: int):
    ticks = TICKS.match(s.text, at, s.end)
    assert ticks is not None   # called at a backtick
    run = ticks.end() - at
    close = s.closer(at, run)
    if close < 0:
        return None, at + run, at              # no closer: the whole run is text
    body = s.text[at + run:close]
    return node("code", [body.strip() or body]), close + run, at


def _bracket_tail(s: _Search, at: int):
    """For the `[` at `at`, `[...](inner)` as (close, paren, href, title_ok), or None.

    Kept per `]`: many openers may share one, and the inside is read once."""
    close = s.char("]", at + 1)
    if close >= s.end or not s.text.startswith("(", close + 1, s.end):
        return None
    if close not in s.tails:
        paren = s.char(")", close + 2, kind="paren")
        s.tails[close] = None if paren >= s.end else _inside(s.text[close + 2:paren], close, paren)
    return s.tails[close]


def _inside(inner: str, close: int, paren: int):
    """`(href "title")`: the href is what precedes the first space; a title, if any, is one quoted string."""
    href = inner.split(None, 1)[0] if inner and not inner[0].isspace() else ""
    after = inner[len(href):]
    title = after.lstrip()
    title_ok = not after or len(title) >= 2 and title[0] == title[-1] == '"' and '"' not in title[1:-1]
    return close, paren, href, title_ok


def _image(s: _Search, at: int):
    tail = _bracket_tail(s, at + 1)
    if tail is None:
        return None, at + 1, at
    close, paren, src, _ = tail
    return f"[image: {s.text[at + 2:close] or src}]", paren + 1, at


def _link(s: _Search, at: int, depth: int):
    tail = _bracket_tail(s, at)
    if tail is None or tail[0] == at + 1 or not tail[2] or not tail[3]:
        return None, at + 1, at
    close, paren, href, _ = tail
    children = inline(s.text, at + 1, close, depth + 1)
    return link(href, children, s.text[at:paren + 1]), paren + 1, at


def _autolink(s: _Search, at: int):
    text = s.text
    prefix = next((p for p in AUTO_PREFIXES if text.startswith(p, at + 1, s.end)), None)
    if prefix is None:
        return None, at + 1, at
    gt = s.char(">", at + 1)
    space = s.pattern("space", SPACE, at + 1)
    if gt >= s.end or space < gt or gt == at + 1 + len(prefix):
        return None, at + 1, at
    target = text[at + 1:gt]
    return link(target, [target], text[at:gt + 1]), gt + 1, at


def _bare(s: _Search, at: int):
    stop = s.pattern("url", URL_STOP, at)
    url = s.text[at:stop].rstrip(URL_TRAIL)
    prefix = 8 if s.text.startswith("https://", at) else 7
    if len(url) <= prefix:
        return None, at + 1, at
    return link(url, [url], url), at + len(url), at


def _emphasis(s: _Search, at: int, depth: int):
    text, ch = s.text, s.text[at]
    double = text.startswith(ch * 2, at, s.end)
    if double:
        close = s.char(ch * 2, at + 3)
        if close < s.end:
            tag = "del" if ch == "~" else "strong"
            return node(tag, inline(text, at + 2, close, depth + 1)), close + 2, at
    if ch == "~":
        return None, at + 1, at
    before = text[at - 1] if at > s.start else ""
    first = text[at + 1] if at + 1 < s.end else ""
    if _wordish(before) or not first or first.isspace() or first in "*_":
        return None, at + 1, at
    close = s.next(("em", ch), at + 2, lambda p: _em_closer(s, ch, p))
    if close >= s.end:
        return None, at + 1, at
    return node("em", inline(text, at + 1, close, depth + 1)), close + 1, at


def _em_closer(s: _Search, ch: str, p: int) -> int:
    """The next `ch` that can close emphasis: after a non-space, not before a word character or `*`."""
    text, end = s.text, s.end
    while True:
        p = text.find(ch, p, end)
        if p < 0:
            return end
        if not text[p - 1].isspace() and (p + 1 >= end or not _wordish(text[p + 1])):
            return p
        p += 1


def _wordish(c: str) -> bool:
    return bool(c) and (c.isalnum() or c in "_*")


def link(href: str, children: list, original: str):
    return node("a", children, href=href) if SAFE_HREF.match(href) else original

