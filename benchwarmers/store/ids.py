"""Ids: short unguessable ones, and the time-ordered ones of call and panel records."""
from __future__ import annotations

import binascii
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
    return prefix + binascii.b2a_base64(raw, newline=False).translate(_URLSAFE).decode("ascii")   # urlsafe_b64encode's


_URLSAFE = bytes.maketrans(b"+/", b"-_")


# Digits and letters in ASCII order: the time's characters sort as the time does, an id never begins with "-" (read
# as an option on a command line: bench verdict ID), and every id still matches what takes a call id ([A-Za-z0-9_-]).
_SORTED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def record_id(prefix: str = "") -> str:
    """A call's or a panel's id: the time in milliseconds (8 base-62 digits, which sort as the time does), then
    new_id()'s 12 random ones. Each new record then goes in at the end of the indexes on its id, not at a random
    page of them (a random key dirties a page of every such index for each row a commit holds)."""
    ms, stamp = time.time_ns() // 1_000_000, ""
    for _ in range(8):                   # base 62, 8 digits: milliseconds for the next 6,900 years
        stamp = _SORTED[ms % 62] + stamp   # operators, not divmod() and append(): a panel makes a dozen ids
        ms //= 62
    return prefix + stamp + new_id()


if hasattr(os, "register_at_fork"):   # a forked child must not hand out its parent's ids
    os.register_at_fork(after_in_child=_random.clear)
