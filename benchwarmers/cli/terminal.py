"""The command's standard streams on every OS: UTF-8 when piped, cursor escapes on Windows' console, stdin as UTF-8."""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping

_redraw: dict[int, bool] = {}      # fileno -> the stream is a terminal that takes cursor escapes


def prepare(environ: Mapping[str, str] | None = None) -> None:
    """Once, at the console-script entry: output never fails on a character the code page lacks (Windows writes a
    pipe or a file in its ANSI code page, where most of Unicode is missing). A pipe or a file gets UTF-8, a terminal
    keeps its own encoding; a character that still cannot be written becomes '?'. PYTHONIOENCODING, when set, is
    the user's choice and wins."""
    environ = os.environ if environ is None else environ
    if environ.get("PYTHONIOENCODING"):
        return
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            if stream.isatty():
                reconfigure(errors="replace")
            else:
                reconfigure(encoding="utf-8", errors="replace")
        except (OSError, ValueError):   # closed, or already written through in another encoding
            continue


def can_redraw(stream) -> bool:
    """True for a terminal that moves the cursor on ANSI escapes: any on POSIX; on Windows a console once virtual
    terminal processing is on (Windows 10 and later; the classic console has it off until asked)."""
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        return False
    if os.name != "nt":
        return True
    fileno = stream.fileno()
    if fileno not in _redraw:
        _redraw[fileno] = _windows_vt(fileno)
    return _redraw[fileno]


def _windows_vt(fileno: int) -> bool:
    if sys.platform != "win32":   # called on Windows alone; this says so to the type checker too
        return False
    import ctypes
    import msvcrt
    enable_vt = 0x0004            # ENABLE_VIRTUAL_TERMINAL_PROCESSING
    try:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = msvcrt.get_osfhandle(fileno)
        mode = ctypes.c_uint32()
        if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
            return False
        return bool(mode.value & enable_vt) or bool(kernel32.SetConsoleMode(handle, mode.value | enable_vt))
    except (OSError, AttributeError, ValueError):
        return False


def piped() -> bool:
    """stdin is a pipe or a file, not a person at a terminal (nor absent)."""
    return sys.stdin is not None and not sys.stdin.isatty()


def read_all() -> str:
    """All of stdin as UTF-8 whatever the locale (a leading byte-order mark dropped; a bad byte becomes U+FFFD)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:                 # a text stream put in place of stdin (an embedding program's, a test's)
        return sys.stdin.read()
    return buffer.read().decode("utf-8-sig", "replace")


def read_bytes(most: int) -> bytes:
    """Up to `most` bytes of stdin, for a reader that must stop (`yes | bench ask` never ends); decode them with
    'utf-8-sig' as read_all() does. A text stream in stdin's place gives up to `most` characters, as UTF-8."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        return sys.stdin.read(most).encode("utf-8", "surrogateescape")
    return buffer.read(most)


def read_line() -> str:
    """The first line of stdin as UTF-8, without its line ending ('' when stdin is empty or absent)."""
    if sys.stdin is None:
        return ""
    buffer = getattr(sys.stdin, "buffer", None)
    line = sys.stdin.readline() if buffer is None else buffer.readline().decode("utf-8-sig", "replace")
    return line.rstrip("\r\n")
