"""Ids: short unguessable ones, and the time-ordered ones of call and panel records."""
from __future__ import annotations

import base64
import os
import threading
import time

_ID_BYTES = 9           # 12 URL-safe characters
_random = bytearray()   # os.urandom read ahead: a panel makes six ids, and each would be a system call
_random_lock = threading.Lock()


def new_id(prefix: str = "") -> str:
    """Short, unguessable (from os.urandom, as secrets.token_urlsafe), URL-safe."""
    with _random_lock:
        if len(_random) < _ID_BYTES:
            _random[:] = os.urandom(_ID_BYTES * 512)
        raw = bytes(_random[-_ID_BYTES:])
        del _random[-_ID_BYTES:]
    return prefix + base64.urlsafe_b64encode(raw).decode("ascii")


# URL-safe and in ASCII order. Not "-" first: the time's first character is the alphabet's first until 2109, and an
# id starting with "-" reads as an option on a command line (bench verdict ID).
_SORTED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
_ORDER = {ch: i for i, ch in enumerate(_SORTED)}


def record_id(prefix: str = "") -> str:
    """A call's or a panel's id: the time in milliseconds (8 characters that sort as the time does), then new_id()'s
    12 random ones. Each new record then goes in at the end of the indexes on its id, not at a random page of them
    (a random key dirties a page of every such index for each row a commit holds)."""
    ms = time.time_ns() // 1_000_000
    return prefix + "".join([_SORTED[(ms >> shift) & 63] for shift in range(42, -1, -6)]) + new_id()


if hasattr(os, "register_at_fork"):   # a forked child must not hand out its parent's ids
    os.register_at_fork(after_in_child=_random.clear)


def record_time(record: str, prefix: str = "") -> float | None:
    """When a record_id() was made (epoch seconds, to the millisecond); None for an id of another shape (a record
    made before ids carried their time)."""
    stamp = record[len(prefix):len(prefix) + 8]
    if len(record) != len(prefix) + 20 or any(ch not in _ORDER for ch in stamp):
        return None
    ms = 0
    for ch in stamp:
        ms = ms * 64 + _ORDER[ch]
    return ms / 1000
