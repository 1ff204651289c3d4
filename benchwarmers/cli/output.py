"""Output helpers: data to stdout, everything else to stderr, plain tables, JSON on request."""
from __future__ import annotations

import json
import shutil
import sys
import time

NARROWEST = 8         # a column cut to fit a terminal keeps at least this many characters


def emit_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str = "") -> None:
    sys.stderr.write(text + "\n")


def when(epoch) -> str:
    """Epoch seconds as local time to the minute; empty for none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else ""


def table(headers: list[str], rows: list[list], out=None, fit: bool = False) -> None:
    """Columns two spaces apart. With `fit`, a table wider than the terminal has its widest cells cut (…) to fit;
    piped output is never cut."""
    out = out or sys.stdout
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    limit = terminal_width(out) if fit else None
    if limit:
        widths = fit_widths(widths, limit)
        headers, cells = cut(headers, widths), [cut(r, widths) for r in cells]
    line = lambda values: "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()
    out.write(line(headers) + "\n")
    for r in cells:
        out.write(line(r) + "\n")


def terminal_width(out) -> int | None:
    """The terminal's columns when `out` is one; None for a pipe or a file."""
    isatty = getattr(out, "isatty", None)
    return shutil.get_terminal_size().columns if isatty and isatty() else None


def fit_widths(widths: list[int], limit: int) -> list[int]:
    """Column widths narrowed, the widest first and never the first column, until a line fits in `limit`."""
    widths = list(widths)
    while sum(widths) + 2 * (len(widths) - 1) > limit:
        i = max(range(1, len(widths)), key=lambda k: widths[k], default=None)
        if i is None or widths[i] <= NARROWEST:
            break
        widths[i] -= 1
    return widths


def cut(values: list[str], widths: list[int]) -> list[str]:
    return [v if len(v) <= w else v[: w - 1] + "…" for v, w in zip(values, widths)]


def confirm(question: str, assume_yes: bool) -> bool:
    """Destructive commands ask first; --yes answers for scripts; no terminal means no."""
    if assume_yes:
        return True
    if not sys.stdin or not sys.stdin.isatty():
        note(question + " Refused: no terminal to ask on; add --yes to confirm.")
        return False
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
