"""A small, safe Markdown renderer for model answers: text in, a tree of allowed nodes out, as HTML or JSON.

Nothing in the input becomes markup: raw HTML stays text, links keep only http, https and mailto targets, and
images are shown as text (a page never fetches what an answer names). The tree ({"t": tag, "c": children} with
strings for text) is what the Ask page's script builds DOM nodes from; to_html() is the server's rendering.
"""
from __future__ import annotations

import gc
import html
import re
import threading
from contextlib import contextmanager

from .inline_marks import inline, node
from .markup import Html, trusted

TAGS = {"p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "hr", "strong", "em", "del",
        "a", "table", "thead", "tbody", "tr", "th", "td", "br"}
VOID = {"hr", "br"}
MAX_DEPTH = 8                    # lists and quotes inside each other; deeper lines are plain paragraphs
PLAIN_PAST = 1024 * 1024         # characters: a longer answer is shown as plain text, unparsed
# Each pattern reads one line and cannot backtrack: a block's structure comes from its lines' patterns alone.
FENCE = re.compile(r" {0,3}(```|~~~)[ \t]*([\w+.-]*)[ \t]*\Z")
HEADING = re.compile(r" {0,3}(#{1,6})\s+")
BULLET = re.compile(r"( {0,3})([-*+])\s+(.*)\Z")
NUMBER = re.compile(r"( {0,3})(\d{1,9})[.)]\s+(.*)\Z")
QUOTE = re.compile(r" {0,3}>\s?(.*)\Z")
OPENS = re.compile(r" {0,3}(```|~~~|[#>*+_\d-])")        # what any block but a table starts with: a quick test
RULE = re.compile(r" {0,3}([-*_])(?:\s*+\1){2,}+\s*+\Z")   # `---`, `* * *`: possessive, so never backtracking
TABLE_RULE = re.compile(r"\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?")     # matched whole on a stripped line


def parse(text: str) -> list:
    """The answer as a list of block nodes."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
    lines = text.split("\n")
    with collector_paused():
        return _plain(lines) if len(text) > PLAIN_PAST else blocks(lines)


_paused = {"parses": 0, "was_on": False}
_pause_lock = threading.Lock()


@contextmanager
def collector_paused():
    """Python's cycle collector off while a parse runs (in any thread), as it was before once none runs.

    A parse only builds a tree, which holds no cycle for the collector to free; yet its passes over the growing
    tree cost up to twice the parse itself on deeply nested answers (measured: 640 ms with it, 380 without)."""
    with _pause_lock:
        if _paused["parses"] == 0:
            _paused["was_on"] = gc.isenabled()
            gc.disable()
        _paused["parses"] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused["parses"] -= 1
            if _paused["parses"] == 0 and _paused["was_on"]:
                gc.enable()


def blocks(lines: list[str], depth: int = 0) -> list:
    if depth >= MAX_DEPTH:
        return _plain(lines, marks=True)
    out, i = [], 0
    while i < len(lines):
        if lines[i].isspace() or not lines[i]:
            i += 1
            continue
        opens = OPENS.match(lines[i])
        readers = READERS.get(opens.group(1)[0], LIST_READERS) if opens else TABLE_READERS
        for reader in readers:
            found = reader(lines, i, depth)
            if found:
                block, i = found
                out.append(block)
                break
        else:
            block, i = _paragraph(lines, i)
            out.append(block)
    return out


def _plain(lines: list[str], marks: bool = False) -> list:
    """Paragraphs split at blank lines and nothing more: text past the size or depth where structure is read."""
    out, body = [], []
    for line in lines + [""]:
        if line.strip():
            body.append(line)
        elif body:
            text = "\n".join(body).strip()
            out.append(node("p", inline(text) if marks else [text]))
            body = []
    return out


def starts_block(line: str) -> bool:
    """Whether the line opens a block that ends a paragraph before it."""
    return bool(OPENS.match(line)) and bool(FENCE.match(line) or HEADING.match(line) or _is_rule(line)
                                            or QUOTE.match(line) or BULLET.match(line) or NUMBER.match(line))


def _fence(lines, i, depth):
    m = FENCE.match(lines[i])
    if not m:
        return None
    body, j = [], i + 1
    fence = m.group(1)
    while j < len(lines) and not (lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])):
        body.append(lines[j])
        j += 1
    return node("pre", [node("code", ["\n".join(body)])]), j + 1


def _heading(lines, i, depth):
    m = HEADING.match(lines[i])
    if not m:
        return None
    title = lines[i][m.end():].rstrip()
    bare = title.rstrip("#")
    if not bare or bare[-1] in " \t":       # a closing run of #s counts only after a space
        title = bare.rstrip()
    return node(f"h{min(6, len(m.group(1)) + 2)}", inline(title)), i + 1   # answers sit under page headings


def _is_rule(line: str) -> bool:
    return bool(RULE.match(line))


def _rule(lines, i, depth):
    return (node("hr"), i + 1) if _is_rule(lines[i]) else None


def _quote(lines, i, depth):
    inner, j = [], i
    while j < len(lines) and (m := QUOTE.match(lines[j])):
        inner.append(m.group(1))
        j += 1
    return (node("blockquote", blocks(inner, depth + 1)), j) if inner else None


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [c.strip() for c in line.split("|")]


def _table(lines, i, depth):
    if "|" not in lines[i] or i + 1 >= len(lines) or not TABLE_RULE.fullmatch(lines[i + 1].strip()):
        return None
    head = node("thead", [node("tr", [node("th", inline(c)) for c in _cells(lines[i])])])
    rows, j = [], i + 2
    while j < len(lines) and "|" in lines[j] and lines[j].strip():
        rows.append(node("tr", [node("td", inline(c)) for c in _cells(lines[j])]))
        j += 1
    return node("table", [head, node("tbody", rows)]), j


def _list(lines, i, depth):
    first = BULLET.match(lines[i]) or NUMBER.match(lines[i])
    if not first:
        return None
    marker = NUMBER if first.re is NUMBER else BULLET
    items, j = [], i
    while j < len(lines):
        m = marker.match(lines[j])
        if not m:
            break
        body, j = _item_lines(lines, j + 1, [m.group(3)])
        items.append(node("li", _item(body, depth + 1)))
        while j < len(lines) and not lines[j].strip() and j + 1 < len(lines) and marker.match(lines[j + 1]):
            j += 1
    attrs = {"start": int(first.group(2))} if marker is NUMBER and first.group(2) != "1" else {}
    return node("ol" if marker is NUMBER else "ul", items, **attrs), j


def _item(body: list[str], depth: int) -> list:
    """An item's content; a tight item's is its text without a paragraph around it."""
    if len(body) == 1 and not OPENS.match(body[0]):        # one line of text, the most common item: no block
        text = body[0].strip()
        return inline(text) if text else []
    content = blocks(body, depth)
    return content[0]["c"] if len(content) == 1 and content[0]["t"] == "p" else content


def _item_lines(lines, j, body):
    """An item's lines after its first: those indented by two spaces, and blank lines between them."""
    while j < len(lines):
        if lines[j].startswith("  ") and lines[j].strip():
            body.append(lines[j][2:])
        elif not lines[j].strip() and j + 1 < len(lines) and lines[j + 1].startswith("  "):
            body.append("")
        else:
            break
        j += 1
    return body, j


# The readers that may take a line, by what it opens with, in the order all are tried (a table before a list):
# one opening character rules out the others without their patterns being run.
TABLE_READERS = (_table,)
LIST_READERS = (_table, _list)                         # a digit: a numbered list
READERS = {"`": (_fence, _table), "~": (_fence, _table), "#": (_heading, _table), ">": (_quote, _table),
           "-": (_rule, _table, _list), "*": (_rule, _table, _list), "_": (_rule, _table), "+": LIST_READERS}


def _paragraph(lines, i):
    body, j = [], i
    while j < len(lines) and lines[j].strip():
        if j > i and starts_block(lines[j]):
            break
        body.append(lines[j])
        j += 1
    return node("p", inline("\n".join(body).strip())), j


# ---- HTML --------------------------------------------------------------------------------------

def to_html(nodes: list) -> str:
    out: list[str] = []
    _emit(nodes, out)
    return "".join(out)


def _emit(nodes: list, out: list[str]) -> None:
    """Each node's HTML appended to one list: nested nodes are never joined level by level, so depth costs nothing."""
    for n in nodes:
        if isinstance(n, str):
            out.append(html.escape(n, quote=False))
            continue
        tag = n["t"] if n.get("t") in TAGS else "span"
        if tag in VOID:
            out.append(f"<{tag}>")
            continue
        if tag == "a":
            out.append(f'<a href="{html.escape(n.get("href", ""), quote=True)}" rel="noopener noreferrer nofollow">')
        elif tag == "ol" and isinstance(n.get("start"), int):
            out.append(f'<ol start="{n["start"]}">')
        else:
            out.append(f"<{tag}>")
        _emit(n.get("c", []), out)
        out.append(f"</{tag}>")


def render(text: str) -> Html:
    """The answer as HTML: this module's own escaping (every text node, every href) makes it safe to trust."""
    return trusted(to_html(parse(text)))
