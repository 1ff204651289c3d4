"""Output helpers: data to stdout, everything else to stderr, plain tables, JSON on request."""
from __future__ import annotations

import json
import sys
import time


def emit_json(data) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def note(text: str = "") -> None:
    sys.stderr.write(text + "\n")


def when(epoch) -> str:
    """Epoch seconds as local time to the minute; empty for none."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch)) if epoch else ""


def table(headers: list[str], rows: list[list], out=None) -> None:
    out = out or sys.stdout
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = lambda values: "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()
    out.write(line(headers) + "\n")
    for r in cells:
        out.write(line(r) + "\n")


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
