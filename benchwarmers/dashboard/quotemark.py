"""Each seat's quoted words marked in its rendered answer: escaped first, then found in the text between tags."""
from __future__ import annotations

import html as _html
import re

from .markup import Html, trusted

TAG = re.compile(r"(<[^>]*>)")


def mark(rendered: Html, quotes: list[str]) -> Html:
    """`rendered` (markup from the escaping Markdown renderer) with each quote's first match in its text, after
    whitespace folding, put in <mark>. The quote is escaped first and matched only in text between tags, so a
    hostile quote can match nothing but the escaped text it already is; the only markup added is <mark>."""
    out = str(rendered)
    for words in quotes:
        tokens = _html.escape(words, quote=False).split()
        if not tokens:
            continue
        pattern = re.compile(r"\s+".join(map(re.escape, tokens)))
        parts = TAG.split(out)
        for i in range(0, len(parts), 2):          # the even parts are text, the odd ones tags
            m = next((m for m in pattern.finditer(parts[i]) if whole(parts[i], m.start(), m.end())), None)
            if m:
                text = parts[i]
                parts[i] = f"{text[:m.start()]}<mark>{m.group(0)}</mark>{text[m.end():]}"
                break
        out = "".join(parts)
    return trusted(out)


def whole(text: str, start: int, end: int) -> bool:
    """Neither end of text[start:end] cuts an entity (`&amp;`) in two: a quote "amp;" marks no half of one."""
    return not (OPEN_ENTITY.search(text, 0, start) or OPEN_ENTITY.search(text, 0, end))


OPEN_ENTITY = re.compile(r"&[#\w]*$")
