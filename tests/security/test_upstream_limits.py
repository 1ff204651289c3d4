"""A provider's rate limit as the client meets it: a direct ask (one model by its alias) whose upstream answers 429
is a 429 in the caller's own shape with the provider's reset as Retry-After, not a 502 without one; and the ask that
comes next, while the model rests, says the same."""
from __future__ import annotations

import json

import pytest

from tests.fakes import Reply
from tests.helpers.data import configure
from tests.test_formats_http import FORMATS, body_for, call, message_of, path_for

RESET = 600.0


@pytest.fixture
def limited(home, fake, make_service):
    """One model per client format (alias the format's name), each on a provider that answers 429 for RESET s."""
    configure(home, {"fake": (fake, "openai")}, {fmt: ("fake", f"m-{fmt}") for fmt in FORMATS},
              {"core": {"members": list(FORMATS), "explore": 0}})
    for fmt in FORMATS:
        fake.script(f"m-{fmt}", Reply.error(429, style="openai", retry_after=RESET, message="slow down"))
    return make_service().url


def asked(fake, fmt: str) -> int:
    return sum(1 for r in fake.requests if isinstance(r.body, dict) and r.body.get("model") == f"m-{fmt}")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_direct_ask_the_provider_refuses_is_429_with_its_reset(limited, fake, fmt):
    for attempt in ("refused upstream", "resting"):
        status, headers, data = call(limited, "POST", path_for(fmt, model=fmt), body_for(fmt, model=fmt))
        assert status == 429, (fmt, attempt, status, data[:300])
        assert RESET - 60 <= int(headers["Retry-After"]) <= RESET, (attempt, headers)
        message = message_of(FORMATS[fmt][2], json.loads(data), 429)
        assert "rate limit" in message and "Try again after the reset" in message, message
    assert asked(fake, fmt) == 1                     # the second ask was never sent: the model rests
