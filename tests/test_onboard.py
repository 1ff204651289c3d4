"""Onboarding (POST /bench/models, through the queue) and health: register only after a passing probe, one at a
time; retire after a confirming failure."""
from __future__ import annotations

import json
import threading
import time

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.gemini import FakeGemini
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply

KEY = "sk-test-onboard-0123456789"


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", {"id": "org/m-two:free", "context_length": 32000,
                                                   "architecture": {"input_modalities": ["text", "image"]},
                                                   "supported_parameters": ["tools"]}]).expect_key(KEY)
    yield f
    f.stop()


@pytest.fixture
def bench(app, fake):
    assert app("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "key": KEY})[0] == 201
    return app


def models_file(app) -> dict:
    path = app.bench.config.path("models.json")
    return json.loads(path.read_text()).get("models", {}) if path.exists() else {}


def probes(app, alias=None) -> list:
    rows = app.bench.db.query("SELECT * FROM probes" + (" WHERE model = ?" if alias else "") + " ORDER BY id",
                                (alias,) if alias else ())
    return [dict(r) for r in rows]


def test_onboard_registers_probes_and_records(bench, app, fake):
    status, _, d = bench("POST", "/bench/models", {"served": "org/m-two:free", "quick": True})
    assert status == 201, d
    m, p = d["model"], d["probe"]
    assert (m["alias"], m["endpoint"], m["served"], m["status"]) == ("m-two-free", "oa", "org/m-two:free", "active")
    assert m["facts"] == {"context_window": 32000, "vision": True, "tools": True}
    assert p["status"] == "ok" and p["answer"] and p["output_tokens"] > 0 and p["seconds"] >= 0
    probe, timed = [r.body for r in fake.requests if r.path.endswith("/chat/completions")][-2:]
    assert probe["model"] == "org/m-two:free" and "one word" in json.dumps(probe["messages"])
    # then a few dozen tokens, streamed and timed: its first panel's cap fits its speed (test_onboard_speed.py)
    assert timed["model"] == "org/m-two:free" and timed["max_tokens"] == 48 and timed["stream"] is True
    assert m["perf"]["quick"]["status"] == "ok" and m["perf"]["ttft"] is not None
    rows = probes(app, "m-two-free")
    assert len(rows) == 1 and rows[0]["kind"] == "onboard" and rows[0]["input_tokens"] > 0
    assert models_file(app)["m-two-free"]["served"] == "org/m-two:free"
    item = app.bench.db.one("SELECT * FROM onboard_queue WHERE id = ?", (d["item"],))
    assert item["state"] == "done" and item["finished"] >= item["started"] and item["model"] == "m-two-free"
    assert d["suite"].startswith("owed")
    _, _, q = bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True, "ad_hoc": True})
    assert q["model"]["alias"] == "uno" and q["model"]["ad_hoc"] is True and "never called" in q["suite"]
    assert q["model"]["perf"] is None                  # an ad hoc model is called only when asked: not timed
    fake.set_models(["m-one", "m-three"])
    _, _, q = bench("POST", "/bench/models", {"served": "m-three", "quick": True})
    assert q["model"]["ad_hoc"] is False and q["suite"].startswith("owed")
    # the suite: quick onboarding records the run it owes the model (the scheduler's suite job plays it), an ad
    # hoc one owes nothing (the bench never calls it unprompted); test_onboard_queue.py has a full onboarding's run
    assert [(r["model"], r["status"]) for r in app.bench.suite.store.runs()] == [("m-three", "owed"),
                                                                                 ("m-two-free", "owed")]


@pytest.mark.parametrize("reply, code, words", [
    (Reply.error(404), "upstream_not_found", "does not exist"),
    (Reply(garbage=True), "upstream_bad_response", "protocol"),
    (Reply.error(429, retry_after=3), "upstream_rate_limited", "rate-limiting"),
    (Reply.error(500), "upstream_server", "try again later"),
    (Reply(text=""), "upstream_bad_response", "no text"),
    (Reply(drop_after=1, text="one two three"), "upstream_dropped", "try again"),
])
def test_failed_probe_registers_nothing(reply, code, words, bench, app, fake):
    fake.script("m-one", reply)
    status, _, d = bench("POST", "/bench/models", {"served": "m-one", "quick": True})
    assert status in (502, 504), d
    msg = d["error"]["message"]
    assert d["error"]["code"] == code and words in msg and "Nothing was registered" in msg and "\n" not in msg
    assert models_file(app) == {} and probes(app) == []
    item = app.bench.db.one("SELECT * FROM onboard_queue ORDER BY id DESC")
    assert item["state"] == "failed" and "Nothing was registered" in item["reason"]


def test_name_problems(bench, app, fake):
    status, _, d = bench("POST", "/bench/models", {"served": "not-listed"})
    assert status == 404 and "bench candidates" in d["error"]["message"]
    status, _, d = bench("POST", "/bench/models", {"served": "m-one", "endpoint": "nope"})
    assert status == 404 and "No endpoint named 'nope'" in d["error"]["message"]
    status, _, d = bench("POST", "/bench/models", {"served": "not-listed", "endpoint": "oa"})
    assert status == 404 and "does not serve" in d["error"]["message"]
    assert bench("POST", "/bench/models", {"served": "m-one", "alias": "bad alias"})[0] == 400
    assert bench("POST", "/bench/models", {})[0] == 400
    assert bench("POST", "/bench/models", {"served": "m-one", "alias": "a1", "quick": True})[0] == 201
    status, _, d = bench("POST", "/bench/models", {"served": "m-one"})
    assert status == 409 and "already on the bench as 'a1'" in d["error"]["message"]
    status, _, d = bench("POST", "/bench/models", {"served": "org/m-two:free", "alias": "a1"})
    assert status == 409 and "taken" in d["error"]["message"]
    assert list(models_file(app)) == ["a1"]


def test_served_by_two_endpoints_needs_endpoint(bench, fake):
    other = FakeAnthropic().start().set_models(["m-one"]).expect_key(KEY)
    try:
        bench("POST", "/bench/endpoints", {"name": "an", "base_url": other.url, "api": "anthropic", "key": KEY})
        status, _, d = bench("POST", "/bench/models", {"served": "m-one"})
        assert status == 400 and "an, oa" in d["error"]["message"] and "--endpoint" in d["error"]["message"]
        status, _, d = bench("POST", "/bench/models", {"served": "m-one", "endpoint": "an", "quick": True})
        assert status == 201 and d["model"]["endpoint"] == "an"
        assert any(r.path == "/v1/messages" for r in other.requests)
    finally:
        other.stop()


@pytest.mark.parametrize("fake_cls, api", [(FakeAnthropic, "anthropic"), (FakeGemini, "gemini"),
                                           (FakeOllama, "ollama")])
def test_onboard_on_each_protocol(fake_cls, api, app):
    f = fake_cls().start().set_models(["proto-model"])
    try:
        body = {"name": "ep", "base_url": f.url, "api": api}
        body.update({"no_key": True} if api == "ollama" else {"key": KEY})
        assert app("POST", "/bench/endpoints", body)[0] == 201
        status, _, d = app("POST", "/bench/models", {"served": "proto-model", "quick": True})
        assert status == 201 and d["probe"]["status"] == "ok" and d["probe"]["answer"], d
    finally:
        f.stop()


def test_one_model_onboards_at_a_time(bench, app, fake):
    fake.script("m-one", Reply(text="ready", delay=0.5))
    results = []
    threads = [threading.Thread(target=lambda s=s: results.append(bench("POST", "/bench/models",
                                                                        {"served": s, "quick": True})))
               for s in ("m-one", "org/m-two:free")]
    threads[0].start()
    time.sleep(0.1)
    threads[1].start()
    for t in threads:
        t.join(30)
    assert sorted(r[0] for r in results) == [201, 201]
    items = app.bench.db.query("SELECT * FROM onboard_queue ORDER BY started")
    assert len(items) == 2 and items[1]["started"] >= items[0]["finished"]


def test_retire_restore_and_show(bench, app):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    status, _, d = bench("POST", "/bench/models/uno/retire", {})
    assert status == 400 and "reason" in d["error"]["message"]
    status, _, d = bench("POST", "/bench/models/uno/retire", {"reason": "wrong on every review"})
    assert status == 200 and d["model"]["status_text"] == "retired: wrong on every review"
    assert models_file(app)["uno"]["status"] == "retired"
    _, _, d = bench("GET", "/bench/models?find=UN")
    assert [m["alias"] for m in d["models"]] == ["uno"] and d["models"][0]["status"] == "retired"
    assert bench("GET", "/bench/models?find=zzz")[2]["models"] == []
    status, _, d = bench("POST", "/bench/models/uno/restore")
    assert status == 200 and d["model"]["status"] == "active" and d["model"]["reason"] is None
    assert d["probe"]["status"] == "ok"                      # restore probes first
    status, _, d = bench("GET", "/bench/models/uno")
    assert status == 200 and [p["kind"] for p in d["model"]["probes"]] == ["restore", "onboard"]
    status, _, d = bench("GET", "/bench/models/unoo")
    assert status == 404 and "'uno'" in d["error"]["message"]


def test_resting_status_comes_from_rate_limit_facts(bench, app):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    until = time.time() + 600
    app.bench.db.execute("INSERT INTO ratelimits (endpoint, facts, resting_until, updated) VALUES (?, ?, ?, ?)",
                           ("oa", "{}", until, time.time()), wait=True)
    _, _, d = bench("GET", "/bench/models")
    m = d["models"][0]
    assert m["status"] == "resting" and m["resting_until"] == pytest.approx(until)
    assert m["status_text"].startswith("resting until ")


def test_probe_confirms_then_retires_with_evidence(bench, app, fake):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    fake.script("m-one", [Reply.error(500), Reply(text="ready")])
    _, _, d = bench("POST", "/bench/models/uno/probe")
    assert d["retired"] is False and d["probe"]["status"] == "failed" and d["confirm"]["status"] == "ok"
    fake.script("m-one", Reply.error(500))
    _, _, d = bench("POST", "/bench/models/uno/probe")
    assert d["retired"] is True and d["model"]["status"] == "retired"
    ids = [p["id"] for p in probes(app, "uno")][-2:]
    assert "stopped answering" in d["model"]["reason"] and f"#{ids[0]}" in d["model"]["reason"]
    assert [p["kind"] for p in probes(app, "uno")] == ["onboard", "probe", "confirm", "probe", "confirm"]


def test_model_no_longer_served_is_retired(bench, app, fake):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    fake.set_models(["org/m-two:free"])
    fake.script("m-one", Reply.error(404))
    _, _, d = bench("POST", "/bench/models/uno/probe")
    assert d["retired"] is True and "no longer serves" in d["model"]["reason"]


@pytest.mark.parametrize("reply", [Reply.error(401), Reply.error(429)])
def test_key_or_rate_limit_trouble_never_retires(reply, bench, app, fake):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    fake.script("m-one", reply)
    _, _, d = bench("POST", "/bench/models/uno/probe")
    assert d["retired"] is False and "confirm" not in d and d["model"]["status"] != "retired"


def test_probe_all_skips_ad_hoc(bench, app, fake):
    bench("POST", "/bench/models", {"served": "m-one", "alias": "uno", "quick": True})
    bench("POST", "/bench/models", {"served": "org/m-two:free", "alias": "dos", "ad_hoc": True})
    results = app.bench.health.probe_all()
    assert [r["model"] for r in results] == ["uno"]
    assert [p["kind"] for p in probes(app, "dos")] == ["onboard"]
