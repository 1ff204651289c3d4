"""A small, safe Markdown renderer for model answers: text in, a tree of allowed nodes out, as HTML or JSON.

Nothing in the input becomes markup: raw HTML stays text, links keep only http, https and mailto targets, and
images are shown as text (a page never fetches what an answer names). The tree ({"t": tag, "c": children} with
strings for text) is what the Ask page's script builds DOM nodes from; to_html() is the server's rendering.
"""
from __future__ import annotations

import html
import re

TAGS = {"p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "hr", "strong", "em", "del",
        "a", "table", "thead", "tbody", "tr", "th", "td", "br"}
VOID = {"hr", "br"}
SAFE_HREF = re.compile(r"^(https?://|mailto:)[^\s<>\"']+$", re.I)
FENCE = re.compile(r"^ {0,3}(```|~~~)\s*([\w+.-]*)\s*$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
BULLET = re.compile(r"^( {0,3})([-*+])\s+(.*)$")
NUMBER = re.compile(r"^( {0,3})(\d{1,9})[.)]\s+(.*)$")
QUOTE = re.compile(r"^ {0,3}>\s?(.*)$")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|!\[(?P<img_alt>[^\]]*)\]\((?P<img_src>[^)\s]*)[^)]*\)"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<link_href>[^)\s]+)(?:\s+\"[^\"]*\")?\)"
    r"|<(?P<auto>(?:https?://|mailto:)[^>\s]+)>"
    r"|(?P<bare>https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"])"
    r"|(?P<strong>\*\*|__)(?P<strong_text>.+?)(?P=strong)"
    r"|(?P<del>~~)(?P<del_text>.+?)~~"
    r"|(?<![\w*])(?P<em>[*_])(?P<em_text>[^\s*_](?:.*?[^\s])?)(?P=em)(?![\w*])"
    r"|(?P<br>  \n|\\\n)",
    re.S)


def node(tag: str, children=None, **attrs) -> dict:
    d = {"t": tag, "c": children if children is not None else []}
    d.update(attrs)
    return d


# ---- inline ------------------------------------------------------------------------------------

def inline(text: str) -> list:
    out: list = []
    pos = 0
    for m in INLINE.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(_inline_match(m))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def _inline_match(m: re.Match):
    if m.group("code"):
        return node("code", [m.group("code_text").strip() or m.group("code_text")])
    if m.group("img_src") is not None:
        return f"[image: {m.group('img_alt') or m.group('img_src')}]"
    if m.group("link_text") is not None:
        return link(m.group("link_href"), inline(m.group("link_text")), m.group(0))
    if m.group("auto"):
        return link(m.group("auto"), [m.group("auto")], m.group(0))
    if m.group("bare"):
        return link(m.group("bare"), [m.group("bare")], m.group(0))
    if m.group("strong"):
        return node("strong", inline(m.group("strong_text")))
    if m.group("del"):
        return node("del", inline(m.group("del_text")))
    if m.group("em"):
        return node("em", inline(m.group("em_text")))
    return node("br")


def link(href: str, children: list, original: str):
    return node("a", children, href=href) if SAFE_HREF.match(href) else original


# ---- blocks ------------------------------------------------------------------------------------

def parse(text: str) -> list:
    """The answer as a list of block nodes."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ").split("\n")
    return blocks(lines)


def blocks(lines: list[str]) -> list:
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        for reader in (_fence, _heading, _rule, _quote, _table, _list):
            found = reader(lines, i)
            if found:
                block, i = found
                out.append(block)
                break
        else:
            block, i = _paragraph(lines, i)
            out.append(block)
    return out


def _fence(lines, i):
    m = FENCE.match(lines[i])
    if not m:
        return None
    body, j = [], i + 1
    fence = m.group(1)
    while j < len(lines) and not (lines[j].strip().startswith(fence) and not lines[j].strip().strip(fence[0])):
        body.append(lines[j])
        j += 1
    return node("pre", [node("code", ["\n".join(body)])]), j + 1


def _heading(lines, i):
    m = HEADING.match(lines[i])
    if not m:
        return None
    return node(f"h{min(6, len(m.group(1)) + 2)}", inline(m.group(2))), i + 1   # answers sit under page headings


def _rule(lines, i):
    return (node("hr"), i + 1) if RULE.match(lines[i]) else None


def _quote(lines, i):
    if not QUOTE.match(lines[i]):
        return None
    inner, j = [], i
    while j < len(lines) and lines[j].strip() and QUOTE.match(lines[j]):
        inner.append(QUOTE.match(lines[j]).group(1))
        j += 1
    return node("blockquote", blocks(inner)), j


def _cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") else line
    return [c.strip() for c in line.split("|")]


def _table(lines, i):
    if "|" not in lines[i] or i + 1 >= len(lines) or not TABLE_RULE.match(lines[i + 1]):
        return None
    head = node("thead", [node("tr", [node("th", inline(c)) for c in _cells(lines[i])])])
    rows, j = [], i + 2
    while j < len(lines) and "|" in lines[j] and lines[j].strip():
        rows.append(node("tr", [node("td", inline(c)) for c in _cells(lines[j])]))
        j += 1
    return node("table", [head, node("tbody", rows)]), j


def _list(lines, i):
    first = BULLET.match(lines[i]) or NUMBER.match(lines[i])
    if not first:
        return None
    ordered = first.re is NUMBER
    items, j = [], i
    while j < len(lines):
        m = (NUMBER if ordered else BULLET).match(lines[j])
        if not m:
            break
        body, j = [m.group(3)], j + 1
        while j < len(lines) and (lines[j].startswith("  ") and lines[j].strip()
                                  or not lines[j].strip() and j + 1 < len(lines) and lines[j + 1].startswith("  ")):
            body.append(lines[j][2:] if lines[j].startswith("  ") else "")
            j += 1
        content = blocks(body)
        if len(content) == 1 and content[0]["t"] == "p":
            content = content[0]["c"]          # a tight item: its text without a paragraph around it
        items.append(node("li", content))
        while j < len(lines) and not lines[j].strip() and j + 1 < len(lines) and \
                (NUMBER if ordered else BULLET).match(lines[j + 1]):
            j += 1
    attrs = {"start": int(first.group(2))} if ordered and first.group(2) != "1" else {}
    return node("ol" if ordered else "ul", items, **attrs), j


def _paragraph(lines, i):
    body, j = [], i
    while j < len(lines) and lines[j].strip():
        if j > i and any(r(lines, j) for r in (_fence, _heading, _rule, _quote, _list)):
            break
        body.append(lines[j])
        j += 1
    text = "\n".join(body)
    return node("p", inline(text.strip())), j


# ---- HTML --------------------------------------------------------------------------------------

def to_html(nodes: list) -> str:
    return "".join(_html(n) for n in nodes)


def _html(n) -> str:
    if isinstance(n, str):
        return html.escape(n, quote=False)
    tag = n["t"] if n.get("t") in TAGS else "span"
    attrs = ""
    if tag == "a":
        attrs = f' href="{html.escape(n.get("href", ""), quote=True)}" rel="noopener noreferrer nofollow"'
    elif tag == "ol" and isinstance(n.get("start"), int):
        attrs = f' start="{n["start"]}"'
    if tag in VOID:
        return f"<{tag}>"
    return f"<{tag}{attrs}>" + "".join(_html(c) for c in n.get("c", [])) + f"</{tag}>"


def render(text: str) -> str:
    return to_html(parse(text))
