"""The scheduler and the catalog: the daily catalog job against the fake catalog host, and held models skipped."""
from __future__ import annotations

from datetime import datetime

import pytest

from benchwarmers.catalog import store
from tests.fakes.openai import FakeOpenAI
from tests.helpers.catalog import catalog_host, map_endpoints  # noqa: F401 (fixture: fetches go to a fake host)
from tests.helpers.clock import FakeClock
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.jobs import run_job

TUESDAY = datetime(2025, 3, 4, 3, 15)


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", "vendor/model"])
    yield f
    f.stop()


@pytest.fixture
def svc(home, fake, make_service):
    configure(home, {"oa": (fake, "openai")}, {"uno": ("oa", "m-one")})
    return make_service(clock=FakeClock())


def runs(svc, name: str) -> list[dict]:
    svc.bench.db.sync()
    return Http(svc.url)("GET", f"/bench/jobs?name={name}")[2]["runs"][::-1]


def scheduler(svc, body: dict) -> dict:
    status, _, d = Http(svc.url)("POST", "/bench/scheduler", body)
    assert status == 200, d
    return {j["name"]: j for j in d["jobs"]}


# ---- the catalog job -----------------------------------------------------------------------------

def test_the_catalog_job_waits_to_be_switched_on_then_runs_at_its_time(svc, fake, catalog_host):
    clock = svc.bench.scheduler.clock
    jobs = scheduler(svc, {"enabled": True, "jobs": {"probe": {"on": False}, "perf": {"on": False}}})
    assert jobs["catalog"]["available"] and jobs["catalog"]["on"] is False and jobs["catalog"]["next"] is None
    for _ in range(2):                                  # the scheduler on: the catalog job stays off alone
        clock.advance(days=1)
        svc.bench.scheduler.settle()
    assert runs(svc, "catalog") == [] and catalog_host.requests == []
    clock.to(TUESDAY.replace(hour=2))
    jobs = scheduler(svc, {"jobs": {"catalog": {"on": True, "at": "03:15"}}})
    assert jobs["catalog"]["next"] == clock.epoch(TUESDAY)
    clock.to(TUESDAY.replace(minute=14))
    assert svc.bench.scheduler.settle() == [] and catalog_host.requests == []
    clock.to(TUESDAY.replace(minute=16))
    svc.bench.scheduler.settle()
    [run] = runs(svc, "catalog")
    assert (run["trigger"], run["status"], run["due"]) == ("schedule", "done", clock.epoch(TUESDAY))
    assert run["models"] == 0 and run["calls"] == 2 and fake.requests == []          # no model was called
    assert sorted(path for path, _ in catalog_host.requests) == ["/api.json", "/api/v1/models"]
    assert [s["source"] for s in run["detail"]["ok"]] == ["models.dev", "openrouter"] and run["detail"]["held"] == []
    assert run["outcome"].startswith("fetched models.dev (") and "openrouter (" in run["outcome"]
    copies = {s["source"]: s for s in Http(svc.url)("GET", "/bench/catalog")[2]["sources"]}
    assert copies["models.dev"]["from"] == "fetched" and copies["openrouter"]["fetch"]["ok"] is True
    clock.advance(hours=20)
    svc.bench.scheduler.settle()
    assert len(runs(svc, "catalog")) == 1 and len(catalog_host.requests) == 2    # once per window


def test_a_failed_fetch_is_a_failed_run_that_changes_nothing(svc, home, catalog_host):
    assert run_job(svc, "catalog")["status"] == "done"
    before = store.copy_path(home, "models.dev").read_bytes()
    catalog_host.mode["/api.json"] = "status500"
    run = run_job(svc, "catalog")
    assert run["status"] == "failed" and "models.dev failed (models.dev answered HTTP 500; kept the fetched copy" \
        in run["outcome"]
    assert [f["source"] for f in run["detail"]["failed"]] == ["models.dev"] and run["calls"] == 2
    assert store.copy_path(home, "models.dev").read_bytes() == before
    assert Http(svc.url)("GET", "/bench/jobs?name=catalog&limit=1")[2]["runs"][0]["status"] == "failed"


def test_a_catalog_run_while_a_refresh_runs_fails_and_fetches_nothing(svc, catalog_host):
    with svc.bench.catalog._refreshing:                 # the user's own `bench catalog refresh`, mid-way
        run = run_job(svc, "catalog")
    assert run["status"] == "failed" and run["outcome"] == "A catalog refresh is already running."
    assert catalog_host.requests == []


# ---- held models ---------------------------------------------------------------------------------

def hold(home, svc) -> None:
    """'m' was free when first seen; its served name then lost ':free', so it is held."""
    write(home, "models.json", {"models": {"m": {"endpoint": "oa", "served": "vendor/model:free"},
                                           "uno": {"endpoint": "oa", "served": "m-one"}}})
    assert svc.bench.catalog.holds() == []
    write(home, "models.json", {"models": {"m": {"endpoint": "oa", "served": "vendor/model"},
                                           "uno": {"endpoint": "oa", "served": "m-one"}}})
    assert [h["model"] for h in svc.bench.catalog.holds()] == ["m"]


def chat_models(fake) -> list[str]:
    return [r.body["model"] for r in list(fake.requests) if r.path.endswith("/chat/completions")]


def test_a_held_model_is_skipped_by_the_probe_and_perf_jobs(svc, home, fake):
    map_endpoints(home, {"oa": "some-hub"})             # a provider the catalog has no prices for
    hold(home, svc)
    for name in ("probe", "perf"):
        run = run_job(svc, name)
        assert run["status"] == "done", run
        assert [s["model"] for s in run["detail"]["skipped"]] == ["m"]
        assert run["detail"]["skipped"][0]["why"].startswith("held: its served name lost ':free'")
    assert "vendor/model" not in chat_models(fake) and "m-one" in chat_models(fake)
    assert Http(svc.url)("GET", "/bench/models/m")[2]["model"]["status"] == "held"   # never retired


def test_a_held_model_is_neither_probed_nor_restored(svc, home, fake):
    map_endpoints(home, {"oa": "some-hub"})
    hold(home, svc)
    http = Http(svc.url)
    assert http("POST", "/bench/models/m/retire", {"reason": "paid now"})[0] == 200
    for path in ("/bench/models/m/probe", "/bench/models/m/restore"):
        status, _, d = http("POST", path)
        assert status == 409 and d["error"]["code"] == "model_held", (path, d)
    assert "vendor/model" not in chat_models(fake)
