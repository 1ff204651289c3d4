"""The one rule for names a user gives (gateway keys, endpoints, collections, model aliases), checked everywhere; and
the length free text a user writes (descriptions, reasons, notes, claims) may have."""
from __future__ import annotations

import re
from typing import Literal, overload

from .errors import BadRequest

# Letters, digits, '.', '_' and '-', 1 to 64 of them, starting with a letter or digit: a name fits in a URL path
# segment (so every name can be revoked, removed or shown), an environment variable's suffix and a table cell,
# and holds no slash, space, control character, bidi override or markup.
RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,63}")


def is_name(value) -> bool:
    """Whether `value` follows the name rule (a catalog's provider id is checked with this, quietly)."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value))


def check_name(value, what: str) -> str:
    """`value` when it follows the rule; else a 400 that says what is allowed (the bad value shown escaped)."""
    if not is_name(value):
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."   # not a 5,000-character echo
        raise BadRequest(f"{what} {shown} is not a valid name.", f"Use {RULE}.")
    return value


# Free text kept in the config or the record and shown on pages and in listings: long enough for any honest use, short
# enough that no one text can swell a page, a listing or a file.
DESCRIPTION_MOST, REASON_MOST, NOTE_MOST, CLAIM_MOST, CLAIMS_MOST = 1000, 500, 4000, 1000, 100


@overload
def check_text(value, what: str, most: int, optional: Literal[False]) -> str: ...
@overload
def check_text(value, what: str, most: int, optional: bool = True) -> str | None: ...
def check_text(value, what: str, most: int, optional: bool = True) -> str | None:
    """`value` when it is text of at most `most` characters (None too, when optional); else a 400 naming the limit."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{what} must be text.")
    if len(value) > most:
        raise BadRequest(f"{what} holds {len(value):,} characters; at most {most:,} are kept.", f"Shorten the {what}.")
    return value
