"""Output helpers: data to stdout, everything else to stderr, plain tables, JSON on request."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time

NARROWEST = 8         # a column cut to fit a terminal keeps at least this many characters

# What a terminal would act on rather than show: escape sequences (CSI: colours, cursor moves; OSC: window titles,
# clipboard writes, links; DCS and the like), the other C0 and C1 controls (a carriage return forges a line), and
# bidi overrides. Upstream text reaches the terminal through `bench ask`; it must not drive it.
_CONTROLS = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                       r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?|\x1b.?"
                       r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# A word that sh, cmd.exe (a .cmd shim's too, which splits at = , ;) and PowerShell all pass on as it is.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_+:./-][A-Za-z0-9_@+:./-]*")


def shell_line(argv: list[str], windows: bool | None = None) -> str | None:
    """A command to paste into this system's shell, each word quoted as that shell needs: for a POSIX shell by
    shlex.quote; on Windows in double quotes, which cmd.exe and PowerShell both read as they are but for `"`, `%`,
    `!`, `$` and a backtick: a command with a word holding one of those is no line to paste there (None)."""
    if not (os.name == "nt" if windows is None else windows):
        return shlex.join(argv)
    words = []
    for word in argv:
        if _PLAIN_WORD.fullmatch(word):
            words.append(word)
        elif any(c in '"%!$`' or ord(c) < 32 for c in word):
            return None
        else:
            words.append(f'"{word}"')
    return " ".join(words)


def for_terminal(text: str, stream=None) -> str:
    """`text` without control sequences when `stream` (default stdout) is a terminal; as it is otherwise (a pipe or
    a file gets exactly what the service said)."""
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return _CONTROLS.sub("", text) if isatty and isatty() else text


def write(text: str, stream=None) -> None:
    stream = stream or sys.stdout
    stream.write(for_terminal(text, stream))


def emit_json(data) -> None:
    write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def json_asked(args, data) -> bool:
    """Print `data`, the service's JSON, when --json asked for it: True then (the command shows nothing else)."""
    if args.json:
        emit_json(data)
        return True
    return False


def shown(args, data, show) -> int:
    """`data` as the service's JSON when --json asked for it, else `show(data)`; the command's exit code (0)."""
    emit_json(data) if args.json else show(data)
    return 0


def delete_confirmed(args, client, question: str, path: str, done: str) -> int:
    """Ask `question` first (unless --yes), then DELETE `path`, saying `done` (or the JSON); 1 when the answer is no."""
    if not confirm(question, args.yes):
        return 1
    return shown(args, client.delete(path), lambda d: say(done))


def say(text: str = "") -> None:
    write(text + "\n")


def note(text: str = "") -> None:
    write(text + "\n", sys.stderr)


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
    write(line(headers) + "\n", out)
    for r in cells:
        write(line(r) + "\n", out)


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
