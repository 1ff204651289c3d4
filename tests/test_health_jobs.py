"""The scheduled jobs against fake upstreams: retirement with evidence, flags that never retire, speed figures."""
from __future__ import annotations

import json

import pytest

from benchwarmers.cli.main import main
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.jobs import run_job

KEY = "sk-test-health-0123456789"


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", "m-two", "m-three"])
    yield f
    f.stop()


@pytest.fixture
def svc(home, fake, make_service):
    configure(home, {"oa": (fake, "openai")},
              {"uno": ("oa", "m-one"), "dos": ("oa", "m-two"), "tres": ("oa", "m-three"),
               "paid": {"endpoint": "oa", "served": "m-one", "ad_hoc": True}})
    return make_service(clock=FakeClock())


def run(svc, job: str = "probe") -> dict:
    return run_job(svc, job)


def model(svc, alias: str) -> dict:
    return Http(svc.url)("GET", f"/bench/models/{alias}")[2]["model"]


def chat_models(fake) -> list[str]:
    return [r.body["model"] for r in list(fake.requests) if r.path.endswith("/chat/completions")]


# ---- retirement ----------------------------------------------------------------------------------

def test_a_model_that_stops_answering_is_retired_after_one_confirming_call(svc, fake):
    fake.script("m-two", Reply.error(503))
    done = run(svc)
    assert done["status"] == "done" and done["outcome"] == "probed 3 models: 2 answered, 1 retired (dos)"
    assert chat_models(fake).count("m-two") == 2 and "m-one" in chat_models(fake)   # ad hoc `paid` never called
    assert chat_models(fake).count("m-one") == 1
    m = model(svc, "dos")
    assert m["status"] == "retired" and m["reason"].startswith("it stopped answering")
    evidence = m["retirement"]["evidence"]
    assert [(p["kind"], p["upstream_status"], p["error_kind"]) for p in evidence["probes"]] == [
        ("probe", 503, "server"), ("confirm", 503, "server")]
    assert evidence["listing"]["holds_it"] is True and "m-two" in evidence["listing"]["models"]
    assert model(svc, "uno")["status"] == "active" and model(svc, "uno")["retirement"] is None
    assert [r["model"] for r in done["detail"]["retired"]] == ["dos"]


def test_a_model_its_endpoint_no_longer_lists_is_retired_with_that_list(svc, fake, capsys):
    fake.set_models(["m-one", "m-three"])
    fake.script("m-two", Reply.error(404))
    run(svc)
    m = model(svc, "dos")
    assert m["status"] == "retired" and "no longer serves it" in m["reason"]
    listing = m["retirement"]["evidence"]["listing"]
    assert listing == {"endpoint": "oa", "holds_it": False, "count": 2, "models": ["m-one", "m-three"]}
    assert [p["upstream_status"] for p in m["retirement"]["evidence"]["probes"]] == [404, 404]
    assert main(["--url", svc.url, "model", "show", "dos"]) == 0
    out = capsys.readouterr().out
    assert "Evidence: confirm #" in out and "(404)" in out and "oa listed 2 models, not m-two" in out


def test_an_endpoint_that_refuses_connections_retires_its_models(home, fake, make_service):
    gone = FakeOpenAI().start()
    url = gone.url
    gone.stop()                                    # nothing listens there any more
    configure(home, {"oa": (fake, "openai"), "dead": (type("F", (), {"url": url})(), "openai")},
              {"uno": ("oa", "m-one"), "ghost": ("dead", "m-ghost")})
    svc = make_service(clock=FakeClock())
    done = run(svc)
    m = model(svc, "ghost")
    assert m["status"] == "retired" and "refused the connection" in m["reason"]
    assert [p["error_kind"] for p in m["retirement"]["evidence"]["probes"]] == ["connection", "connection"]
    assert m["retirement"]["evidence"]["listing"] is None      # its list could not be had either
    assert done["calls"] == 5 and model(svc, "uno")["status"] == "active"


def test_a_refused_key_flags_the_endpoint_and_retires_nothing(home, make_service):
    keyed = FakeOpenAI().start().set_models(["m-one", "m-two"]).expect_key(KEY)
    try:
        svc = make_service(clock=FakeClock())
        http = Http(svc.url)
        assert http("POST", "/bench/endpoints", {"name": "oa", "base_url": keyed.url, "key": KEY})[0] == 201
        for served, alias in (("m-one", "uno"), ("m-two", "dos")):
            assert http("POST", "/bench/models", {"served": served, "alias": alias, "quick": True})[0] == 201
        keyed.expect_key("sk-rotated-elsewhere-000000")
        before = len(keyed.requests)
        done = run(svc)
        assert len(keyed.requests) == before + 1                   # the model list said it all: no probes
        assert [s["model"] for s in done["detail"]["skipped"]] == ["dos", "uno"]
        assert "key refused" in done["detail"]["skipped"][0]["why"]
        assert all(model(svc, a)["status"] == "active" for a in ("uno", "dos"))
        [e] = http("GET", "/bench/endpoints")[2]["endpoints"]
        assert e["state"] == "key refused" and e["flag"]["flag"] == "key_refused" and KEY not in json.dumps(e)
        _, _, probe = http("POST", "/bench/models/uno/probe")      # the user's own probe says the same
        assert probe["retired"] is False and probe["probe"]["error_kind"] == "auth"
        keyed.expect_key(KEY)
        assert http("POST", "/bench/models/uno/probe")[2]["probe"]["status"] == "ok"
        assert http("GET", "/bench/endpoints")[2]["endpoints"][0]["state"] == "ok"   # an answer clears the flag
    finally:
        keyed.stop()


def test_a_keys_rate_limit_rests_the_endpoint_and_retires_nothing(svc, fake):
    fake.script("m-two", Reply.error(429, style="openrouter", retry_after=600))   # the whole key's limit
    done = run(svc)
    assert chat_models(fake) == ["m-two"]                          # dos, then nothing more on a resting endpoint
    assert [s["model"] for s in done["detail"]["skipped"]] == ["tres", "uno"]
    assert "resting until" in done["detail"]["skipped"][0]["why"]
    assert done["detail"]["failed"][0]["model"] == "dos" and not done["detail"]["retired"]
    [e] = Http(svc.url)("GET", "/bench/endpoints")[2]["endpoints"]
    assert e["state"].startswith("resting until") and e["resting_until"] > 0
    again = run(svc)
    assert again["calls"] == 0 and len(again["detail"]["skipped"]) == 3 and chat_models(fake) == ["m-two"]


def test_a_models_rate_limit_rests_that_model_only(svc, fake):
    fake.script("m-two", Reply.error(429, style="openai", retry_after=600))      # counted per model
    done = run(svc)
    assert sorted(chat_models(fake)) == ["m-one", "m-three", "m-two"]          # its neighbours are still probed
    assert done["detail"]["failed"][0]["model"] == "dos" and not done["detail"]["retired"]
    assert not done["detail"]["skipped"]
    [e] = Http(svc.url)("GET", "/bench/endpoints")[2]["endpoints"]
    assert e["state"] == "ok" and not e["resting_until"]
    assert model(svc, "dos")["resting_until"] > 0 and not model(svc, "uno")["resting_until"]
    again = run(svc)
    assert [s["model"] for s in again["detail"]["skipped"]] == ["dos"]
    assert "rests on a rate limit" in again["detail"]["skipped"][0]["why"]
    assert chat_models(fake).count("m-two") == 1 and chat_models(fake).count("m-one") == 2


# ---- restore -------------------------------------------------------------------------------------

def test_restore_probes_first(svc, fake):
    http = Http(svc.url)
    http("POST", "/bench/models/dos/retire", {"reason": "testing"})
    fake.script("m-two", Reply.error(500))
    status, _, d = http("POST", "/bench/models/dos/restore")
    assert status == 502 and "stays retired" in d["error"]["message"]
    assert model(svc, "dos")["status"] == "retired"
    fake.script("m-two", Reply(text="ready"))
    status, _, d = http("POST", "/bench/models/dos/restore")
    assert status == 200 and d["model"]["status"] == "active" and d["probe"]["kind"] == "restore"
    calls = len(fake.requests)
    status, _, d = http("POST", "/bench/models/dos/restore")     # already active: no call
    assert status == 200 and d["probe"] is None and len(fake.requests) == calls


# ---- speed figures -------------------------------------------------------------------------------

def test_probe_figures_reach_the_roster_its_json_and_the_cli(svc, fake, capsys):
    fake.script("m-two", Reply(text="ready", delay=0.05))
    run(svc)
    listed = {m["alias"]: m for m in Http(svc.url)("GET", "/bench/models")[2]["models"]}
    probe = listed["dos"]["last_probe"]
    assert probe["status"] == "ok" and probe["seconds"] >= 0.05 and probe["created"] > 0
    assert listed["paid"]["last_probe"] is None                                  # ad hoc: never probed
    assert main(["--url", svc.url, "models"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "LAST PROBE" in rows["ALIAS"]
    assert "ok 0m ago" in rows["dos"] and "never probed" in rows["paid"]


def test_speed_figures_reach_the_roster_its_json_and_the_cli(svc, fake, capsys):
    fake.script("*", Reply(text="one two three four five six seven eight nine ten", chunk_delay=0.01))
    done = run(svc, "perf")
    assert done["status"] == "done" and done["outcome"] == "timed 3 models: 3 measured" and done["calls"] == 6
    sent = [r.body for r in fake.requests if r.path.endswith("/chat/completions")]
    assert len(sent) == 6 and len(json.dumps(sent[1])) > 5 * len(json.dumps(sent[0]))   # short, then long
    listed = {m["alias"]: m for m in Http(svc.url)("GET", "/bench/models")[2]["models"]}
    perf = listed["uno"]["perf"]
    assert perf["ttft"] > 0 and perf["tokens_per_second"] > 0 and perf["measured"] > 0
    assert perf["short"]["status"] == "ok" and perf["long"]["output_tokens"] > 0 and listed["paid"]["perf"] is None
    history = model(svc, "uno")["perf_history"]
    assert [h["prompt"] for h in history] == ["short", "long"] and all(h["created"] for h in history)
    assert model(svc, "uno")["perf"] == perf
    assert main(["--url", svc.url, "models"]) == 0
    out = capsys.readouterr().out
    assert "SPEED" in out and "tok/s" in out and "never measured" in out         # paid: ad hoc, never timed
    assert main(["--url", svc.url, "models", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["models"][3]["perf"]["ttft"] == perf["ttft"]
    assert main(["--url", svc.url, "model", "show", "uno"]) == 0
    assert "Speed:" in capsys.readouterr().out


def test_a_failed_speed_figure_is_kept_and_retires_nothing(svc, fake):
    fake.script("m-two", Reply.error(500))
    done = run(svc, "perf")
    assert [f["model"] for f in done["detail"]["failed"]] == ["dos"] and model(svc, "dos")["status"] == "active"
    perf = model(svc, "dos")["perf"]
    assert perf["short"]["status"] == "failed" and perf["long"] is None and perf["ttft"] is None
