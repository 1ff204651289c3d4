"""Ids: short unguessable ones, and the time-ordered ones of call and panel records."""
from __future__ import annotations

import binascii
import os
import time
from collections import deque

_ID_BYTES = 9           # 12 URL-safe characters
_AHEAD = 512            # ids read ahead: a panel makes a dozen, and each would be a system call
_URLSAFE = bytes.maketrans(b"+/", b"-_")
# Ids made ahead from os.urandom, already encoded: taking one is a deque's pop, atomic in CPython, so no lock is held.
# Two threads that find it empty at once each add ids of their own random bytes, so none is ever handed out twice.
_ready: deque = deque()


def _refill() -> None:
    # 9 bytes are 12 base-64 characters with no padding, so the encoding of the whole is the encodings of its ids
    text = binascii.b2a_base64(os.urandom(_ID_BYTES * _AHEAD), newline=False).translate(_URLSAFE).decode("ascii")
    _ready.extend([text[i:i + 12] for i in range(0, len(text), 12)])


def new_id(prefix: str = "") -> str:
    """Short, unguessable (from os.urandom, as secrets.token_urlsafe), URL-safe."""
    while True:
        try:
            return prefix + _ready.pop()
        except IndexError:
            _refill()


# Digits and letters in ASCII order: the time's characters sort as the time does, an id never begins with "-" (read
# as an option on a command line: bench verdict ID), and every id still matches what takes a call id ([A-Za-z0-9_-]).
_SORTED = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_stamp: tuple = (-1, "")   # the millisecond last stamped and its digits: one object, swapped whole


def record_id(prefix: str = "") -> str:
    """A call's or a panel's id: the time in milliseconds (8 base-62 digits, which sort as the time does), then
    new_id()'s 12 random ones. Each new record then goes in at the end of the indexes on its id, not at a random
    page of them (a random key dirties a page of every such index for each row a commit holds)."""
    global _stamp
    ms = time.time_ns() // 1_000_000
    last, stamp = _stamp
    if ms != last:   # a panel's ids mostly share their millisecond
        n, stamp = ms, ""
        for _ in range(8):                   # base 62, 8 digits: milliseconds for the next 6,900 years
            stamp = _SORTED[n % 62] + stamp   # operators, not divmod() and append()
            n //= 62
        _stamp = (ms, stamp)
    return prefix + stamp + new_id()


if hasattr(os, "register_at_fork"):   # a forked child must not hand out its parent's ids
    os.register_at_fork(after_in_child=_ready.clear)
