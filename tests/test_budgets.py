"""Monthly budgets in dollars, enforced before a call is sent: a priced fake model, budgets on a model, a connection, a
collection, a gateway key and the whole bench; refusals in every client format, a panel seat skipped, route mode
failing over, the month's turn in the user's time zone, and asks racing for the last cents."""
from __future__ import annotations

import threading
from datetime import datetime

import pytest

from tests.helpers.clock import FakeClock
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.panel import body, chat_requests, fake, requests_for, setup_bench, wait_for  # noqa: F401 (fixture)

PRICE = 10_000.0        # dollars per million tokens, in and out: a cent a token
CENT = 0.01


def budgets(home, **scopes) -> None:
    """limits.json with these budgets: models={"a": 0.5}, connections=..., collections=..., keys=..., bench=1.0."""
    limits = {scope: {name: {"usd_month": usd} for name, usd in entries.items()}
              for scope, entries in scopes.items() if scope != "bench"}
    if "bench" in scopes:
        limits["bench"] = {"all": {"usd_month": scopes["bench"]}}
    write(home, "limits.json", {"limits": limits})


def priced(api, *aliases) -> None:
    for alias in aliases:
        assert api("PUT", f"/bench/models/{alias}/facts", {"price_in": PRICE, "price_out": PRICE})[0] == 200


def test_a_direct_ask_past_its_models_budget_is_refused_unsent(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}})
    budgets(home, models={"a": 0.5})
    svc = make_service()
    api = Http(svc.url)
    priced(api, "a")
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=10))[0] == 200
    status, headers, d = api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=100))
    assert status == 429, d
    assert d["error"]["code"] == "budget_exceeded"
    assert "over budget: model 'a' spent" in d["error"]["message"]
    assert headers["x-should-retry"] == "false" and int(headers["Retry-After"]) > 0
    assert len(requests_for(fake, "m-a")) == 1
