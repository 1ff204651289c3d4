"""The client formats, by name: each parses a request into an Ask, renders Answers and Events back, and declares
its routes, its paths (the error shape of a 404 under them) and the upstream API it passes through natively.
Adding a format is its module, meeting FormatContract (formats/contract.py), and one name in FORMATS."""
from __future__ import annotations

import re
from ..errors import NotFound
from . import anthropic, gemini, ollama, openai_chat, openai_completions, openai_responses
from .base import FormatRoute, Lookup, ReplyInfo, RequestInfo
from .contract import FormatContract

FORMATS: dict[str, FormatContract] = {m.NAME: m for m in (openai_chat, openai_responses, openai_completions,
                                                      anthropic, gemini, ollama)}
# error shape -> the format that renders it (the first declared); path pattern -> its format's shape
SHAPES: dict[str, FormatContract] = {}
for _module in FORMATS.values():
    SHAPES.setdefault(_module.SHAPE, _module)
_PATHS = [(re.compile(m.PATHS, re.DOTALL), m.SHAPE) for m in FORMATS.values() if m.PATHS]
# (path prefix, error shape) of each API, in declaration order: a path that lacks its prefix or has it twice is
# a base URL set wrong, and the route table says which base URL to use
PREFIXES: list[tuple[str, str]] = list(dict.fromkeys((p, m.SHAPE) for m in FORMATS.values() for p in m.PREFIXES))

__all__ = ["FORMATS", "PREFIXES", "SHAPES", "FormatContract", "FormatRoute", "Lookup", "ReplyInfo", "RequestInfo",
           "error_body", "get", "shape_of_path"]


def get(name: str) -> FormatContract:
    try:
        return FORMATS[name]
    except KeyError:
        raise NotFound(f"No client format named {name!r}.", f"Use one of: {', '.join(sorted(FORMATS))}.") from None


def shape_of_path(path: str) -> str | None:
    """The error shape of the API a path belongs to, from the formats' PATHS (the longest match wins)."""
    best, shape = 0, None
    for pattern, candidate in _PATHS:
        m = pattern.match(path)
        if m and m.end() > best:
            best, shape = m.end(), candidate
    return shape


def error_body(shape: str, err: BaseException) -> dict:
    """An error in one API's own shape."""
    return SHAPES[shape].error_body(err)
