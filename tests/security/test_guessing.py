"""Guessing the admin token: wrong credentials are throttled per IPv6 /64 and also per /48 and /32 (a /48 holder
once got about 650,000 guesses a minute, ten for each of its 65,536 /64s), in bounded memory; and a token a guesser
would try first (`password12345678`, a word and a run of digits) cannot guard a public address."""
from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers.errors import RateLimited
from benchwarmers.server.messages import Request
from benchwarmers.server.throttle import FAILURES, MAX_ADDRESSES, WIDER, Guesses
from benchwarmers.service.lifecycle import BindRefused, Service
from tests.security.attack import ADMIN_HEADERS

ROOT = Path(__file__).resolve().parent.parent.parent
WEAK = ["password12345678", "P@ssw0rd12345678!", "letmeinletmein12", "qwertyuiopasdfghjkl",
        "benchwarmers-admin-2024", "xk7qpz9mxk7qpz9m", "iloveyou2024!!!!"]


def guess(app, client: str, headers: dict | None = None) -> int:
    """One admin request from `client`, with a wrong token unless `headers` says otherwise: its status."""
    req = Request("GET", "/bench/status", headers={"host": "127.0.0.1", **{k.lower(): v for k, v in (
        headers or {"Authorization": f"Bearer guess-{secrets.token_hex(8)}"}).items()}}, client=client)
    return app.app.handle(req).status


def test_a_48_cannot_spread_its_guesses_over_its_64s(guarded):
    app, _ = guarded
    per_64 = [guess(app, f"2001:db8:7:{n:x}::1") for n in range(4 * FAILURES)]   # a new /64 for each guess
    assert per_64 == [401] * (4 * FAILURES)
    assert guess(app, "2001:db8:7:ffff::1") == 429                # a fresh /64 of the same /48: its network is spent
    assert guess(app, "2001:db8:8::1") == 401                     # another /48 is its own
    assert guess(app, "2001:db8:7:ffff::1", ADMIN_HEADERS) == 200  # the right token still gets in


def test_a_32_cannot_spread_its_guesses_over_its_48s(guarded):
    app, _ = guarded
    statuses = [guess(app, f"2001:db9:{n:x}::1") for n in range(16 * FAILURES)]   # a new /48 for each guess
    assert statuses == [401] * (16 * FAILURES)
    assert guess(app, "2001:db9:ffff:1::1") == 429
    assert guess(app, "2001:dba::1") == 401


def test_a_64_keeps_its_own_ten():
    guesses = Guesses()
    for _ in range(FAILURES):
        guesses.check("2001:db8::1")
        guesses.failed("2001:db8::1")
    with pytest.raises(RateLimited) as refused:
        guesses.check("2001:db8::ffff")                            # the same /64
    assert "2001:db8::ffff" in str(refused.value) and refused.value.retry_after > 0


def test_a_flood_of_sources_is_held_in_bounded_memory():
    guesses = Guesses()
    for n in range(20_000):                  # every /64 of its own /48, spread over many /32s
        guesses.failed(f"2001:{n % 4096:x}:{n:x}::1")
    sizes = [len(seen) for _, _, seen in guesses._levels]
    assert sizes[0] <= MAX_ADDRESSES and all(size <= most for size, (_, _, most) in zip(sizes[1:], WIDER)), sizes


@pytest.mark.parametrize("token", WEAK)
def test_a_guessable_token_cannot_guard_a_public_address(home, token):
    with pytest.raises(BindRefused) as refused:
        Service(home, host="0.0.0.0", admin_token=token)
    assert "easy to guess" in str(refused.value) and "secrets.token_urlsafe" in str(refused.value)


def test_a_generated_token_guards_one(make_service):
    svc = make_service(host="0.0.0.0", admin_token=secrets.token_urlsafe(24))
    assert svc.bench.admin_token


def test_on_loopback_a_guessable_token_is_warned_of(make_service, caplog):
    with caplog.at_level(logging.WARNING, logger="benchwarmers"):
        make_service(admin_token="password12345678")
    assert "easy to guess" in caplog.text and "secrets.token_urlsafe" in caplog.text


def test_serve_refuses_a_guessable_token_from_the_environment(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env.update(BENCHWARMERS_HOME=str(home), PYTHONPATH=str(ROOT), BENCHWARMERS_ADMIN_TOKEN="password12345678")
    out = subprocess.run([sys.executable, str(ROOT / "serve.py"), "--host", "0.0.0.0", "--port", "0"], cwd=str(ROOT),
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "easy to guess" in out.stderr and "token_urlsafe" in out.stderr, out.stderr
    assert "password12345678" not in out.stderr and "Traceback" not in out.stderr
