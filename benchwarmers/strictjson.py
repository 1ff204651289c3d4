"""JSON as clients send it, read strictly: what Python's json module lets through but JSON has not (NaN, Infinity,
a number too large for a float) is refused, and a lone UTF-16 surrogate escape becomes U+FFFD. Each of these once
got into a setting, a price or a record and broke everything that used it next."""
from __future__ import annotations

import json
import math
import re

# A \u escape of a UTF-16 surrogate. json joins a well-formed pair into one character and keeps a lone one as a
# string no codec can encode (hashing it, storing it or sending it fails), so only bodies holding such an escape
# are looked through.
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# the same pattern for a str, looked through without encoding it
SURROGATE_ESCAPE_TEXT = re.compile(SURROGATE_ESCAPE.pattern.decode())
SURROGATE = re.compile("[\ud800-\udfff]")


class NotJson(ValueError):
    """Valid to Python's json module, not to JSON."""


def _constant(name: str):
    raise NotJson(f"{name} is not a JSON number: send a finite number, or null")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJson(f"the number {text[:40]} is too large: send one within a float's range")
    return value


def loads(raw: bytes | str):
    """json.loads, strict as above; ValueError (NotJson, JSONDecodeError), UnicodeDecodeError or RecursionError
    for what cannot be read."""
    data = json.loads(raw, parse_constant=_constant, parse_float=_float)
    return mend(data) if _escaped(raw) else data


def lenient(raw: bytes | str):
    """json.loads with lone surrogates mended, nothing refused: for what upstreams answer, where a NaN is theirs to
    send and a lone surrogate would otherwise fail the seat's record and the panel's reply."""
    data = json.loads(raw)
    return mend(data) if _escaped(raw) else data


def _escaped(raw: bytes | str) -> bool:
    """Whether `raw` holds a surrogate's escape (a literal lone surrogate in a str is no escape, and stays)."""
    return bool(SURROGATE_ESCAPE_TEXT.search(raw) if isinstance(raw, str) else SURROGATE_ESCAPE.search(raw))


def mend(value):
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [mend(v) for v in value]
    if isinstance(value, dict):
        return {mend(k): mend(v) for k, v in value.items()}
    return value


def deeper_than(value, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep; looked through without recursion, so a
    value nested deeper than Python's stack is told too."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False
