"""The command line's points: `bench ask` prints them after the answers, `bench points PANEL`, `bench verdict
--point P --true|--false|--withdraw`, `bench collection save --referee --points`."""
from __future__ import annotations

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.http import Http
from tests.helpers.panel import fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.test_cli_ask import bench_cli, err, out

ANSWERS = {"m-a": "The cache is stale. The lock is held.", "m-b": "The cache is fresh. The lock is held.",
           "m-c": "The lock is held."}


@pytest.fixture
def url(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger"}})
    for served, text in ANSWERS.items():
        fake.script(served, text)
    fake.script("m-merge", FakeReferee().reply())
    return make_service().url


def test_a_new_collection_shows_contested_points_and_the_cli_judges_one(url):
    proc = bench_cli(url, "collection", "save", "fresh", "--members", "a,b,c", "--explore", "0", "--referee",
                     "merger")
    assert proc.returncode == 0, err(proc)
    col = Http(url)("GET", "/bench/collections/fresh")[2]
    assert col["points"] == "contested" and col["referee"] == "merger"
    proc = bench_cli(url, "ask", "fresh", "Why is it slow?")
    assert proc.returncode == 0, err(proc)
    stdout, stderr = out(proc), err(proc)
    assert stdout.index("## Seat 3") < stdout.index("## Where they disagree")      # after the answers, in order
    assert "The cache is stale." in stdout and "points: 1 shown of 2" in stderr
    point = next(w for w in stderr.split() if w.startswith("pt_"))
    panel = Http(url)("GET", "/bench/history?limit=1")[2]["items"][0]["id"]
    listed = bench_cli(url, "points", panel)
    assert listed.returncode == 0 and point in out(listed) and "seat 2: \u201cThe cache is fresh\u201d" in out(listed)
    judged = bench_cli(url, "verdict", "--point", point, "--false", "--note", "it is fresh")
    assert judged.returncode == 0, err(judged)
    assert "judged false: 2 claims" in err(judged) and "--not-useful --from-points" in err(judged)
    call = next(line.split("bench verdict ")[1].split()[0] for line in err(judged).splitlines()
                if line.startswith("seat 1 "))
    confirmed = bench_cli(url, "verdict", call, "--not-useful", "--from-points")
    assert confirmed.returncode == 0, err(confirmed)
    assert Http(url)("GET", f"/bench/calls/{call}")[2]["verdicts"][-1]["from_points"] is True
    gone = bench_cli(url, "verdict", "--point", point, "--withdraw")
    assert gone.returncode == 0 and "withdrawn" in err(gone)
    assert bench_cli(url, "collection", "save", "fresh", "--points", "off").returncode == 0
    assert Http(url)("GET", "/bench/collections/fresh")[2]["points"] == "off"


def test_a_point_verdict_needs_one_word(url):
    assert bench_cli(url, "verdict", "--point", "pt_x").returncode == 2
    assert bench_cli(url, "verdict", "--point", "pt_x", "--true", "--false").returncode == 2
    assert bench_cli(url, "verdict", "--point", "pt_x", "--useful").returncode == 2
    assert bench_cli(url, "verdict", "somecall").returncode == 2
    missing = bench_cli(url, "verdict", "--point", "pt_nope", "--true")
    assert missing.returncode == 1 and "No point" in err(missing)


def test_pending_lists_the_unjudged_points_first(url):
    assert bench_cli(url, "collection", "save", "fresh", "--members", "a,b,c", "--explore", "0", "--referee",
                     "merger").returncode == 0
    assert bench_cli(url, "ask", "fresh", "Why is it slow?").returncode == 0
    pending = bench_cli(url, "verdicts", "pending")
    assert pending.returncode == 0, err(pending)
    text = out(pending)
    assert "pt_" in text and text.index("pt_") < text.index("asked")      # the points table before the answers
    assert "Points nobody judged: 1" in err(pending)


def test_pending_shows_an_older_panels_points_beside_the_newest_answers(url):
    """The default limit of 20 holds for points and answers apart: 20 newer panels without points (60 answers
    waiting) no longer hide the points of the panels before them."""
    assert bench_cli(url, "collection", "save", "fresh", "--members", "a,b,c", "--explore", "0", "--referee",
                     "merger").returncode == 0
    api = Http(url)

    def ask(collection: str, text: str) -> None:
        assert api("POST", "/v1/chat/completions", {"model": f"bench/{collection}", "messages": [
            {"role": "user", "content": text}]})[0] == 200
    ask("fresh", "Why is it slow?")
    ask("fresh", "Why is it still slow?")
    for i in range(20):                  # core asks no referee: its panels have no points
        ask("core", f"question {i}")
    found = api("GET", "/bench/pending?limit=20")[2]
    assert len(found["points"]) == 2 and found["points_total"] == 2
    assert (len(found["pending"]), found["total"]) == (20, 66)
    assert found["points"][0]["panel"] != found["points"][1]["panel"]
    pending = bench_cli(url, "verdicts", "pending")
    assert pending.returncode == 0, err(pending)
    assert out(pending).count("pt_") == 2 and "Points nobody judged: 2." in err(pending)
    assert "66 answers; the newest 20 shown" in err(pending)
    few = bench_cli(url, "verdicts", "pending", "--limit", "1")
    assert out(few).count("pt_") == 1 and "Points nobody judged: 2; the newest 1 shown." in err(few)
    assert "66 answers; the newest 1 shown" in err(few)
