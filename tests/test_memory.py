"""The service's malloc arena cap: applied on glibc unless MALLOC_ARENA_MAX says otherwise."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchwarmers.server.memory import cap_malloc_arenas


def glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError, AttributeError):
        return False


def test_the_users_own_setting_stands(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert cap_malloc_arenas() is False


@pytest.mark.skipif(not glibc(), reason="the cap is glibc's (Linux); elsewhere it does nothing")
def test_capped_on_glibc():
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run([sys.executable, "-c", "from benchwarmers.server.memory import cap_malloc_arenas as c;"
                           "print(c())"], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.skipif(glibc(), reason="on glibc the cap applies")
def test_a_no_op_elsewhere(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert cap_malloc_arenas() is False
