"""Token counts without a tokenizer: every estimate of an ask's or an answer's tokens the bench makes."""
from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """An honest upper-ish estimate without a tokenizer: ~4 characters a token, denser for non-ASCII."""
    return estimate(len(text), ascii_chars(text))


def estimate(chars: int, ascii_count: int) -> int:
    return (ascii_count + 3) // 4 + (chars - ascii_count) if chars else 0


def ascii_chars(text: str) -> int:
    """The ASCII characters of a text, counted in C (this runs on every ask), without a copy when all are."""
    return len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
