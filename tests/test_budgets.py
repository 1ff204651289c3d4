"""Monthly budgets in dollars, enforced before a call is sent: a priced fake model, budgets on a model, a connection, a
collection, a gateway key and the whole bench; refusals in every client format, a panel seat skipped, route mode
failing over, the month's turn in the user's time zone, and asks racing for the last cents."""
from __future__ import annotations

import subprocess
import threading
from datetime import datetime

import httpx
import pytest

from tests.fakes import Reply
from tests.helpers.catalog import map_endpoints
from tests.helpers.clock import FakeClock
from tests.helpers.data import write
from tests.helpers.http import Http
from tests.helpers.panel import at_once, body, chat_requests, fake, requests_for, setup_bench  # noqa: F401 (fixture)

PRICE = 10_000.0        # dollars per million tokens, in and out: a cent a token
CENT = 0.01


def budgets(home, **scopes) -> None:
    """limits.json with these budgets: models={"a": 0.5}, connections=..., collections=..., keys=..., bench=1.0."""
    limits = {scope: {name: {"usd_month": usd} for name, usd in entries.items()}
              for scope, entries in scopes.items() if scope != "bench"}
    if "bench" in scopes:
        limits["bench"] = {"all": {"usd_month": scopes["bench"]}}
    write(home, "limits.json", {"limits": limits})


def setup(home, fake, members=("a", "b"), settings: dict | None = None, **collection) -> None:
    """Collection core of `members`, no explore seat unless `collection` says; a and b priced at a cent a token (from
    the start: a model that turns paid is held), the others unpriced (the fake counts as a hosted provider: a local
    server's models cost nothing)."""
    priced = {alias: {"endpoint": "fake", "served": f"m-{alias}", "facts": {"price_in": PRICE, "price_out": PRICE}}
              for alias in ("a", "b")}
    setup_bench(home, fake, {"core": {"members": list(members), "explore": 0, **collection}}, settings, **priced)
    map_endpoints(home, {"fake": "groq"})


def test_a_direct_ask_past_its_models_budget_is_refused_unsent(home, fake, make_service):
    setup(home, fake, ["a", "b"])
    budgets(home, models={"a": 0.5})
    svc = make_service()
    api = Http(svc.url)
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=10))[0] == 200
    status, headers, d = api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=100))
    assert status == 429, d
    assert d["error"]["code"] == "budget_exceeded"
    assert "over budget: model 'a' spent" in d["error"]["message"]
    assert headers["x-should-retry"] == "false" and int(headers["Retry-After"]) > 0
    assert len(requests_for(fake, "m-a")) == 1


def spend_of(api, scope: str, name: str) -> float:
    money = api("GET", "/bench/limits")[2]["money"]
    return next(b for b in money["budgets"] if (b["scope"], b["name"]) == (scope, name))["spent"]


@pytest.mark.parametrize("path, payload, message", [
    ("/v1/chat/completions", {"model": "a", "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["error"]["message"]),
    ("/v1/responses", {"model": "a", "input": "hi"}, lambda d: d["error"]["message"]),
    ("/v1/messages", {"model": "a", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["error"]["message"] if d.get("type") == "error" else None),
    ("/v1beta/models/a:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
     lambda d: d["error"]["message"] if d["error"]["status"] == "RESOURCE_EXHAUSTED" else None),
    ("/api/chat", {"model": "a", "stream": False, "messages": [{"role": "user", "content": "hi"}]},
     lambda d: d["error"]),
])
def test_every_client_format_is_refused_in_its_own_shape_naming_the_budget(home, fake, make_service, path, payload,
                                                                           message):
    setup(home, fake, ["a", "b"])
    budgets(home, models={"a": 0})                     # nothing may be spent on a
    svc = make_service()
    api = Http(svc.url)
    status, headers, d = api("POST", path, payload)
    assert status == 429, d
    said = message(d)
    assert said and "over budget: model 'a' spent $0.00 of its $0.00 a month" in said and "resets at" in said, d
    assert "Nothing was sent" in said
    assert headers["x-should-retry"] == "false" and int(headers["Retry-After"]) > 0
    assert requests_for(fake, "m-a") == []


def test_the_openai_sdk_is_told_once_and_does_not_retry(home, fake, make_service):
    import openai
    setup(home, fake, ["a"])
    budgets(home, models={"a": 0})
    svc = make_service()
    sent: list = []
    sdk = openai.OpenAI(base_url=svc.url + "/v1", api_key="unused", max_retries=3,
                        http_client=httpx.Client(event_hooks={"request": [sent.append]}))
    with pytest.raises(openai.RateLimitError) as caught:
        sdk.chat.completions.create(model="a", messages=[{"role": "user", "content": "hi"}])
    assert len(sent) == 1                                                  # x-should-retry: false, so no retries
    assert caught.value.code == "budget_exceeded" and "over budget" in caught.value.message
    calls = Http(svc.url)("GET", "/bench/calls?model=a")[2]
    assert requests_for(fake, "m-a") == [] and not calls.get("calls")


def test_the_anthropic_sdk_is_told_once_and_a_stream_is_refused_before_it_starts(home, fake, make_service):
    import anthropic
    import httpx2
    setup(home, fake, ["a"])
    budgets(home, models={"a": 0})
    svc = make_service()
    sent: list = []
    sdk = anthropic.Anthropic(base_url=svc.url, api_key="unused", max_retries=3,
                              http_client=httpx2.Client(event_hooks={"request": [sent.append]}))
    with pytest.raises(anthropic.RateLimitError) as caught:
        sdk.messages.create(model="a", max_tokens=50, messages=[{"role": "user", "content": "hi"}])
    assert len(sent) == 1
    assert "over budget: model 'a'" in str(caught.value)
    status, headers, d = Http(svc.url)("POST", "/v1/chat/completions", body("a", "hi", stream=True))
    assert status == 429 and d["error"]["code"] == "budget_exceeded", d          # JSON, not a stream begun
    assert requests_for(fake, "m-a") == []


def test_a_panel_seat_past_its_budget_is_skipped_and_the_rest_answer(home, fake, make_service):
    setup(home, fake, ["a", "b"])
    budgets(home, models={"a": 0})
    svc = make_service()
    api = Http(svc.url)
    status, _, d = api("POST", "/v1/chat/completions", body("bench/core", "hi"))
    assert status == 200, d
    seats = {s["model"]: s for s in d["bench"]["seats"]}
    assert seats["a"]["status"] == "skipped" and seats["a"]["error"].startswith("over budget: model 'a'")
    assert seats["b"]["status"] == "ok" and "b says: hi" in d["choices"][0]["message"]["content"]
    assert requests_for(fake, "m-a") == [] and len(requests_for(fake, "m-b")) == 1


def test_a_route_turn_fails_over_to_a_member_within_budget(home, fake, make_service):
    setup(home, fake, ["a", "b"])
    budgets(home, models={"a": 0})
    svc = make_service()
    api = Http(svc.url)
    for _ in range(2):
        status, _, d = api("POST", "/v1/chat/completions", body("bench/core:route", "one turn", max_tokens=20))
        assert status == 200 and d["bench"]["model"] == "b", d
    assert requests_for(fake, "m-a") == []
    budgets(home, models={"a": 0, "b": 0})
    status, _, d = api("POST", "/v1/chat/completions", body("bench/core:route", "one more", max_tokens=20))
    assert status == 429 and d["error"]["code"] == "budget_exceeded", d
    assert len(requests_for(fake, "m-b")) == 2


@pytest.mark.parametrize("scope, name, what", [
    ("connections", "fake", "connection 'fake'"),
    ("collections", "core", "collection 'core'"),
    ("bench", None, "the whole bench"),
])
def test_a_budget_at_each_level_refuses_what_counts_against_it(home, fake, make_service, scope, name, what):
    setup(home, fake, ["a", "b"])
    budgets(home, **({"bench": 0} if scope == "bench" else {scope: {name: 0}}))
    svc = make_service()
    api = Http(svc.url)
    status, _, d = api("POST", "/v1/chat/completions", body("bench/core", "hi"))
    assert status == 429 and d["error"]["code"] == "budget_exceeded", d
    assert f"over budget: {what} spent $0.00 of its $0.00 a month" in d["error"]["message"]
    assert chat_requests(fake) == []


def test_a_gateway_keys_budget_holds_its_asks_and_no_one_elses(home, fake, make_service):
    setup(home, fake, ["a"], settings={"require_keys": True})
    svc = make_service()
    api = Http(svc.url)
    made = [api("POST", "/bench/keys", {"name": n, "collections": ["core"], "usd_month": usd})
            for n, usd in (("tight", 0.25), ("free", None))]
    assert [m[0] for m in made] == [201, 201] and made[0][2]["usd_month"] == 0.25, made
    tight, free = ({"Authorization": f"Bearer {m[2]['key']}"} for m in made)
    fake.script("m-a", Reply(usage={"input": 1, "output": 20}))          # $0.21 a call
    assert api("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=20), tight)[0] == 200
    status, _, d = api("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=20), tight)
    assert status == 429 and "over budget: gateway key 'tight' spent $0.21 of its $0.25" in d["error"]["message"]
    assert api("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=20), free)[0] == 200
    keys = {k["name"]: k for k in api("GET", "/bench/keys")[2]["keys"]}
    assert keys["tight"]["usd_month"] == 0.25 and keys["free"]["usd_month"] is None
    assert spend_of(api, "key", "tight") == pytest.approx(0.21)


def test_a_budget_lowered_below_what_is_spent_refuses_at_once(home, fake, make_service):
    setup(home, fake, ["a"])
    svc = make_service()
    api = Http(svc.url)
    assert api("PUT", "/bench/limits/a", {"usd_month": 5})[0] == 200
    fake.script("m-a", Reply(usage={"input": 1, "output": 20}))
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))[0] == 200
    assert spend_of(api, "model", "a") == pytest.approx(0.21)
    status, _, d = api("PUT", "/bench/limits/a", {"usd_month": 0.1})
    assert status == 200 and d["budget"]["state"] == "at" and d["budget"]["left"] == 0, d
    status, _, d = api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=1))
    assert status == 429 and "spent $0.21 of its $0.10 a month" in d["error"]["message"]
    assert len(requests_for(fake, "m-a")) == 1


def test_the_month_turns_at_midnight_in_the_users_time_zone(home, fake, make_service):
    setup(home, fake, ["a"])
    budgets(home, models={"a": 0.25})
    clock = FakeClock(start=datetime(2026, 11, 30, 23, 30))              # local time, UTC+01:00: 22:30 UTC
    svc = make_service(clock=clock)
    api = Http(svc.url)
    fake.script("m-a", Reply(usage={"input": 1, "output": 20}))
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))[0] == 200
    status, headers, d = api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))
    assert status == 429 and "resets at 2026-12-01 00:00 (UTC+01:00)" in d["error"]["message"], d
    assert 1790 <= int(headers["Retry-After"]) <= 1800                    # half an hour to local midnight
    money = api("GET", "/bench/limits")[2]["money"]
    assert money["month"] == "2026-11" and money["budgets"][0]["state"] == "near"
    clock.advance(minutes=29)                                             # 23:59 local: still November's
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))[0] == 429
    clock.advance(minutes=2)                                              # 00:01 on Dec 1 local, 23:01 UTC Nov 30
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))[0] == 200
    money = api("GET", "/bench/limits")[2]["money"]
    assert money["month"] == "2026-12" and money["budgets"][0]["spent"] == pytest.approx(0.21)
    assert len(requests_for(fake, "m-a")) == 2


def test_asks_racing_for_the_last_cents_never_pass_the_budget_by_more_than_one_estimate(home, fake, make_service):
    setup(home, fake, ["a"])
    budgets(home, models={"a": 1.0})
    one, other = make_service(), make_service()          # two processes' worth of services on one data folder
    api = Http(one.url)
    fake.script("m-a", Reply(usage={"input": 1, "output": 20}))          # $0.21 a call; its estimate is more
    estimate = api("POST", "/bench/estimate", body("a", "hi", max_tokens=20))[2]["most"]
    assert 0.21 <= estimate < 0.3
    urls = [one.url, other.url]
    statuses = at_once(24, lambda i: Http(urls[i % 2])("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20),
                                                       timeout=120)[0])
    answered = statuses.count(200)
    assert answered >= 1 and answered + statuses.count(429) == 24, statuses
    assert len(requests_for(fake, "m-a")) == answered                     # every refusal sent nothing
    spent = spend_of(api, "model", "a")
    assert spent == pytest.approx(0.21 * answered)
    assert spent <= 1.0 + estimate
    ledger = api("GET", "/bench/usage?by=model")[2]["rows"]
    assert next(r for r in ledger if r["name"] == "a")["cost"] == pytest.approx(spent)   # the kept sum: the ledger's
    money = api("GET", "/bench/limits")[2]["money"]
    assert money["budgets"][0]["held"] == 0                               # every hold let go


def test_the_estimate_names_each_seat_the_referee_and_the_merge_before_anything_is_sent(home, fake, make_service):
    setup(home, fake, ["a", "c"], merge_model="b", referee="b", points="all")
    svc = make_service()
    api = Http(svc.url)
    status, _, d = api("POST", "/bench/estimate", body("bench/core:merged", "what does this cost?", max_tokens=20))
    assert status == 200, d
    a, c = d["seats"]
    assert (a["model"], a["max_tokens"], a["price_in"]) == ("a", 20, PRICE)
    assert a["usd"] == pytest.approx((a["prompt_tokens"] + 20) * CENT)
    assert c["model"] == "c" and c["usd"] is None and d["unpriced"] == ["c"]          # no price: not counted
    ref, merge = d["referee"], d["merge"]
    assert ref["model"] == "b" and merge["model"] == "b" and merge["max_tokens"] == 20
    assert ref["prompt_tokens"] == merge["prompt_tokens"] > a["prompt_tokens"] + 40    # the ask and both answers
    assert d["most"] == pytest.approx(a["usd"] + ref["usd"] + merge["usd"])
    assert chat_requests(fake) == []
    budgets(home, models={"a": 0})
    a = api("POST", "/bench/estimate", body("bench/core", "again", max_tokens=20))[2]["seats"][0]
    assert a["usd"] is None and a["skip"].startswith("over budget: model 'a'")


def test_the_reply_carries_each_seats_cost(home, fake, make_service):
    setup(home, fake, ["a", "c"])
    svc = make_service()
    fake.script("m-a", Reply(usage={"input": 3, "output": 7}))
    d = Http(svc.url)("POST", "/v1/chat/completions", body("bench/core", "hi"))[2]
    cost = {s["model"]: s["cost"] for s in d["bench"]["seats"]}
    assert cost == {"a": pytest.approx(0.10), "c": None}


def test_the_quotas_page_says_which_models_no_budget_limits(home, fake, make_service):
    setup(home, fake, ["a", "c"])
    budgets(home, models={"a": 1.0}, collections={"core": 2.0})
    svc = make_service()
    api = Http(svc.url)
    fake.script("m-a", Reply(usage={"input": 40, "output": 40}))            # $0.80: 80% of a's budget
    assert api("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=50))[0] == 200
    money = api("GET", "/bench/limits")[2]["money"]
    states = {b["what"]: (b["state"], b["spent"]) for b in money["budgets"]}
    assert states == {"model 'a'": ("near", pytest.approx(0.8)), "collection 'core'": ("ok", pytest.approx(0.8))}
    assert "c" in money["unpriced"] and "a" not in money["unpriced"]
    page = api("GET", "/quotas", headers={"Accept": "text/html"})[2]
    assert "No price known, so no dollar budget limits them" in page
    assert "Model &#x27;a&#x27; is near its budget" in page
    home_page = api("GET", "/", headers={"Accept": "text/html"})[2]
    assert "near its budget: $0.80 of $1.00 spent this month" in home_page


def test_the_cli_sets_budgets_and_prints_what_an_ask_would_cost(home, fake, make_service):
    from tests.test_cli_ask import bench_cli, out
    setup(home, fake, ["a", "c"])
    svc = make_service()
    for args in (["limits", "set", "a", "--usd-month", "5"],
                 ["limits", "set", "core", "--collection", "--usd-month", "$2.50"],
                 ["limits", "set", "--bench", "--usd-month", "9"]):
        proc = bench_cli(svc.url, *args)
        assert proc.returncode == 0, proc.stderr
    assert "usd_month 2.5" in out(bench_cli(svc.url, "limits", "set", "core", "--collection", "--usd-month", "2.5"))
    shown = out(bench_cli(svc.url, "limits"))
    assert "model 'a'" in shown and "collection 'core'" in shown and "the whole bench" in shown
    proc = bench_cli(svc.url, "ask", "core", "what would this cost?", "--max-tokens", "20", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    said = out(proc)
    assert "At most $0." in said and "Nothing was sent" in said and "no price known" in said
    assert chat_requests(fake) == []
    assert bench_cli(svc.url, "limits", "set", "a", "--usd-month", "-1").returncode == 2
    assert bench_cli(svc.url, "limits", "clear", "a", "usd_month").returncode == 0
    money = Http(svc.url)("GET", "/bench/limits")[2]["money"]
    assert {b["what"] for b in money["budgets"]} == {"collection 'core'", "the whole bench"}


def test_mcp_says_a_budget_refused_the_ask(home, fake, make_service):
    from tests.test_mcp_http import ACCEPT, open_session, rpc
    setup(home, fake, ["a"])
    budgets(home, collections={"core": 0})
    http = Http(make_service().url)
    sid = open_session(http)
    status, _, d = http("POST", "/mcp", rpc(2, "tools/call", {"name": "ask", "arguments": {
        "collection": "core", "prompt": "Is line 3 right?"}}), {**ACCEPT, "Mcp-Session-Id": sid})
    assert status == 200 and d["result"]["isError"], d
    said = d["result"]["content"][0]["text"]
    assert "over budget: collection 'core' spent $0.00 of its $0.00 a month" in said and "resets at" in said
    assert chat_requests(fake) == []


def test_a_seat_still_running_when_the_panel_answers_keeps_its_hold_until_its_answer_is_booked(home, fake,
                                                                                               make_service):
    from tests.helpers.panel import wait_for
    setup(home, fake, ["a", "c", "x", "y", "z"], explore=1, explore_grace=0.5)   # the explore seat can only be b
    budgets(home, models={"b": 5.0})
    back = threading.Event()
    fake.script("m-b", Reply(hold=back, usage={"input": 1, "output": 20}))   # out when the panel answers; $0.21
    svc = make_service()
    api = Http(svc.url)

    def budget() -> dict:
        return api("GET", "/bench/limits")[2]["money"]["budgets"][0]
    try:
        d = api("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=20), timeout=60)[2]
        assert {s["model"]: s["status"] for s in d["bench"]["seats"]}["b"] == "running", d
        assert budget()["held"] > 0.2 and budget()["spent"] == 0          # its estimate, held while it runs
    finally:
        back.set()
    wait_for(lambda: budget()["held"] == 0)
    assert budget()["spent"] == pytest.approx(0.21)                      # its answer, booked once


def test_two_processes_racing_for_one_budget_hold_no_more_than_it_allows(tmp_path):
    from benchwarmers.roster.limits.budgets import Budgets
    from benchwarmers.scheduler.clock import Clock
    from benchwarmers.store import Config, Database
    from tests.test_store import child
    Config(tmp_path).write("limits.json", {"limits": {"bench": {"all": {"usd_month": 1.0}}}})
    Database(tmp_path / "bench.db").close()                               # migrated before the race
    code = """
        from pathlib import Path
        from benchwarmers.roster.limits.budgets import Budgets, Charge
        from benchwarmers.scheduler.clock import Clock
        from benchwarmers.store import Config, Database
        folder = Path(sys.argv[1])
        budgets = Budgets(Database(folder / "bench.db"), Config(folder), Clock())
        held = sum(budgets.reserve(Charge(f"{sys.argv[2]}-{i}", "a", "fake"), 0.07) is None for i in range(30))
        budgets.db.close()
        print(held)
    """
    procs = [child(code, str(tmp_path), name, stdout=subprocess.PIPE, text=True) for name in ("one", "other")]
    held = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert sum(held) == 14                                                # 14 × $0.07 = $0.98; a 15th would pass $1
    budgets = Budgets(Database(tmp_path / "bench.db"), Config(tmp_path), Clock())
    try:
        assert budgets.view()["budgets"][0]["held"] == pytest.approx(0.98)
    finally:
        budgets.db.close()


def test_a_hold_left_by_a_process_that_died_is_let_go_after_hold_keep(tmp_path):
    from benchwarmers.roster.limits.budgets import Budgets, Charge
    from benchwarmers.scheduler.clock import Clock
    from benchwarmers.store import Config, Database, spend
    Config(tmp_path).write("limits.json", {"limits": {"bench": {"all": {"usd_month": 1.0}}}})
    budgets = Budgets(Database(tmp_path / "bench.db"), Config(tmp_path), Clock())
    try:
        assert budgets.reserve(Charge("dead", "a", "fake"), 0.9) is None   # its process dies before booking it
        assert budgets.reserve(Charge("next", "a", "fake"), 0.2) is not None
        budgets.db.call(lambda c: c.execute("UPDATE spend_holds SET created = created - ? WHERE call = 'dead'",
                                            (spend.HOLD_KEEP + 1,)))
        assert budgets.reserve(Charge("next", "a", "fake"), 0.2) is None
        assert budgets.view()["budgets"][0]["held"] == pytest.approx(0.2)
    finally:
        budgets.db.close()


def test_the_months_spend_is_made_again_from_the_ledger_by_a_rebuild(home, fake, make_service):
    setup(home, fake, ["a"])
    budgets(home, models={"a": 5.0})
    svc = make_service()
    api = Http(svc.url)
    fake.script("m-a", Reply(usage={"input": 1, "output": 20}))
    assert api("POST", "/v1/chat/completions", body("a", "hi", max_tokens=20))[0] == 200
    svc.bench.db.call(lambda c: c.execute("UPDATE spend SET spent = 99"))   # kept sums gone wrong
    assert api("POST", "/bench/store/rebuild", {})[0] == 200
    assert spend_of(api, "model", "a") == pytest.approx(0.21)
