"""Gateway keys with an admin token set: each header form, wrong, revoked, out-of-reach keys and the rate limit."""
from __future__ import annotations

import pytest

from tests.helpers.panel import MEMBERS, body, fake, setup_bench  # noqa: F401

TOKEN = "x" * 20
ADMIN = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def gw(home, fake, make_app):
    """A token-protected app (in-process) with collections core and secret; returns (http, make_key)."""
    setup_bench(home, fake, {"core": {"members": list(MEMBERS), "explore": 0},
                             "secret": {"members": ["x"], "explore": 0}})
    http = make_app(admin_token=TOKEN)

    def make_key(name: str, collections, rpm=None) -> str:
        status, _, data = http("POST", "/bench/keys", {"name": name, "collections": collections, "rpm": rpm},
                               headers=ADMIN)
        assert status == 201, data
        assert data["key"].startswith("bw-") and data["collections"] == (
            collections if isinstance(collections, list) else collections.split(","))
        return data["key"]
    return http, make_key


def forms(key: str) -> list[tuple[dict, str]]:
    """(headers, query) for each way a client presents a key."""
    return [({"Authorization": f"Bearer {key}"}, ""), ({"x-api-key": key}, ""), ({"x-goog-api-key": key}, ""),
            ({}, "?key=" + key)]


def test_each_header_form_works_on_asks_and_collections(gw):
    http, make_key = gw
    key = make_key("app", ["core"])
    for headers, query in forms(key):
        status, _, data = http("POST", "/v1/chat/completions" + query, body(), headers=headers)
        assert status == 200, (headers, query, data)
        assert [s["model"] for s in data["bench"]["seats"]] == MEMBERS
        status, _, data = http("GET", "/bench/collections" + query, headers=headers)
        assert status == 200, data
        assert [c["name"] for c in data["collections"]] == ["core"]
    calls = http("GET", "/bench/calls?collection=core", headers=ADMIN)[2]["calls"]
    assert len(calls) == 12 and {c["caller"] for c in calls} == {"app"}


def test_admin_sees_everything_and_no_key_is_refused(gw):
    http, _ = gw
    assert [c["name"] for c in http("GET", "/bench/collections", headers=ADMIN)[2]["collections"]] == \
        ["core", "secret"]
    status, _, data = http("POST", "/v1/chat/completions", body())
    assert status == 401 and data["error"]["code"] == "unauthorized" and "gateway key" in data["error"]["message"]
    assert http("GET", "/bench/collections")[0] == 401


def test_wrong_and_revoked_keys_are_401(gw):
    http, make_key = gw
    key = make_key("app", ["core"])
    for headers, query in forms("bw-not-a-real-key"):
        status, _, data = http("POST", "/v1/chat/completions" + query, body(), headers=headers)
        assert status == 401, data
        assert set(data["error"]) >= {"message", "type", "code"}
        assert "bw-not-a-real-key" not in data["error"]["message"]
    assert http("POST", "/v1/chat/completions", body(), headers={"Authorization": f"Bearer {key}"})[0] == 200
    status, _, data = http("DELETE", "/bench/keys/app", headers=ADMIN)
    assert status == 200 and data["revoked"]
    for headers, query in forms(key):
        assert http("POST", "/v1/chat/completions" + query, body(), headers=headers)[0] == 401
        assert http("GET", "/bench/collections" + query, headers=headers)[0] == 401
    assert http("DELETE", "/bench/keys/app", headers=ADMIN)[0] == 404
    listed = http("GET", "/bench/keys", headers=ADMIN)[2]["keys"]
    assert [(k["name"], bool(k["revoked"])) for k in listed] == [("app", True)]
    assert all("key" not in k and "hash" not in k for k in listed)


def test_a_key_outside_its_collections_is_403(gw, fake):
    http, make_key = gw
    key = make_key("app", ["core"])
    auth = {"Authorization": f"Bearer {key}"}
    status, _, data = http("POST", "/v1/chat/completions", body("bench/secret"), headers=auth)
    assert status == 403 and "secret" in data["error"]["message"] and data["error"]["type"]
    assert http("POST", "/v1/chat/completions", body("bench/secret:merged"), headers=auth)[0] == 403
    assert http("GET", "/bench/collections/secret", headers=auth)[0] == 403
    assert http("GET", "/bench/collections/core", headers=auth)[0] == 200
    status, _, data = http("POST", "/v1/chat/completions", body("x"), headers=auth)   # a model alias directly
    assert status == 403 and "directly" in data["error"]["message"]
    assert not any(r.body and r.body.get("model") == "m-x" for r in fake.requests)


def test_a_key_sees_only_its_own_calls_and_models(gw):
    http, make_key = gw
    key = make_key("app", ["core"])
    auth = {"x-api-key": key}
    secret = http("POST", "/v1/chat/completions", body("bench/secret"), headers=ADMIN)[2]["bench"]["seats"][0]
    mine = http("POST", "/v1/chat/completions", body(), headers=auth)[2]["bench"]["seats"][0]
    assert http("GET", f"/bench/calls/{secret['call']}", headers=auth)[0] == 404
    assert http("GET", f"/bench/calls/{mine['call']}", headers=auth)[0] == 200
    assert {c["collection"] for c in http("GET", "/bench/calls", headers=auth)[2]["calls"]} == {"core"}
    assert http("POST", "/bench/verdict", {"call": secret["call"], "useful": True}, headers=auth)[0] == 404
    assert http("POST", "/bench/verdict", {"call": mine["call"], "useful": True}, headers=auth)[0] == 200
    ids = [m["id"] for m in http("GET", "/v1/models", headers=auth)[2]["data"]]
    assert ids == ["bench/core", "bench/core:merged", "bench/core:route"]
    record = http("GET", "/bench/record", headers=auth)[2]
    assert list(record["collections"]) == ["core"]
    assert http("GET", "/bench/record?collection=secret", headers=auth)[0] == 403
    assert http("GET", "/bench/record?collection=core", headers=auth)[0] == 200


def test_a_wildcard_key_reaches_everything(gw):
    http, make_key = gw
    auth = {"Authorization": f"Bearer {make_key('all', '*')}"}
    assert http("POST", "/v1/chat/completions", body("bench/secret"), headers=auth)[0] == 200
    status, _, data = http("POST", "/v1/chat/completions", body("y"), headers=auth)
    assert status == 200 and data["bench"]["seats"][0]["model"] == "y"
    call = data["bench"]["seats"][0]["call"]                 # its own direct call: readable and judgeable
    assert http("GET", f"/bench/calls/{call}", headers=auth)[0] == 200
    assert http("POST", "/bench/verdict", {"call": call, "useful": True}, headers=auth)[0] == 200
    assert len(http("GET", "/bench/collections", headers=auth)[2]["collections"]) == 2


def test_gateway_keys_cannot_do_admin_work(gw):
    http, make_key = gw
    auth = {"Authorization": f"Bearer {make_key('app', ['core'])}"}
    assert http("POST", "/bench/keys", {"name": "mine", "collections": ["*"]}, headers=auth)[0] == 401
    assert http("GET", "/bench/keys", headers=auth)[0] == 401
    assert http("PUT", "/bench/collections/core", {"members": ["a"]}, headers=auth)[0] == 401
    assert http("POST", "/bench/keys", {"name": "mine", "collections": ["*"]})[0] == 401


@pytest.mark.parametrize("payload, words", [
    ({"collections": ["core"]}, "name"),
    ({"name": "k"}, "collections"),
    ({"name": "k", "collections": ["core"], "rpm": 0}, "rpm"),
    ({"name": "k", "collections": ["core"], "rpm": "5"}, "rpm"),
])
def test_bad_key_requests_are_400(gw, payload, words):
    http, _ = gw
    status, _, data = http("POST", "/bench/keys", payload, headers=ADMIN)
    assert status == 400 and words in data["error"]["message"], data


def test_a_second_active_key_of_the_same_name_is_409(gw):
    http, make_key = gw
    make_key("app", ["core"])
    assert http("POST", "/bench/keys", {"name": "app", "collections": ["core"]}, headers=ADMIN)[0] == 409


def test_rpm_is_enforced_with_retry_after(gw):
    http, make_key = gw
    auth = {"Authorization": f"Bearer {make_key('slow-app', ['core'], rpm=2)}"}
    for _ in range(2):
        assert http("POST", "/v1/chat/completions", body(), headers=auth)[0] == 200
    status, headers, data = http("POST", "/v1/chat/completions", body(), headers=auth)
    assert status == 429, data
    assert data["error"]["code"] == "rate_limited" and "2 requests a minute" in data["error"]["message"]
    assert 1 <= int(headers["Retry-After"]) <= 60
    other = {"Authorization": f"Bearer {make_key('other-app', ['core'], rpm=2)}"}
    assert http("POST", "/v1/chat/completions", body(), headers=other)[0] == 200   # limits are per key


def test_a_key_revoked_on_one_service_is_refused_by_another_on_the_same_data(home, fake, make_app):
    setup_bench(home, fake, {"core": {"members": ["a"], "explore": 0}})
    dashboard = make_app(admin_token=TOKEN)
    gateway = make_app(admin_token=TOKEN, role="gateway")
    key = dashboard("POST", "/bench/keys", {"name": "app", "collections": ["core"]}, headers=ADMIN)[2]["key"]
    auth = {"Authorization": f"Bearer {key}"}
    assert gateway("POST", "/v1/chat/completions", body(), headers=auth)[0] == 200
    assert dashboard("DELETE", "/bench/keys/app", headers=ADMIN)[0] == 200
    assert gateway("POST", "/v1/chat/completions", body(), headers=auth)[0] == 401
