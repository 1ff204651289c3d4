"""Points in a panel's reply: the referee called after the seats, its block and `bench.points`, its call recorded."""
from __future__ import annotations

import json

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.panel import body, fake, requests_for, setup_bench  # noqa: F401  (the fake fixture)
from tests.helpers.http import Http

ANSWERS = {"m-a": "The cache is stale. The lock is held.", "m-b": "The cache is fresh. The lock is held.",
           "m-c": "The lock is held."}
COLS = {"core": {"members": ["a", "b", "c"], "explore": 0, "merge_model": "merger", "points": "contested"}}


def script(fake, referee=None):
    for served, text in ANSWERS.items():
        fake.script(served, text)
    fake.script("m-merge", (referee or FakeReferee()).reply())


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS)
    script(fake)
    return make_service()


def test_a_whole_reply_carries_the_block_and_the_points(served, fake):
    status, _, data = Http(served.url)("POST", "/v1/chat/completions", body())
    assert status == 200, data
    text = data["choices"][0]["message"]["content"]
    bench = data["bench"]
    assert "## Where they disagree" in text and text.index("## Seat 3") < text.index("## Where they disagree")
    [point] = bench["points"]
    assert point["claim"] == "The cache is stale." and point["assert"] == [1] and point["deny"] == [2]
    assert point["silent"] == [3] and point["quotes"] == {"1": "The cache is stale", "2": "The cache is fresh"}
    assert bench["points_info"]["referee"] == "merger" and bench["points_info"]["found"] == 2
    assert len(requests_for(fake, "m-merge")) == 1
