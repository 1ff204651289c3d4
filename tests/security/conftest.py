"""Fixtures the attack modules share: a fake upstream, and an app with the admin token set that makes gateway keys."""
from __future__ import annotations

import pytest

from tests.fakes import FakeOpenAI
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
def guarded(home, fake, make_app):
    """(app, make_key): the suite's bench served with the admin token set; make_key(collections) -> a gateway key."""
    bench_data(home, fake)
    app = make_app(admin_token=TOKEN)

    def make_key(collections: list, name: str = "app") -> str:
        status, _, made = app("POST", "/bench/keys", {"name": name, "collections": collections},
                              headers=ADMIN_HEADERS)
        assert status == 201, made
        return made["key"]
    return app, make_key
