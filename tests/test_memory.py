"""The service's memory on glibc: the malloc arena cap (unless MALLOC_ARENA_MAX says otherwise), and freed memory
handed back now and then."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from benchwarmers.service.memory import cap_malloc_arenas, start_trimming


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
    done = subprocess.run([sys.executable, "-c", "from benchwarmers.service.memory import cap_malloc_arenas as c;"
                           "print(c())"], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "True", done.stderr


@pytest.mark.skipif(glibc(), reason="on glibc the cap applies")
def test_a_no_op_elsewhere(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert cap_malloc_arenas() is False


@pytest.mark.skipif(not glibc(), reason="malloc_trim is glibc's (Linux); elsewhere nothing is started")
def test_freed_memory_is_handed_back_now_and_then():
    import time
    thread = start_trimming(every=0.01)
    assert thread is not None and thread.daemon
    time.sleep(0.1)                                  # several trims have run: the thread is still there
    assert thread.is_alive()


@pytest.mark.skipif(glibc(), reason="on glibc the trimming thread starts")
def test_no_trimming_elsewhere():
    assert start_trimming() is None
