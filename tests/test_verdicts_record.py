"""Call records, verdicts (round trip, revision, validation) and the record that tallies them."""
from __future__ import annotations

import pytest

from tests.fakes import Reply
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401 (fake is a fixture)
from tests.helpers.data import write


@pytest.fixture
def api(home, fake, app):
    """The standard bench (core = a, b, c + one explore seat), asked in-process: no socket is needed here."""
    setup_bench(home, fake)
    return app


def ask(api, **kw) -> dict:
    status, _, data = api("POST", "/v1/chat/completions", body(**kw))
    assert status == 200, data
    return data["bench"]


def seat(meta: dict, model: str) -> dict:
    return next(s for s in meta["seats"] if s["model"] == model)


def verdict(api, call: str, useful: bool = True, **kw):
    return api("POST", "/bench/verdict", {"call": call, "useful": useful, **kw})


# ---- calls ---------------------------------------------------------------------------------------

def test_each_seat_call_is_recorded_with_all_fields(api, fake):
    fake.script("m-c", Reply.error(500, "c broke"))
    messages = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "What is 2+2?"}]
    meta = ask(api, messages=messages, temperature=0.5, max_tokens=40)
    a = seat(meta, "a")
    status, _, rec = api("GET", f"/bench/calls/{a['call']}")
    assert status == 200, rec
    assert rec["id"] == a["call"] and rec["panel"] == meta["panel"] and rec["collection"] == "core"
    assert (rec["model"], rec["kind"], rec["status"], rec["seat"]) == ("a", "member", "ok", 1)
    assert (rec["endpoint"], rec["served"], rec["mode"]) == ("fake", "m-a", "panel")
    assert rec["request"]["system"] == "Be terse."
    assert rec["request"]["messages"] == [{"role": "user", "content": "What is 2+2?"}]
    assert rec["request"]["params"] == {"max_tokens": 40, "temperature": 0.5}
    assert rec["answer"] == "m-a says: What is 2+2?"
    # the fake is a local server (loopback): the seat asks it streamed, so it has a time to its first token (a
    # seat asked whole, as on a remote provider, has none: tests/test_panel_local.py)
    assert 0 <= rec["ttft"] <= rec["seconds"]
    assert rec["seconds"] > 0 and rec["input_tokens"] > 0 and rec["output_tokens"] == 5   # the fake counts words
    assert rec["prompt_hash"] and rec["created"] and rec["verdicts"] == []
    c = api("GET", f"/bench/calls/{seat(meta, 'c')['call']}")[2]
    assert c["status"] == "failed" and "c broke" in c["error"] and c["answer"] is None
    explore = next(s for s in meta["seats"] if s["kind"] == "explore")
    assert api("GET", f"/bench/calls/{explore['call']}")[2]["kind"] == "explore"


def test_a_panels_request_is_kept_once_and_every_reader_still_sees_it(api, home):
    long = "read this closely " * 2000                   # a long prompt: five copies were most of a panel's writes
    meta = ask(api, content=long)
    db = api.bench.db
    db.sync()
    kept = db.one("SELECT request FROM panels WHERE id = ?", (meta["panel"],))["request"]
    assert long.strip() in kept
    own = db.query("SELECT request FROM calls WHERE panel = ?", (meta["panel"],))
    assert len(own) == 4 and all(r["request"] is None for r in own)
    for s in meta["seats"]:                              # the call, a listing, the panel's page: the same request
        assert api("GET", f"/bench/calls/{s['call']}")[2]["request"]["messages"][0]["content"] == long
    listed = api("GET", f"/bench/calls?panel={meta['panel']}")[2]
    assert all(c["request"]["messages"][0]["content"] == long for c in listed["calls"])
    item = api("GET", f"/bench/history/{meta['panel']}")[2]
    assert item["request"]["messages"][0]["content"] == long and item["prompt"].startswith("read this closely")
    # a call recorded before (its own copy, no panel row to hold it) reads as it did
    db.call(lambda conn: conn.execute("UPDATE calls SET request = ? WHERE id = ?",
                                      ('{"messages": [{"role": "user", "content": "older"}]}', meta["seats"][0]["call"])))
    assert api("GET", f"/bench/calls/{meta['seats'][0]['call']}")[2]["request"]["messages"][0]["content"] == "older"


def test_an_unknown_call_is_404(api):
    status, _, data = api("GET", "/bench/calls/nope")
    assert status == 404 and "nope" in data["error"]["message"]


def test_list_calls_by_collection_and_limit(home, fake, app):
    setup_bench(home, fake, {"core": {"members": ["a", "b"], "explore": 0}, "other": {"members": ["c"], "explore": 0}})
    http = app
    for model in ("bench/core", "bench/other", "bench/core"):
        assert http("POST", "/v1/chat/completions", body(model))[0] == 200
    core = http("GET", "/bench/calls?collection=core")[2]["calls"]
    assert len(core) == 4 and {c["collection"] for c in core} == {"core"}
    assert [c["created"] for c in core] == sorted((c["created"] for c in core), reverse=True)
    assert len(http("GET", "/bench/calls?collection=core&limit=3")[2]["calls"]) == 3
    other = http("GET", "/bench/calls?collection=other")[2]["calls"]
    assert [(c["model"], c["collection"]) for c in other] == [("c", "other")]
    assert len(http("GET", "/bench/calls")[2]["calls"]) == 5
    assert len(http("GET", "/bench/calls?model=a")[2]["calls"]) == 2
    for bad in ("0", "x", "5000"):
        status, _, data = http("GET", f"/bench/calls?limit={bad}")
        assert status == 400 and "limit" in data["error"]["message"]


# ---- verdicts ------------------------------------------------------------------------------------

def test_verdict_round_trip_and_revision(api, fake):
    call = seat(ask(api), "a")["call"]
    status, _, first = verdict(api, call, True, real=["the race in refresh()"], note="good catch")
    assert status == 200, first
    assert (first["call"], first["useful"], first["real"], first["false"], first["note"]) == \
        (call, True, ["the race in refresh()"], [], "good catch")
    assert first["revisions"] == 1
    rec = api("GET", f"/bench/calls/{call}")[2]
    assert [(v["useful"], v["real"], v["current"]) for v in rec["verdicts"]] == \
        [(True, ["the race in refresh()"], True)]
    status, _, second = verdict(api, call, False, false=["the SQL injection"])
    assert status == 200 and second["revisions"] == 2
    history = api("GET", f"/bench/calls/{call}")[2]["verdicts"]
    assert [(v["useful"], v["current"]) for v in history] == [(True, False), (False, True)]
    stats = api("GET", "/bench/record")[2]["models"]["a"]
    assert (stats["useful"], stats["not_useful"], stats["real_claims"], stats["false_claims"]) == (0, 1, 0, 1)


@pytest.mark.parametrize("payload, status, words", [
    ({"call": "nope", "useful": True}, 404, "nope"),
    ({"useful": True}, 400, "`call`"),
    ({"call": 5, "useful": True}, 400, "`call`"),
    ({"call": "CALL"}, 400, "`useful`"),
    ({"call": "CALL", "useful": "yes"}, 400, "`useful`"),
    ({"call": "CALL", "useful": True, "real": "one claim"}, 400, "`real`"),
    ({"call": "CALL", "useful": True, "false": [1, 2]}, 400, "`false`"),
    ({"call": "CALL", "useful": True, "note": 7}, 400, "note must be text"),
    ({"call": "CALL", "useful": True, "note": "n" * 4001}, 400, "at most 4,000"),
    ({"call": "CALL", "useful": True, "real": ["c" * 1001]}, 400, "at most 1,000"),
    ({"call": "CALL", "useful": True, "false": ["c"] * 101}, 400, "at most 100"),
    ({"call": "CALL", "useful": True, "score": 5}, 400, "score"),
])
def test_verdict_validation(api, payload, status, words):
    call = seat(ask(api), "a")["call"]
    payload = {k: (call if v == "CALL" else v) for k, v in payload.items()}
    got, _, data = api("POST", "/bench/verdict", payload)
    assert got == status, data
    assert words in data["error"]["message"]
    assert api("GET", f"/bench/calls/{call}")[2]["verdicts"] == []


def test_verdict_malformed_json_is_400(api):
    status, _, data = api("POST", "/bench/verdict", raw=b"{call")
    assert status == 400 and "JSON" in data["error"]["message"]


# ---- the record ----------------------------------------------------------------------------------

def test_record_counts_asks_answers_failures_verdicts_and_speed(home, fake, app):
    setup_bench(home, fake, {"core": {"members": ["a", "b", "c", "d"], "explore": 0}},
                settings={"seat_timeout": 3}, d=("fake", "m-d", {"vision": False}))   # c's stall outlasts it
    fake.script("m-b", [Reply.error(500), Reply(delay=0.05)])
    fake.script("m-c", Reply(stall=True, stall_after=1))
    http = app
    image = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "https://e.com/x.png"}}]
    metas = []
    for content in ("one", image):
        if content == image:
            fake.script("m-c", "fine now")
        metas.append(http("POST", "/v1/chat/completions", body(content=content), timeout=30)[2]["bench"])
    assert seat(metas[0], "c")["status"] == "timeout" and seat(metas[1], "c")["status"] == "ok"
    a_calls = [seat(m, "a")["call"] for m in metas]
    assert verdict(http, a_calls[0], True, real=["r1", "r2"])[0] == 200
    assert verdict(http, a_calls[1], False, false=["f1"])[0] == 200
    rec = http("GET", "/bench/record")[2]     # c's timed-out call included: recorded before the panel answered
    a, b, c, d = (rec["models"][m] for m in "abcd")
    assert (a["asks"], a["answers"], a["failures"]) == (2, 2, 0)
    assert (a["useful"], a["not_useful"], a["real_claims"], a["false_claims"]) == (1, 1, 2, 1)
    assert a["useful_rate"] == 0.5 and a["confidently_wrong"] is False
    assert isinstance(a["median_seconds"], float) and a["median_seconds"] >= 0
    assert (b["asks"], b["answers"], b["failures"]) == (2, 1, 1)
    assert b["median_seconds"] >= 0.05
    assert (c["asks"], c["answers"], c["failures"]) == (2, 1, 1)     # a timeout is a failure
    assert (d["asks"], d["answers"]) == (1, 1)           # skipped once (image, no vision): not an ask
    assert rec["collections"]["core"]["a"]["asks"] == 2
    only = http("GET", "/bench/record?collection=core")[2]
    assert only["collection"] == "core" and only["models"]["a"]["useful"] == 1


def test_confidently_wrong_after_enough_false_claims(api, fake):
    calls = [seat(ask(api), "a")["call"] for _ in range(3)]
    verdict(api, calls[0], False, false=["f1", "f2"], real=["r1"])
    assert api("GET", "/bench/record")[2]["models"]["a"]["confidently_wrong"] is False   # 2 false: not enough
    verdict(api, calls[1], False, false=["f3"])
    a = api("GET", "/bench/record")[2]["models"]["a"]
    assert (a["false_claims"], a["real_claims"], a["confidently_wrong"]) == (3, 1, True)
    verdict(api, calls[2], True, real=["r2", "r3", "r4", "r5", "r6"])
    a = api("GET", "/bench/record")[2]["models"]["a"]
    assert a["confidently_wrong"] is False                 # 3 false of 9 judged claims: under the default 0.35
    assert api("GET", "/bench/record")[2]["models"]["b"]["confidently_wrong"] is False


def test_a_new_confidently_wrong_ratio_counts_from_the_next_request(api, fake, home):
    calls = [seat(ask(api), "a")["call"] for _ in range(2)]
    verdict(api, calls[0], False, false=["f1", "f2", "f3"], real=["r1", "r2", "r3"])
    assert api("GET", "/bench/record")[2]["models"]["a"]["confidently_wrong"] is True    # 3 of 6 at 0.5
    write(home, "settings.json", {"confidently_wrong_ratio": 0.75})
    assert api("GET", "/bench/record")[2]["models"]["a"]["confidently_wrong"] is False   # no restart


def test_merge_calls_stay_out_of_the_record(api, fake):
    fake.script("m-merge", Reply(text="merged", delay=0.2))
    status, _, data = api("POST", "/v1/chat/completions", body("bench/core:merged"))
    assert status == 200, data
    merge_call = data["bench"]["merge"]["call"]
    rec = api("GET", f"/bench/calls/{merge_call}")[2]
    assert (rec["kind"], rec["model"], rec["status"], rec["answer"]) == ("merge", "merger", "ok", "merged")
    record = api("GET", "/bench/record")[2]
    assert "merger" not in record["models"] and "merger" not in record["collections"]["core"]
    keys = {frozenset(d) for d in record["models"].values()}
    assert len(keys) == 1 and {"asks", "answers", "failures", "median_seconds"} <= set(next(iter(keys)))


def test_record_finds_a_drop_by_the_order_of_the_answers_and_counts_beside_every_rate(home, fake, make_app):
    setup_bench(home, fake, {"solo": {"members": ["a"], "explore": 0}})
    http = make_app()
    calls = [seat(http("POST", "/v1/chat/completions", body("bench/solo", f"q{i}"))[2]["bench"], "a")["call"]
             for i in range(45)]
    for i in reversed(range(45)):   # verdicts newest first: the answers' order counts, not the verdicts'
        assert verdict(http, calls[i], i < 25, **({"real": ["r"]} if i < 25 else {"false": ["f"]}))[0] == 200
    a = http("GET", "/bench/record?collection=solo")[2]["models"]["a"]
    assert (a["judged"], a["useful"], a["useful_rate"]) == (45, 25, 0.556)
    assert (a["judged_claims"], a["false_claims"], a["false_claim_rate"]) == (45, 20, 0.444)
    assert a["confidently_wrong"] is True
    assert a["drop"] == {"judged": 20, "useful": 0, "useful_rate": 0.0, "before_judged": 25, "before_useful": 25,
                         "before_rate": 1.0}
    assert http("GET", "/bench/record")[2]["models"]["a"]["drop"] == a["drop"]
