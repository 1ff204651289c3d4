"""Numbers from users (JSON bodies, forms, the CLI, hand-edited files): a real number, never a bool, never NaN or
an infinity. JSON as Python reads it allows NaN, Infinity and 1e400 (infinity), and `true` is an int in Python;
each of these once got through a check like `value > 0` and broke whatever used the number next."""
from __future__ import annotations

import math
from typing import TypeGuard


def finite(value) -> TypeGuard[int | float]:
    """An int or a finite float, not a bool."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def whole(value) -> bool:
    """A finite number with nothing after the point (3 or 3.0, not 3.5)."""
    return finite(value) and value == int(value)


def typed_seconds(text: str) -> float | str | None:
    """Seconds typed in a form or on the command line: empty is None (the setting's value), a number a float,
    anything else kept as typed, for the API's check to refuse in its own words."""
    try:
        return float(text) if text.strip() else None
    except ValueError:
        return text


ROW_ID_MAX = 2 ** 63 - 1    # SQLite's largest integer: a bigger id cannot be a row, and binding it raises


def row_id(text: str) -> int | None:
    """A row id given in a path (`/bench/jobs/12`), or None when it is not one SQLite could hold."""
    text = text.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()) or len(text) > 20:
        return None
    number = int(text)
    return number if -ROW_ID_MAX <= number <= ROW_ID_MAX else None
