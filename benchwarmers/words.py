"""Counted nouns: the one helper that makes every message say "1 model" and "3 models"."""
from __future__ import annotations


def plural(count, noun: str, many: str | None = None) -> str:
    """'1 model', '3 models' (`many`: an irregular plural); an unknown count (None) reads 'an unknown number of
    models'."""
    many = many or noun + "s"
    if count is None:
        return f"an unknown number of {many}"
    return f"{count} {noun if count == 1 else many}"
