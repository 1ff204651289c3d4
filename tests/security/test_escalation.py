"""Escalation and IDOR: a gateway key limited to some collections reaches their models and nothing else, by every
path (`bench.with` in every format, streamed, merged, the CLI, MCP), and sees no one else's calls, record or names."""
from __future__ import annotations

import json

import pytest

from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data, cli, raw


@pytest.fixture
def keyed(guarded):
    """The guarded app and the headers of a key for `core` and `ghost`, a collection deleted after the key was made
    (a key cannot be made for one that does not exist, but it can outlive one)."""
    app, make_key = guarded
    assert app("PUT", "/bench/collections/ghost", {"members": ["a"]}, headers=ADMIN_HEADERS)[0] == 200
    secret = make_key(["core", "ghost"])
    assert app("DELETE", "/bench/collections/ghost", headers=ADMIN_HEADERS)[0] == 200
    return app, {"Authorization": f"Bearer {secret}"}


OUTSIDE = ["paid", "x"]     # an ad-hoc pay-per-use model, and the member of a collection the key does not reach

# (path, body) per format, each asking bench/core with bench.with naming a model
ASKS = {
    "openai_chat": ("/v1/chat/completions", {"model": "{m}", "messages": [{"role": "user", "content": "hi"}]}),
    "openai_responses": ("/v1/responses", {"model": "{m}", "input": "hi"}),
    "openai_completions": ("/v1/completions", {"model": "{m}", "prompt": "hi"}),
    "anthropic": ("/v1/messages", {"model": "{m}", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}),
    "ollama": ("/api/chat", {"model": "{m}", "stream": False, "messages": [{"role": "user", "content": "hi"}]}),
    "gemini": ("/v1beta/models/{m}:generateContent", {"contents": [{"parts": [{"text": "hi"}]}]}),
}


def ask(fmt: str, model: str, with_models, stream: bool = False) -> tuple[str, dict]:
    path, body = ASKS[fmt]
    body = json.loads(json.dumps(body).replace("{m}", model))
    body["bench"] = {"with": with_models}
    if stream:
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
        if fmt != "gemini":
            body["stream"] = True
    return path.replace("{m}", model), body


@pytest.mark.parametrize("fmt", sorted(ASKS))
@pytest.mark.parametrize("mode", ["bench/core", "bench/core:merged"])
@pytest.mark.parametrize("stream", [False, True])
def test_bench_with_cannot_seat_a_model_outside_the_keys_collections(keyed, fake, fmt, mode, stream):
    app, headers = keyed
    for outside in (OUTSIDE, ",".join(OUTSIDE), ["a", "paid"]):
        path, body = ask(fmt, mode, outside, stream)
        status, _, reply = app("POST", path, body, headers=headers)
        assert status == 403, (fmt, mode, stream, outside, status, reply)
    served = {r.body.get("model") for r in fake.requests if isinstance(r.body, dict)}
    assert not served & {"m-paid", "m-x"}, served


def test_bench_with_naming_the_keys_own_members_still_works(keyed):
    app, headers = keyed
    path, body = ask("openai_chat", "bench/core", ["b"])
    status, _, reply = app("POST", path, body, headers=headers)
    assert status == 200 and [s["model"] for s in reply["bench"]["seats"]] == ["a", "b"]


def test_an_unknown_collection_names_only_the_keys_own(keyed):
    """The 404's hint once listed every collection on the bench."""
    app, headers = keyed
    for model in ("bench/ghost", "bench/ghost:route"):
        status, _, reply = app("POST", "/v1/chat/completions", {"model": model, "messages": [
            {"role": "user", "content": "hi"}]}, headers=headers)
        assert status == 404, reply
        assert "secret" not in json.dumps(reply) and "bench/core" in json.dumps(reply)


def test_the_record_of_a_limited_key_covers_its_collections_only(keyed):
    app, headers = keyed
    for collection in ("core", "secret"):
        status, _, _ = app("POST", "/v1/chat/completions", {"model": f"bench/{collection}", "messages": [
            {"role": "user", "content": "hi"}]}, headers=ADMIN_HEADERS)
        assert status == 200
    status, _, record = app("GET", "/bench/record", headers=headers)
    assert status == 200
    assert set(record["collections"]) == {"core"}
    assert set(record["models"]) == {"a", "b"}, record["models"]          # "x" answers only in `secret`
    status, _, _ = app("GET", "/bench/record?collection=secret", headers=headers)
    assert status == 403


def test_a_limited_key_sees_and_judges_only_calls_of_its_collections(keyed):
    app, headers = keyed
    _, _, theirs = app("POST", "/v1/chat/completions", {"model": "bench/secret", "messages": [
        {"role": "user", "content": "hi"}]}, headers=ADMIN_HEADERS)
    call = theirs["bench"]["seats"][0]["call"]
    assert app("GET", f"/bench/calls/{call}", headers=headers)[0] == 404
    assert app("POST", "/bench/verdict", {"call": call, "useful": False}, headers=headers)[0] == 404
    _, _, listed = app("GET", "/bench/calls?collection=secret", headers=headers)
    assert listed["calls"] == []


def test_the_cli_with_flag_is_held_to_the_key_too(home, fake, make_service):
    """`bench ask --with` reaches the same check (it is a client of the same route)."""
    bench_data(home, fake)
    svc = make_service(admin_token=TOKEN)
    status, _, made = raw(svc.url, "POST", "/bench/keys", b'{"name": "cli", "collections": ["core"]}',
                          {"Content-Type": "application/json", **ADMIN_HEADERS})
    proc = cli(svc.url, "ask", "core", "hello", "--with", "paid", BENCHWARMERS_KEY=json.loads(made)["key"])
    assert proc.returncode == 1
    assert "does not reach" in proc.stderr.decode()
    assert not any(isinstance(r.body, dict) and r.body.get("model") == "m-paid" for r in fake.requests)


def test_a_key_made_again_under_an_old_name_does_not_inherit_its_pending_verdicts(home, fake, make_service):
    """Pending answers were matched by the key's name: a new key given a revoked key's name saw (and could judge)
    every answer the old one was still owed."""
    from tests.helpers.http import Http
    bench_data(home, fake)
    http = Http(make_service(admin_token=TOKEN).url)

    def make(name: str = "app") -> dict:
        status, _, made = http("POST", "/bench/keys", {"name": name, "collections": ["core"]}, ADMIN_HEADERS)
        assert status == 201, made
        return {"Authorization": f"Bearer {made['key']}"}

    def ask(headers: dict) -> list:
        status, _, d = http("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
            {"role": "user", "content": "hi"}]}, headers)
        assert status == 200, d
        return [s["call"] for s in d["bench"]["seats"]]

    old = make()
    owed = ask(old)
    assert http("GET", "/bench/pending", headers=old)[2]["total"] == 2
    assert http("DELETE", "/bench/keys/app", headers=ADMIN_HEADERS)[0] == 200
    new = make()
    assert http("GET", "/bench/pending", headers=new)[2] == {"points": [], "points_total": 0, "pending": [],
                                                               "total": 0, "limit": 50,
                                                               "looked_through": 0, "total_capped": False,
                                                               "asked_by": {"key": "app"}}
    mine = ask(new)
    assert {p["call"] for p in http("GET", "/bench/pending", headers=new)[2]["pending"]} == set(mine)
    everyone = http("GET", "/bench/pending", headers=ADMIN_HEADERS)[2]
    assert {p["call"] for p in everyone["pending"]} == set(owed) | set(mine)      # the admin still sees them all
