"""Onboarding times a model with a few dozen tokens, streamed, so its first panel asks it for what it writes in
`panel_seconds`; a model whose speed is not known is asked for a modest cap; the weekly perf job's figures count
before onboarding's once it has run."""
from __future__ import annotations

import time

import pytest

from benchwarmers.roster import speed
from tests.fakes import FakeOpenAI, Reply, SlowModel
from tests.helpers.http import Http
from tests.helpers.panel import body


@pytest.fixture
def slow():
    s = SlowModel(first_byte=0.02, tokens_per_second=100, length=40).start()
    s.set_models(["llama", "qwen"])
    yield s
    s.stop()


def onboard(api, served: str, **how) -> dict:
    status, _, d = api("POST", "/bench/models", {"served": served, **how})
    assert status == 201, d
    return d


def log_of(api, item: int) -> str:
    return "\n".join(api("GET", f"/bench/onboard/{item}")[2]["log_lines"])


def test_quick_onboarding_times_the_model_and_its_first_panel_fits_panel_seconds(make_service, slow):
    api = Http(make_service().url)
    assert api("POST", "/bench/settings", {"panel_seconds": 4})[0] == 200
    assert api("POST", "/bench/endpoints", {"name": "local", "base_url": slow.url, "no_key": True})[0] == 201
    d = onboard(api, "llama", quick=True)
    assert slow.asked_max == [16, 48] and slow.streamed == [True, True]    # the probe, then a few dozen tokens
    perf = d["model"]["perf"]
    assert perf["quick"]["status"] == "ok" and perf["quick"]["output_tokens"] == 40
    assert perf["short"] is None and perf["long"] is None                   # the perf job has not run
    ttft, tps = perf["ttft"], perf["tokens_per_second"]
    assert ttft is not None and tps > 0 and f"{tps:.1f} tokens/s" in log_of(api, d["item"])
    # the README's next step: the first ask asks it for what it writes in panel_seconds, not for 4,096 tokens
    status, _, data = api("POST", "/v1/chat/completions", body("llama"))
    assert status == 200 and data["bench"]["seats"][0]["status"] == "ok"
    fits = max(min(4096, int(tps * (4 - ttft))), 256)
    assert slow.asked_max[-1] == fits and fits < speed.UNMEASURED


def test_a_model_of_unknown_speed_gets_a_modest_cap_and_a_clients_own_counts(make_service, slow):
    api = Http(make_service().url)
    assert api("POST", "/bench/endpoints", {"name": "local", "base_url": slow.url, "no_key": True})[0] == 201
    d = onboard(api, "qwen", ad_hoc=True)                 # ad hoc: only what it is asked, so not timed
    assert d["model"]["perf"] is None and slow.asked_max == [16]
    assert "speed: not measured" in log_of(api, d["item"])
    assert api("POST", "/v1/chat/completions", body("qwen"))[0] == 200
    assert slow.asked_max[-1] == speed.UNMEASURED == 1024
    assert api("POST", "/v1/chat/completions", body("qwen", max_tokens=2000))[0] == 200
    assert slow.asked_max[-1] == 2000


def test_a_failed_measure_registers_the_model_all_the_same(make_service):
    with FakeOpenAI() as fake:
        fake.set_models(["m"]).script("m", [Reply(text="ready"), Reply.error(500, message="no slot")])
        api = Http(make_service().url)
        assert api("POST", "/bench/endpoints", {"name": "oa", "base_url": fake.url, "no_key": True})[0] == 201
        d = onboard(api, "m", quick=True)
        assert d["model"]["status"] == "active" and d["model"]["perf"]["quick"]["status"] == "failed"
        assert "speed: the measure failed" in log_of(api, d["item"]) and "1,024 output tokens" in log_of(api, d["item"])
        assert api("POST", "/v1/chat/completions", body("m"))[0] == 200
        assert fake.last.body["max_tokens"] == 1024


def test_the_perf_jobs_figures_count_before_onboardings():
    now = time.time()
    quick = speed.Figure("m", "quick", "ok", ttft=0.5, seconds=2.0, output_tokens=48, tokens_per_second=31.3,
                         created=now)
    assert speed.summary({"quick": quick})["tokens_per_second"] == 31.3
    long_ = speed.Figure("m", "long", "ok", ttft=2.0, seconds=20.0, output_tokens=541, tokens_per_second=30.0,
                         created=now + 60)
    short = speed.Figure("m", "short", "ok", ttft=0.4, seconds=3.0, output_tokens=80, tokens_per_second=30.5,
                         created=now + 50)
    both = speed.summary({"quick": quick, "long": long_, "short": short})
    assert (both["ttft"], both["tokens_per_second"]) == (0.4, 30.0) and both["quick"]["tokens_per_second"] == 31.3
