"""The service's memory on glibc: malloc arenas capped, so what its many threads free is reused rather than kept,
and what is freed handed back to the system now and then."""
from __future__ import annotations

import os
import sys
import threading
import time

ARENAS = 2            # glibc allows 8 a core; each keeps what its threads freed (RSS grew by steps without this)
M_ARENA_MAX = -8      # mallopt's parameter number for the arena cap (glibc's malloc.h)
TRIM_SECONDS = 5.0    # how often freed memory goes back (malloc_trim walks the heap: milliseconds, not more)


def _glibc():
    """The C library through ctypes when it is glibc (musl, macOS and Windows have neither call); else None."""
    if sys.platform == "win32":   # no os.confstr there (the check below would say None all the same)
        return None
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):   # "glibc 2.36" on glibc; ValueError or None elsewhere
            return None
    except (ValueError, OSError, AttributeError):
        return None
    import ctypes               # here: only glibc gets this far, and ctypes costs start-up time
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def cap_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas, as MALLOC_ARENA_MAX does, when nobody set MALLOC_ARENA_MAX; True when capped.
    A no-op on other C libraries (musl, macOS, Windows). Called before the service starts its threads: arenas
    already made are kept."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False            # the user's own choice stands
    libc = _glibc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    import ctypes
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_ARENA_MAX, arenas) == 1


def start_trimming(every: float = TRIM_SECONDS) -> threading.Thread | None:
    """Every `every` seconds, hand what malloc holds freed back to the system (glibc's malloc_trim): a heap that
    many threads allocate from keeps freed pages between live ones, and RSS under sustained load rose for minutes
    without this. The thread (a daemon) is returned; None on other C libraries, where it is not needed."""
    trim = getattr(_glibc(), "malloc_trim", None)
    if trim is None:
        return None
    import ctypes
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int

    def loop() -> None:
        while True:
            time.sleep(every)
            trim(0)
    thread = threading.Thread(target=loop, name="malloc-trim", daemon=True)
    thread.start()
    return thread
