"""Setting, showing and clearing rate limits through the API and `bench limits`; `bench usage`; bad input refused
with what to fix; day and month limits rolling over at UTC midnight and the 1st with a controlled clock."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from benchwarmers.cli.main import main
from benchwarmers.roster.limits.quota import Quota
from benchwarmers.roster.limits.resting import Resting
from benchwarmers.roster.registry import Model
from benchwarmers.store import Config, Database
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.panel import body, fake  # noqa: F401 (fixture)

UTC = timezone.utc


@pytest.fixture
def limited(app, home, fake):
    """Endpoint `fake` with models a and b; a model named like the endpoint too, to be ambiguous."""
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b"),
                                                 "fake": ("fake", "m-fake")})
    return app


def test_set_show_and_clear_through_the_api(limited, home):
    status, _, d = limited("POST", "/bench/limits", {"name": "a", "rpm": 5, "tpd": 100000})
    assert status == 200 and d["scope"] == "model" and d["set"] == {"rpm": 5, "tpd": 100000}, d
    status, _, d = limited("POST", "/bench/limits", {"name": "fake", "scope": "connection", "rpd": 50})
    assert status == 200 and d["scope"] == "connection" and d["windows"]["rpd"]["limit"] == 50
    stored = json.loads((home / "config" / "limits.json").read_text())["limits"]
    assert stored == {"connections": {"fake": {"rpd": 50}}, "models": {"a": {"rpm": 5, "tpd": 100000}}}
    shown = limited("GET", "/bench/limits")[2]
    assert [c["name"] for c in shown["connections"]] == ["fake"]
    assert [m["name"] for m in shown["models"]] == ["a"] and shown["models"][0]["connection"] == "fake"
    assert limited("POST", "/bench/limits", {"name": "a", "tpd": None})[2]["set"] == {"rpm": 5}
    status, _, d = limited("DELETE", "/bench/limits/a")
    assert status == 200 and d["set"] == {}
    assert json.loads((home / "config" / "limits.json").read_text())["limits"]["models"] == {}


@pytest.mark.parametrize("payload, status, words", [
    ({"name": "a", "rpm": -1}, 400, "must be a whole number from 1"),
    ({"name": "a", "rpm": 0}, 400, "must be a whole number from 1"),
    ({"name": "a", "rpm": 2.5}, 400, "must be a whole number from 1"),
    ({"name": "a", "rpm": "5"}, 400, "must be a whole number from 1"),
    ({"name": "a", "rpm": True}, 400, "must be a whole number from 1"),
    ({"name": "a", "rph": 5}, 400, "Unknown limit 'rph'"),
    ({"name": "a"}, 400, "Name at least one limit"),
    ({"rpm": 5}, 400, "Say whose limits"),
    ({"name": "nosuch", "rpm": 5}, 404, "No connection or model named 'nosuch'"),
    ({"name": "fake", "rpm": 5}, 400, "is both a connection and a model"),
    ({"name": "a", "scope": "galaxy", "rpm": 5}, 400, "Scope 'galaxy'"),
    ({"name": "a", "scope": "key", "rpm": 5}, 400, "A key takes a budget (usd_month), not the rate limit 'rpm'"),
    ({"name": "a", "usd_month": -1}, 400, "must be a number of dollars from 0"),
    ({"name": "a", "usd_month": "5"}, 400, "must be a number of dollars from 0"),
    ({"name": "nosuch", "scope": "collection", "usd_month": 5}, 404, "No collection named 'nosuch'"),
    ({"name": "a", "scope": "connection", "rpm": 5}, 404, "No connection named 'a'"),
])
def test_the_api_refuses_bad_limits_saying_what_to_fix(limited, payload, status, words):
    got, _, d = limited("POST", "/bench/limits", payload)
    assert got == status and words in d["error"]["message"], d


def test_a_broken_limits_file_is_reported_and_never_overwritten(limited, home):
    path = home / "config" / "limits.json"
    path.write_text('{"limits": {', encoding="utf-8")
    status, _, d = limited("POST", "/bench/limits", {"name": "a", "rpm": 5})
    assert status == 500 and "limits.json" in d["error"]["message"]
    assert path.read_text(encoding="utf-8") == '{"limits": {'
    shown = limited("GET", "/bench/limits")[2]
    assert "limits.json" in shown["problem"]
    assert limited("POST", "/v1/chat/completions", body("a"))[0] == 200     # no limit applies: asks still go


def test_a_bad_hand_edit_of_one_limit_is_passed_over(limited, home):
    (home / "config" / "limits.json").write_text(json.dumps({"limits": {
        "models": {"a": {"rpm": "ten", "rpd": 2, "tpm": -5}, "b": ["rpm"]}, "connections": {"fake": {"rpd": 0}}}}))
    shown = limited("GET", "/bench/limits")[2]
    assert [(m["name"], m["set"]) for m in shown["models"]] == [("a", {"rpd": 2})]
    assert shown["connections"][0]["set"] == {} and shown["problem"] is None


@pytest.fixture
def cli(home, fake, make_service, capsys):
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a")})
    svc = make_service()

    def run(*argv):
        code = main(["--url", svc.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    run.url = svc.url
    return run


def test_bench_limits_set_show_clear_and_usage(cli):
    code, out, _ = cli("limits", "set", "fake", "--rpm", "5", "--rpd", "100")
    assert code == 0 and "connection fake: rpm 5, rpd 100" in out
    assert Http(cli.url)("POST", "/v1/chat/completions", body("a"))[0] == 200
    code, out, err = cli("limits")
    assert code == 0 and "rpm" in out and "rpd" in out and "waits up to 5 s" in err
    line = next(x for x in out.splitlines() if " rpm " in x).split()
    assert line[:6] == ["connection", "fake", "rpm", "1", "5", "4"]
    code, out, _ = cli("limits", "clear", "fake", "rpd")
    assert code == 0 and out.strip() == "connection fake: rpm 5"
    code, out, _ = cli("--json", "limits")
    assert json.loads(out)["connections"][0]["set"] == {"rpm": 5}
    assert cli("limits", "clear", "fake")[1].strip() == "connection fake: no limits"
    code, out, err = cli("usage", "--by", "connection")
    assert code == 0 and out.splitlines()[1].split()[:2] == ["fake", "1"] and "Exploration in" in err
    assert json.loads(cli("usage", "--json", "--by", "kind")[1])["rows"][0]["name"] == "member"


@pytest.mark.parametrize("argv, code, words", [
    (("limits", "set", "fake", "--rpm", "-1"), 2, "out of range"),
    (("limits", "set", "fake", "--rpm", "five"), 2, "not a whole number"),
    (("limits", "set", "fake"), 2, "Name at least one limit"),
    (("limits", "set", "nosuch", "--rpm", "5"), 1, "No connection or model named 'nosuch'"),
    (("limits", "clear", "fake", "rph"), 2, "'rph' is not a limit"),
    (("usage", "--month", "2026-13"), 2, "is not a month"),
    (("usage", "--by", "price"), 2, "invalid choice"),
])
def test_bad_input_exits_with_a_clear_code_and_message(cli, argv, code, words):
    got, _, err = cli(*argv)
    assert got == code and words in err, err


# ---- rolling over, with a controlled clock ---------------------------------------------------------

class Rests:
    def until(self, endpoint, served=None):
        return None


def quota_at(home, clock, limits: dict) -> tuple[Quota, Database]:
    config = Config(home)
    config.write("limits.json", {"limits": limits})
    db = Database(home / "bench.db")
    return Quota(db, config, Rests(), clock), db


MODEL = Model("m", "ep", "served-m")


def utc_clock(*when) -> FakeClock:
    clock = FakeClock(tz=UTC)
    return clock.to(datetime(*when))


def test_a_day_limit_rolls_over_at_midnight_utc(tmp_path):
    clock = utc_clock(2026, 11, 3, 23, 0)
    quota, db = quota_at(tmp_path, clock, {"models": {"m": {"rpd": 2}}})
    try:
        assert quota.take(MODEL, 10) is None and quota.take(MODEL, 10) is None
        refused = quota.take(MODEL, 10)
        midnight = datetime(2026, 11, 4, tzinfo=UTC).timestamp()
        assert refused.at == midnight and refused.limit == "rpd"
        assert "resets at 2026-11-04 00:00:00 UTC (rpd 2 of model 'm')" in refused.text()
        clock.to(datetime(2026, 11, 3, 23, 59, 59))
        assert quota.take(MODEL, 10) is not None                    # a second before: still used up
        clock.to(datetime(2026, 11, 4, 0, 0, 0))
        assert quota.take(MODEL, 10) is None                        # a new day
        assert quota.usage("model", "m")["rpd"]["used"] == 1
    finally:
        db.close()


def test_a_month_limit_rolls_over_on_the_first_utc(tmp_path):
    clock = utc_clock(2026, 12, 31, 12, 0)
    quota, db = quota_at(tmp_path, clock, {"connections": {"ep": {"rpmonth": 3}}})
    try:
        for _ in range(3):
            assert quota.take(MODEL, 1) is None
            clock.advance(hours=1)
        refused = quota.take(MODEL, 1)
        assert refused.at == datetime(2027, 1, 1, tzinfo=UTC).timestamp() and refused.scope == "connection"
        clock.to(datetime(2026, 12, 31, 23, 59, 59))
        assert quota.take(MODEL, 1) is not None
        clock.to(datetime(2027, 1, 1, 0, 0, 0))
        assert quota.take(MODEL, 1) is None
    finally:
        db.close()


def test_a_token_minute_lets_calls_through_as_its_tokens_leave_it(tmp_path):
    clock = utc_clock(2026, 11, 3, 10, 0)
    quota, db = quota_at(tmp_path, clock, {"models": {"m": {"tpm": 100}}})
    try:
        assert quota.take(MODEL, 60) is None
        clock.advance(seconds=10)
        quota.spent(MODEL, 30)                                      # it used 90 in all
        refused = quota.take(MODEL, 20)
        assert refused.limit == "tpm" and refused.at == clock.now() - 10 + 60
        clock.advance(seconds=50)                                   # the first 60 leave; 30 remain
        assert quota.take(MODEL, 20) is None
    finally:
        db.close()
