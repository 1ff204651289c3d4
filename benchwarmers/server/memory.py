"""The service's memory: glibc's malloc arenas capped, so what its many threads free is reused rather than kept."""
from __future__ import annotations

import os

ARENAS = 2            # glibc allows 8 a core; each keeps what its threads freed (RSS grew by steps without this)
M_ARENA_MAX = -8      # mallopt's parameter number for the arena cap (glibc's malloc.h)


def cap_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas, as MALLOC_ARENA_MAX does, when nobody set MALLOC_ARENA_MAX; True when capped.
    A no-op on other C libraries (musl, macOS, Windows). Called before the service starts its threads: arenas
    already made are kept."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False            # the user's own choice stands
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):   # "glibc 2.36" on glibc; ValueError or None elsewhere
            return False
    except (ValueError, OSError, AttributeError):
        return False
    import ctypes               # here: only glibc gets this far, and ctypes costs start-up time
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_ARENA_MAX, arenas) == 1
