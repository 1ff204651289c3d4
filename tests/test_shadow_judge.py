"""Shadow answers judged by a collection's judge model: blind, never a contestant, kept apart from the user's
verdicts, within a monthly budget; its agreement with the user's verdicts, and its verdicts counting in route choice
only once that agreement holds."""
from __future__ import annotations

import json
import re

import pytest

from benchwarmers.core.evidence import JUDGE_MIN_COMPARED
from benchwarmers.core.rankings import Rankings, wilson
from benchwarmers.store import Database
from benchwarmers.store.calls import CallRecord, Calls
from benchwarmers.store.judgestore import JudgeStore
from benchwarmers.store.verdicts import Verdicts
from tests.fakes import Reply
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.helpers.route import fakes  # noqa: F401 (a fixture)

PRICE = {"tools": True, "price_in": 1.0, "price_out": 1.0}   # USD per million tokens


def judge_text(prompt: str, wrong_every: int = 0) -> str:
    """A judge with known accuracy: an answer saying GOOD is useful, BAD is not; on turns numbered a multiple of
    `wrong_every` it says the opposite (so it is right on exactly 1 - 1/wrong_every of the turns)."""
    out = []
    for n, block in re.findall(r"## Answer (\d+)\n\n(.*?)(?=\n\n## Answer|\n\nNow judge)", prompt, re.S):
        useful = "GOOD" in block
        turn = re.search(r"turn (\d+)", block)
        if wrong_every and turn and int(turn.group(1)) % wrong_every == 0:
            useful = not useful
        out.append({"answer": int(n), "useful": useful, "why": "as scripted"})
    return json.dumps({"answers": out})


def setup(home, fake, budget: float = 5.0, wrong_every: int = 0, rate: float = 1.0, judge: str = "judge"):
    configure(home, {"openai": (fake, "openai")},
              {"alpha": ("openai", "alpha-s", PRICE), "bravo": ("openai", "bravo-s", PRICE),
               "judge": ("openai", "judge-s", PRICE)},
              {"core": {"members": ["alpha", "bravo"], "explore": 0, "shadow": 1, "judge": judge,
                        "judge_budget": budget, "judge_rate": rate}})
    fake.script("alpha-s", Reply(compute=lambda t: f"GOOD answer from alpha-s to {t}"))
    fake.script("bravo-s", Reply(compute=lambda t: f"BAD answer from bravo to {t}"))
    fake.script("judge-s", Reply(compute=lambda t: judge_text(t, wrong_every)))


def turn(http: Http, n: int) -> str:
    status, headers, reply = http("POST", "/v1/chat/completions", {
        "model": "bench/core:route", "messages": [{"role": "user", "content": f"turn {n}"}]})
    assert status == 200, reply
    return headers["x-bench-call"]


def shadow_of(http: Http, call: str) -> str:
    return wait_for(lambda: [c["id"] for c in http("GET", "/bench/calls?collection=core&limit=200")[2]["calls"]
                             if c["kind"] == "shadow" and c["turn"] == call])[0]


def test_the_judge_reads_blind_and_its_verdicts_stay_apart(service, home, fakes):
    fake = fakes["openai"]
    setup(home, fake)
    http = Http(service.url)
    served = turn(http, 1)
    shadow = shadow_of(http, served)
    verdicts = {c: wait_for(lambda c=c: http("GET", f"/bench/calls/{c}")[2]["judge_verdict"]) for c in (served, shadow)}
    by_model = {http("GET", f"/bench/calls/{c}")[2]["model"]: v["useful"] for c, v in verdicts.items()}
    assert by_model == {"alpha": True, "bravo": False}
    asked = next(r for r in fake.requests if r.body and r.body.get("model") == "judge-s")
    text = json.dumps(asked.body)
    assert "alpha" not in text and "bravo" not in text and "answer from a model to" in text   # no model named
    assert http("GET", f"/bench/calls/{served}")[2]["verdicts"] == []   # the user's verdicts: none
    rec = http("GET", "/bench/record")[2]["collections"]["core"]
    assert (rec["alpha"]["judge"]["useful"], rec["bravo"]["judge"]["not_useful"]) == (1, 1)
    assert rec["alpha"]["useful"] == 0 and rec["alpha"]["judge"]["counted"] == 0   # not yet trusted
    judge_call = verdicts[served]["judge_call"]
    rec = http("GET", f"/bench/calls/{judge_call}")[2]
    assert rec["kind"] == "judge" and rec["turn"] == served and "judge" not in http("GET", "/bench/record")[2]["models"]
    view = http("GET", "/bench/collections/core/overview")[2]["judge"]
    assert view["model"] == "judge" and view["month"]["calls"] == 1 and view["month"]["usd"] > 0


def test_the_order_is_shuffled(service, home, fakes):
    fake = fakes["openai"]
    setup(home, fake)
    http = Http(service.url)
    for n in range(12):
        served = turn(http, n)
        wait_for(lambda s=served: http("GET", f"/bench/calls/{s}")[2]["judge_verdict"])
    firsts = {re.search(r"## Answer 1\n\n(\w+)", r.body["messages"][-1]["content"]).group(1)
              for r in fake.requests if r.body and r.body.get("model") == "judge-s"}
    assert firsts == {"GOOD", "BAD"}


def test_the_budget_stops_the_judge(service, home, fakes):
    fake = fakes["openai"]
    setup(home, fake, budget=0.0015)
    http = Http(service.url)
    judged = []
    for n in range(8):
        served = turn(http, n)
        shadow_of(http, served)
        judged.append(served)
    wait_for(lambda: http("GET", "/bench/collections/core/overview")[2]["judge"]["stopped"])
    view = http("GET", "/bench/collections/core/overview")[2]["judge"]
    assert 0 < view["month"]["calls"] < 8 and view["month"]["usd"] <= 0.0015
    assert "budget is spent" in view["stopped"]
    asked = [r for r in fake.requests if r.body and r.body.get("model") == "judge-s"]
    assert len(asked) == view["month"]["calls"]


def test_the_judge_is_never_a_contestant(service, home, fakes):
    setup(home, fakes["openai"])
    http = Http(service.url)
    status, _, body = http("PUT", "/bench/collections/core", {"judge": "alpha"})
    assert status == 400 and "never a contestant" in body["error"]["message"]
    status, _, body = http("PUT", "/bench/collections/other", {"members": ["alpha"], "judge": "judge"})
    assert status == 400 and "budget" in body["error"]["message"]
    status, _, body = http("PUT", "/bench/collections/other", {"members": ["alpha"], "judge": "judge",
                                                               "judge_budget": 1, "judge_rate": 0.5})
    assert status == 200 and (body["judge"], body["judge_budget"], body["judge_rate"]) == ("judge", 1.0, 0.5)


def test_the_agreement_figure_against_scripted_verdicts(service, home, fakes):
    fake = fakes["openai"]
    setup(home, fake, wrong_every=5)   # wrong on turns 0 and 5 of 0..9: right on 8 of 10
    http = Http(service.url)
    calls = []
    for n in range(10):
        served = turn(http, n)
        calls += [served, shadow_of(http, served)]
    for c in calls:
        wait_for(lambda c=c: http("GET", f"/bench/calls/{c}")[2]["judge_verdict"])
        model = http("GET", f"/bench/calls/{c}")[2]["model"]
        assert http("POST", "/bench/verdict", {"call": c, "useful": model == "alpha"})[0] == 200   # the truth
    agreed = http("GET", "/bench/collections/core/overview")[2]["judge"]["agreement"][0]
    lo, hi = wilson(16, 20)
    assert (agreed["compared"], agreed["agreed"], agreed["rate"]) == (20, 16, 0.8)
    assert agreed["interval"] == [round(lo, 3), round(hi, 3)] and agreed["counts"] is False   # 0.8 is not enough
    # a changed verdict moves the figure both ways
    assert http("POST", "/bench/verdict", {"call": calls[0], "useful": False})[0] == 200
    again = http("GET", "/bench/collections/core/overview")[2]["judge"]["agreement"][0]
    assert again["compared"] == 20 and again["agreed"] in (15, 17)


@pytest.mark.parametrize("agree, counts", [(JUDGE_MIN_COMPARED + 10, True), (JUDGE_MIN_COMPARED - 1, False)])
def test_judge_verdicts_count_once_agreement_holds(tmp_path, agree, counts):
    db = Database(tmp_path / "bench.db")
    try:
        calls, store, verdicts = Calls(db), JudgeStore(db), Verdicts(db)
        for n in range(agree):
            calls.add(CallRecord(id=f"c{n}", model="m", status="ok", collection="core", kind="shadow"))
        db.sync()
        for n in range(agree):
            if n % 2:
                verdicts.add(f"c{n}", True, None, [], [])   # the user's verdict first, then the judge's
            store.add(f"t{n}", "core", "j", None, [(f"c{n}", "m", True)], ("2026-12", 0.0), 1.0)
            if not n % 2:
                verdicts.add(f"c{n}", True, None, [], [])   # the judge's first
        s = Rankings(db, lambda: {"confidently_wrong_ratio": 0.5}).models("core")["m"]
        assert (s.judge_useful, bool(s.judge_counted[0])) == (agree, counts)
        before = dict(db.one("SELECT * FROM judge_agreement"))
        from benchwarmers.store.migrations import rebuild_kept
        db.call(rebuild_kept)
        assert dict(db.one("SELECT * FROM judge_agreement")) == before == \
            {"collection": "core", "judge": "j", "compared": agree, "agreed": agree}
    finally:
        db.close()


def test_the_cli_and_the_page_set_and_show_the_judge(service, home, fakes):
    from tests.test_cli_ask import bench_cli, err
    setup(home, fakes["openai"])
    proc = bench_cli(service.url, "collection", "save", "core", "--judge", "judge", "--judge-budget", "3",
                     "--judge-rate", "0.25")
    assert proc.returncode == 0, err(proc)
    http = Http(service.url)
    col = http("GET", "/bench/collections/core")[2]
    assert (col["judge"], col["judge_budget"], col["judge_rate"]) == ("judge", 3.0, 0.25)
    page = http("GET", "/collections/core")[2]
    assert "judges 25% of the shadowed turns" in page and "$0.0000 of $3 spent this month" in page
    assert "No answer judged by both" in page and 'name="judge_budget"' in page
    proc = bench_cli(service.url, "collection", "save", "core", "--judge", "")
    assert proc.returncode == 0, err(proc)
    assert "judge" not in http("GET", "/bench/collections/core")[2]


def test_a_turns_page_shows_the_judge_apart(service, home, fakes):
    setup(home, fakes["openai"])
    http = Http(service.url)
    served = turn(http, 3)
    wait_for(lambda: http("GET", f"/bench/calls/{served}")[2]["judge_verdict"])
    shadow_of(http, served)
    item = wait_for(lambda: (lambda i: i if len(i["judge"]["verdicts"]) == 2 else None)(
        http("GET", f"/bench/history/{served}")[2]))
    assert [s["kind"] for s in item["seats"]] == ["route", "shadow"] and item["judge"]["model"] == "judge"
    page = http("GET", f"/calls/{served}")[2]
    assert "Judged by judge, blind (apart from your verdicts)" in page and "not useful" in page
