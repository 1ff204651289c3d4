"""Fetching the catalogs: only good copies are kept; failures, garbage, stalls and huge bodies change nothing."""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchwarmers.catalog import sources, store
from benchwarmers.catalog.core import Catalog
from benchwarmers.cli.main import main
from benchwarmers.roster.registry import Registry
from benchwarmers.store import Config
from tests.helpers.catalog import catalog_host  # noqa: F401 (fixture)
from tests.helpers.http import Http


def book(home) -> Catalog:
    config = Config(home)
    return Catalog(home, config, Registry(config))


def test_a_fresh_install_knows_the_shipped_copies(home, http):
    status, _, d = http("GET", "/bench/catalog")
    assert status == 200
    by = {s["source"]: s for s in d["sources"]}
    assert by["models.dev"]["from"] == "shipped" and by["models.dev"]["models"] > 40
    assert by["freellmapi"]["from"] == "shipped" and by["freellmapi"]["date"].startswith("2026-06")
    assert by["openrouter"]["from"] is None and by["openrouter"]["fetch"] is None
    assert by["models.dev"]["fetched_from"] == "https://models.dev/api.json"
    status, _, d = http("GET", "/bench/discover")
    assert status == 200 and d["models"], "Discover is not empty offline"


def test_refresh_keeps_each_good_copy_and_sends_no_key(home, http, catalog_host):
    status, _, d = http("POST", "/bench/catalog/refresh", {})
    assert status == 200, d
    assert d["sources"]["models.dev"] == {"ok": True, "models": 9}
    assert d["sources"]["openrouter"] == {"ok": True, "models": 4}
    assert sorted(p for p, _ in catalog_host.requests) == ["/api.json", "/api/v1/models"]
    for _, headers in catalog_host.requests:
        assert "authorization" not in headers and "cookie" not in headers
        assert headers["user-agent"].startswith("benchwarmers/")
    copy = json.loads(store.copy_path(home, "models.dev").read_text(encoding="utf-8"))
    assert copy["url"] == "https://models.dev/api.json" and "knowledge" not in json.dumps(copy)
    status, _, d = http("GET", "/bench/catalog")
    by = {s["source"]: s for s in d["sources"]}
    assert by["models.dev"]["from"] == "fetched" and by["models.dev"]["fetch"]["ok"] is True
    assert by["openrouter"]["models"] == 4


@pytest.mark.parametrize("mode, says", [
    ("status500", "HTTP 500"), ("garbage", "not its catalog"), ("not_catalog", "not its catalog"),
    ("stall", "stopped sending"), ("huge", "over the 32 MB cap"), ("huge_chunked", "more than the 32 MB cap"),
])
def test_a_bad_fetch_leaves_the_last_copy_untouched(home, catalog_host, mode, says):
    catalog = book(home)
    assert catalog.refresh()["sources"]["models.dev"]["ok"]
    before = store.copy_path(home, "models.dev").read_bytes()
    catalog_host.mode["/api.json"] = mode
    result = catalog.refresh()["sources"]
    assert result["models.dev"]["ok"] is False and says in result["models.dev"]["error"], result
    assert result["models.dev"]["kept"].startswith("the fetched copy of ")
    assert result["openrouter"]["ok"] is True                      # one source failing spares the other
    assert store.copy_path(home, "models.dev").read_bytes() == before
    assert store.read_status(home)["models.dev"]["error"] == result["models.dev"]["error"]
    assert catalog.status()["sources"][0]["from"] == "fetched"


def test_a_list_far_shorter_than_the_last_is_refused(home, catalog_host):
    catalog = book(home)
    catalog.refresh()
    short = {"data": [json.loads(catalog_host.body["/api/v1/models"])["data"][0]]}
    catalog_host.body["/api/v1/models"] = json.dumps(short).encode()
    result = catalog.refresh()["sources"]["openrouter"]
    assert result["ok"] is False and "listed 1 model where the last copy had 4" in result["error"]


def test_a_first_fetch_that_fails_keeps_the_shipped_copy(home, catalog_host):
    catalog_host.mode["/api.json"] = "garbage"
    result = book(home).refresh()["sources"]["models.dev"]
    assert result["ok"] is False and result["kept"].startswith("the shipped copy of 2026-12-01")
    assert not store.copy_path(home, "models.dev").exists()


@pytest.mark.parametrize("root", ["https://127.0.0.1:9", "http://example.com", "http://10.0.0.1:80",
                                  "http://127.0.0.1:9/evil"])
def test_the_test_hook_points_at_this_machine_only(root):
    with pytest.raises(ValueError):
        sources.use_fake_for_tests(root)
    assert sources.address(sources.FETCHED[0]) == "https://models.dev/api.json"


def test_a_refresh_while_one_runs_is_a_409(home, make_service, catalog_host):
    http = Http(make_service().url)
    catalog_host.mode["/api.json"] = "stall"
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(http, "POST", "/bench/catalog/refresh", {})
        deadline = time.monotonic() + 30
        while not catalog_host.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        status, _, d = http("POST", "/bench/catalog/refresh", {})
        assert status == 409 and "already running" in d["error"]["message"]
        assert first.result()[0] == 200


def test_bench_catalog_refresh_says_what_was_kept(home, service, catalog_host, capsys):
    assert main(["--url", service.url, "catalog", "refresh"]) == 0
    assert "models.dev: fetched, 9 models" in capsys.readouterr().out
    catalog_host.mode["/api/v1/models"] = "status500"
    assert main(["--url", service.url, "catalog", "refresh"]) == 1
    out = capsys.readouterr().out
    assert "openrouter: failed (openrouter answered HTTP 500); kept the fetched copy of " in out
    assert main(["--url", service.url, "catalog"]) == 0
    assert "failed: openrouter answered HTTP 500" in capsys.readouterr().out
