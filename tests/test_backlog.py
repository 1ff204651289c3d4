"""The backlog and the record as data: set-aside empties pending (all, older than a moment, one collection) from the
API, the CLI and Home's button; unjudged points show on Home and Calls; every export kind streams JSON Lines that
round-trip, filtered by --since and --collection, from the API and `bench export`."""
from __future__ import annotations

import json
import time

import pytest

from tests.helpers.http import Http
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.test_points_wired import ANSWERS, COLS as WIRED, script

COLS = {**WIRED, "other": {"members": ["a", "b"], "explore": 0, "merge_model": "merger"}}


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS)
    script(fake)
    return make_service()


def ask(url, collection="core", content="Why is it slow?", **kw) -> dict:
    status, _, data = Http(url)("POST", "/v1/chat/completions", body(f"bench/{collection}", content, **kw))
    assert status == 200, data
    return data["bench"]


def waiting(url) -> dict:
    return Http(url)("GET", "/bench/pending")[2]


def test_set_aside_empties_pending_by_collection_by_time_and_all(served):
    api = Http(served.url)
    first = ask(served.url, "other")
    time.sleep(0.05)
    middle = time.time()
    ask(served.url, "other")
    ask(served.url, "core", bench={"points": "contested"})
    assert waiting(served.url)["total"] == 7 and waiting(served.url)["points_total"] == 1
    got = api("POST", "/bench/pending/set-aside", {"collection": "other", "before": middle})[2]
    assert got["set_aside"] == 1
    left = {p["panel"] for p in waiting(served.url)["pending"]}
    assert first["panel"] not in left and len(left) == 2
    assert api("POST", "/bench/pending/set-aside", {"collection": "core"})[2]["set_aside"] == 1
    assert waiting(served.url)["points_total"] == 0 and waiting(served.url)["total"] == 2
    assert api("POST", "/bench/pending/set-aside", {"all": True})[2]["set_aside"] == 1
    assert waiting(served.url)["total"] == 0
    for bad in ({}, {"all": False}, {"all": True, "collection": "core"}, {"before": "yesterday"}, {"x": 1},
                {"collection": "no such/name"}):
        status, _, err = api("POST", "/bench/pending/set-aside", bad)
        assert status == 400 and err["error"]["message"], bad


def test_the_cli_and_home_set_aside(served, capsys):
    from benchwarmers.cli.main import main
    from tests.helpers.dashboard import Session
    ask(served.url, "other")
    assert main(["--url", served.url, "verdicts", "set-aside"]) == 2
    assert main(["--url", served.url, "verdicts", "set-aside", "--older-than", "1h"]) == 0
    assert "Set aside 0 asks" in capsys.readouterr().err     # asked a moment ago, not an hour
    assert main(["--url", served.url, "verdicts", "set-aside", "--collection", "other"]) == 0
    assert "Set aside 1 ask " in capsys.readouterr().err and waiting(served.url)["total"] == 0
    ask(served.url, "core", bench={"points": "contested"})
    page = Session(served.url)
    home = page.get("/")[2]
    assert "Points nobody judged" in home and "The cache is stale." in home and "Set every waiting answer aside" in home
    assert "Points nobody judged" in page.get("/calls")[2]
    assert page.form("/pending/set-aside", {"all": "1"})[0] in (200, 303)
    assert waiting(served.url)["total"] == 0 and "Points nobody judged" not in page.get("/")[2]


def lines(url: str, path: str) -> list[dict]:
    import urllib.request
    with urllib.request.urlopen(url + path, timeout=30) as resp:
        assert resp.headers["content-type"].startswith("application/x-ndjson")
        return [json.loads(x) for x in resp.read().decode().splitlines()]


def test_every_export_round_trips(served, capsys):
    from benchwarmers.cli.main import main
    api = Http(served.url)
    bench = ask(served.url, "core", "Which is right?", bench={"points": "contested"})
    seats = {s["model"]: s for s in bench["seats"]}
    api("POST", f"/bench/panels/{bench['panel']}/best", {"seat": seats["a"]["seat"]})
    api("POST", "/bench/verdict", {"call": seats["b"]["call"], "useful": False, "false": ["fresh"]})
    [point] = bench["points"]
    api("POST", f"/bench/points/{point['id']}/verdict", {"true": True})
    later = ask(served.url, "other", "Another?")
    api("POST", f"/bench/panels/{later['panel']}/best", {"seat": 2})
    pairs = lines(served.url, "/bench/export/pairs?collection=core")
    assert [(p["chosen_model"], p["rejected_model"]) for p in pairs] == [("a", "b"), ("a", "c")]
    assert pairs[0]["prompt"] == "Which is right?" and pairs[0]["chosen"] == ANSWERS["m-a"]
    assert pairs[0]["rejected"] == ANSWERS["m-b"] and pairs[0]["panel"] == bench["panel"]
    assert len(lines(served.url, "/bench/export/pairs")) == 3
    [verdict] = lines(served.url, "/bench/export/verdicts")
    assert verdict["call"] == seats["b"]["call"] and verdict["useful"] is False and verdict["false"] == ["fresh"]
    claims = lines(served.url, "/bench/export/claims")
    assert {(c["model"], c["real"]) for c in claims} == {("a", True), ("b", False)}
    exported_points = lines(served.url, "/bench/export/points")      # shown and not shown, each with its verdict
    [exported] = [p for p in exported_points if p["id"] == point["id"]]
    assert exported["verdict"]["true"] is True and exported["shown"] is True
    others = [p for p in exported_points if p is not exported]
    assert others and all(p["verdict"] is None for p in others)     # the unshown point is there, unjudged
    assert exported["assert"] == point["assert"] and exported["quotes"] == point["quotes"]
    assert lines(served.url, f"/bench/export/pairs?since={time.time() + 60}") == []
    assert api("GET", "/bench/export/nope")[0] == 404 and api("GET", "/bench/export/pairs?since=soon")[0] == 400
    capsys.readouterr()
    assert main(["--url", served.url, "export", "pairs", "--since", "1h", "--collection", "core"]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == pairs
