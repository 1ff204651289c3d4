"""The panel end to end over OpenAI chat, whole answers: seating, failures, skips, timeouts, bad input, pass-through."""
from __future__ import annotations

import json

import pytest

from tests.fakes import Reply
from tests.fakes.samples import PNG_B64
from tests.helpers.panel import (MEMBERS, OTHERS, api, bench, body, chat_requests, fake,  # noqa: F401
                                 headings, requests_for, setup_bench)
from tests.helpers.http import Http


def openai_error(resp, status: int) -> dict:
    code, _, data = resp
    assert code == status, data
    assert isinstance(data, dict) and set(data) == {"error"}, data
    err = data["error"]
    assert {"message", "type", "param", "code"} <= set(err), err
    assert isinstance(err["message"], str) and err["message"]
    return err


# ---- the panel -----------------------------------------------------------------------------------

def test_three_members_and_one_explore_seat_with_a_failing_and_a_slow_seat(api, fake):
    fake.script("m-b", Reply(text="b is slow but right", delay=0.3))
    fake.script("m-c", Reply.error(500, "c exploded"))
    status, headers, data = api("POST", "/v1/chat/completions", body(content="Where is the race?"))
    assert status == 200, data
    assert data["object"] == "chat.completion" and data["model"] == "bench/core"
    seats = data["bench"]["seats"]
    assert [s["seat"] for s in seats] == [1, 2, 3, 4]
    assert [(s["model"], s["kind"]) for s in seats[:3]] == [("a", "member"), ("b", "member"), ("c", "member")]
    assert seats[3]["kind"] == "explore" and seats[3]["model"] in OTHERS
    by = {s["model"]: s for s in seats}
    assert by["a"]["status"] == "ok" and by["a"]["answer"] == "m-a says: Where is the race?"
    assert by["b"]["status"] == "ok" and by["b"]["answer"] == "b is slow but right"
    assert by["c"]["status"] == "failed" and "c exploded" in by["c"]["error"] and by["c"]["answer"] == ""
    assert by["b"]["seconds"] >= 0.3 and by["b"]["seconds"] > by["a"]["seconds"]   # each seat's own time
    for s in seats:
        assert set(s) >= {"seat", "kind", "model", "status", "seconds", "call", "answer", "error", "usage"}
        assert isinstance(s["call"], str) and s["call"]
    assert len({s["call"] for s in seats}) == 4
    assert data["bench"]["collection"] == "core" and data["bench"]["panel"] == headers["x-bench-panel"]
    text = data["choices"][0]["message"]["content"]
    assert [h[:3] for h in headings(text)] == [(s["seat"], s["model"], s["kind"]) for s in seats]
    assert "b is slow but right" in text and "c exploded" in text
    ok = [s for s in seats if s["status"] == "ok"]
    assert data["usage"]["completion_tokens"] == sum(s["usage"]["output_tokens"] for s in ok) > 0
    assert data["usage"]["prompt_tokens"] == sum(s["usage"]["input_tokens"] for s in ok) > 0
    assert data["choices"][0]["finish_reason"] == "stop"


def test_tools_are_refused_pointing_to_route_mode(api, fake):
    tools = [{"type": "function", "function": {"name": "get", "parameters": {"type": "object", "properties": {}}}}]
    err = openai_error(api("POST", "/v1/chat/completions", body(tools=tools)), 400)
    assert err["code"] == "tools_need_route_mode" and "bench/core:route" in err["message"]
    assert chat_requests(fake) == []


@pytest.mark.parametrize("payload, words", [
    ({"model": "bench/core"}, "`messages` is required"),
    ({"model": "bench/core", "messages": []}, "`messages` is empty"),
    ({"model": "bench/core", "messages": "hi"}, "`messages` must be a list"),
    ({"model": "bench/core", "messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
    ({"model": "bench/core", "messages": ["hi"]}, "`messages[0]` must be an object"),
    ({"model": "bench/core", "messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role"),
    ({"model": "bench/core", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"},
     "`temperature` must be a number"),
    ({"model": "bench/core", "messages": [{"role": "user", "content": "hi"}], "max_tokens": "9"},
     "`max_tokens` must be an integer"),
    ({"model": "bench/core", "messages": [{"role": "user", "content": "hi"}], "stream": "yes"},
     "`stream` must be true or false"),
    ({"model": 7, "messages": [{"role": "user", "content": "hi"}]}, "`model` must be a string"),
    ({"messages": [{"role": "user", "content": "hi"}]}, "`model` is required"),
    ({"model": "bench/core", "messages": [{"role": "user", "content": "hi"}], "bench": {"with": 5}},
     "bench.with"),
])
def test_bad_inputs_are_400_saying_what_is_wrong(api, fake, payload, words):
    err = openai_error(api("POST", "/v1/chat/completions", payload), 400)
    assert words in err["message"], err
    assert err["type"] == "invalid_request_error"
    assert chat_requests(fake) == []


def test_malformed_json_is_400(api, fake):
    err = openai_error(api("POST", "/v1/chat/completions", raw=b'{"model": "bench/core", "messages": [}'), 400)
    assert "Malformed JSON" in err["message"]
    err = openai_error(api("POST", "/v1/chat/completions", raw=b'["bench/core"]'), 400)
    assert "JSON object" in err["message"]


def test_unknown_collection_is_404_naming_the_collections_there_are(api, fake):
    err = openai_error(api("POST", "/v1/chat/completions", body("bench/nope")), 404)
    assert "nope" in err["message"] and "bench/core" in err["message"]
    err = openai_error(api("POST", "/v1/chat/completions", body("no-such-model")), 404)
    assert "no-such-model" in err["message"] and "bench/core" in err["message"]


def test_an_unknown_with_model_is_404_naming_it(api, fake):
    err = openai_error(api("POST", "/v1/chat/completions", body(bench={"with": ["ghost"]})), 404)
    assert "ghost" in err["message"]
    assert chat_requests(fake) == []


def test_an_empty_collection_is_400(home, fake, make_service):
    setup_bench(home, fake, {"empty": {"members": [], "explore": 0}, "core": {"members": ["a"]}})
    http = Http(make_service().url)
    err = openai_error(http("POST", "/v1/chat/completions", body("bench/empty")), 400)
    assert err["code"] == "empty_collection" and "empty" in err["message"]


def test_every_seat_failing_is_502_listing_each_failure(api, fake):
    fake.script("*", Reply.error(503, "overloaded everywhere"))
    fake.script("m-a", Reply.error(401, "bad key for a"))
    err = openai_error(api("POST", "/v1/chat/completions", body()), 502)
    assert err["type"] == "server_error" and err["code"] == "all_seats_failed"
    for n, model in enumerate(MEMBERS, 1):
        assert f"seat {n} {model}: failed" in err["message"]
    assert "bad key for a" in err["message"] and "overloaded everywhere" in err["message"]
    assert "seat 4 " in err["message"]


def test_a_stalled_seat_times_out_and_the_others_answer(home, fake, make_service):
    setup_bench(home, fake, settings={"seat_timeout": 1})
    fake.script("m-b", Reply(stall=True, stall_after=1))
    http = Http(make_service().url)
    status, _, data = http("POST", "/v1/chat/completions", body(), timeout=20)
    assert status == 200, data
    by = {s["model"]: s for s in data["bench"]["seats"]}
    assert by["b"]["status"] == "timeout" and by["b"]["error"]
    assert by["a"]["status"] == by["c"]["status"] == "ok"
    assert (2, "b", "member", "timeout") in headings(data["choices"][0]["message"]["content"])
    status, _, rec = http("GET", f"/bench/calls/{by['b']['call']}")     # recorded before the panel answered
    assert status == 200 and rec["status"] == "timeout" and rec["answer"] is None


# ---- who sits ------------------------------------------------------------------------------------

def test_seats_are_skipped_for_a_reason(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["a", "blind", "old", "small"], "explore": 0}},
                blind=("fake", "m-blind", {"vision": False}),
                old={"endpoint": "fake", "served": "m-old", "status": "retired", "reason": "too slow"},
                small=("fake", "m-small", {"context_window": 50}))
    http = Http(make_service().url)
    content = [{"type": "text", "text": "Describe this picture in detail, please. " * 8},
               {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]
    status, _, data = http("POST", "/v1/chat/completions", body(content=content))
    assert status == 200, data
    by = {s["model"]: s for s in data["bench"]["seats"]}
    assert by["a"]["status"] == "ok"
    assert by["blind"]["status"] == "skipped" and "vision" in by["blind"]["error"]
    assert by["old"]["status"] == "skipped" and "retired" in by["old"]["error"] and "too slow" in by["old"]["error"]
    assert by["small"]["status"] == "skipped" and "context window" in by["small"]["error"]
    for served in ("m-blind", "m-old", "m-small"):
        assert requests_for(fake, served) == []
    assert len(requests_for(fake, "m-a")) == 1
    text = data["choices"][0]["message"]["content"]
    assert (2, "blind", "member", "skipped") in headings(text)


def test_the_short_prompt_fits_the_small_window(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["small"], "explore": 0}},
                small=("fake", "m-small", {"context_window": 50}))
    status, _, data = Http(make_service().url)("POST", "/v1/chat/completions", body(content="hi"))
    assert status == 200 and data["bench"]["seats"][0]["status"] == "ok"


def test_with_adds_extra_seats(api, fake):
    status, _, data = api("POST", "/v1/chat/completions", body(bench={"with": ["x", "a"]}))
    assert status == 200, data
    seats = data["bench"]["seats"]
    assert [(s["model"], s["kind"]) for s in seats[:4]] == [("a", "member"), ("b", "member"), ("c", "member"),
                                                             ("x", "with")]
    assert len(seats) == 5 and seats[4]["kind"] == "explore" and seats[4]["model"] in ("y", "z")
    assert all(s["status"] == "ok" for s in seats)
    assert len(requests_for(fake, "m-x")) == 1 and len(requests_for(fake, "m-a")) == 1


def test_asking_a_model_alias_is_a_one_seat_panel(api, fake):
    status, _, data = api("POST", "/v1/chat/completions", body("y", content="solo"))
    assert status == 200, data
    assert [(s["model"], s["kind"], s["status"]) for s in data["bench"]["seats"]] == [("y", "member", "ok")]
    assert "m-y says: solo" in data["choices"][0]["message"]["content"]
    assert data["model"] == "y"
    assert [r.body["model"] for r in chat_requests(fake)] == ["m-y"]


def test_models_lists_collections_modes_and_aliases(api):
    status, _, data = api("GET", "/v1/models")
    assert status == 200 and data["object"] == "list"
    ids = [m["id"] for m in data["data"]]
    assert {"bench/core", "bench/core:merged", "bench/core:route"} <= set(ids)
    assert set(MEMBERS + OTHERS + ["merger"]) <= set(ids)


def test_retired_models_are_not_listed(home, fake, make_service):
    setup_bench(home, fake, old={"endpoint": "fake", "served": "m-old", "status": "retired"})
    ids = [m["id"] for m in Http(make_service().url)("GET", "/v1/models")[2]["data"]]
    assert "a" in ids and "old" not in ids


def test_explore_seats_rotate_through_every_non_member(api):
    picks = []
    for _ in range(2 * len(OTHERS)):
        status, _, data = api("POST", "/v1/chat/completions", body())
        assert status == 200, data
        explore = [s["model"] for s in data["bench"]["seats"] if s["kind"] == "explore"]
        assert len(explore) == 1
        picks += explore
    assert sorted(picks[:3]) == sorted(OTHERS) and sorted(picks[3:]) == sorted(OTHERS), picks
    assert "merger" not in picks


def test_two_explore_seats_still_ask_each_once_before_twice(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": list(MEMBERS), "explore": 2}})
    http = Http(make_service().url)
    picks = []
    for _ in range(3):
        seats = http("POST", "/v1/chat/completions", body())[2]["bench"]["seats"]
        picks += [s["model"] for s in seats if s["kind"] == "explore"]
    assert sorted(picks[:3]) == sorted(OTHERS) and sorted(picks[3:]) == sorted(OTHERS), picks


def test_explore_rotation_survives_a_restart(home, fake, make_service):
    setup_bench(home, fake, v=("fake", "m-v"), w=("fake", "m-w"))     # five candidates: a lucky pass is unlikely
    first = make_service()
    picks = [next(s["model"] for s in Http(first.url)("POST", "/v1/chat/completions", body())[2]["bench"]["seats"]
                  if s["kind"] == "explore") for _ in range(4)]
    assert len(set(picks)) == 4
    first.stop()
    second = Http(make_service().url)
    after = [next(s["model"] for s in second("POST", "/v1/chat/completions", body())[2]["bench"]["seats"]
                  if s["kind"] == "explore") for _ in range(5)]
    never = (set(OTHERS) | {"v", "w"}) - set(picks)
    assert after == [*never, *picks]      # the one never asked, then the others longest-waiting first


def test_a_model_added_while_serving_is_explored_next_and_a_retired_one_never(home, fake, make_service):
    setup_bench(home, fake)
    http = Http(make_service().url)

    def explored() -> str:
        seats = http("POST", "/v1/chat/completions", body())[2]["bench"]["seats"]
        return next(s["model"] for s in seats if s["kind"] == "explore")
    first = [explored() for _ in range(len(OTHERS))]
    assert sorted(first) == sorted(OTHERS)
    models = json.loads((home / "config" / "models.json").read_text(encoding="utf-8"))
    models["models"]["fresh"] = {"endpoint": "fake", "served": "m-fresh", "facts": {}}
    models["models"][first[0]]["status"] = "retired"          # the one that has waited longest
    (home / "config" / "models.json").write_text(json.dumps(models), encoding="utf-8")
    assert [explored() for _ in range(3)] == ["fresh", *first[1:]]


# ---- what each seat is sent ----------------------------------------------------------------------

def test_system_history_and_sampling_pass_through_to_each_seat(api, fake):
    messages = [{"role": "system", "content": "Be terse."},
                {"role": "user", "content": "First question"},
                {"role": "assistant", "content": "First answer"},
                {"role": "user", "content": "Second question"}]
    payload = {"model": "bench/core", "messages": messages, "temperature": 0.25, "max_tokens": 77,
               "stop": ["END", "STOP"]}
    status, _, data = api("POST", "/v1/chat/completions", payload)
    assert status == 200, data
    sent = chat_requests(fake)
    assert len(sent) == 4
    for rec in sent:
        b = rec.body
        assert b["messages"] == [{"role": "system", "content": "Be terse."},
                                 {"role": "user", "content": "First question"},
                                 {"role": "assistant", "content": "First answer"},
                                 {"role": "user", "content": "Second question"}], b["messages"]
        assert b["temperature"] == 0.25 and b["max_tokens"] == 77 and b["stop"] == ["END", "STOP"]
        assert "tools" not in b


def test_images_go_only_to_vision_capable_seats(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["eyes", "blind"], "explore": 0}},
                eyes=("fake", "m-eyes", {"vision": True}), blind=("fake", "m-blind", {"vision": False}))
    http = Http(make_service().url)
    content = [{"type": "text", "text": "What is this?"},
               {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]
    status, _, data = http("POST", "/v1/chat/completions", body(content=content))
    assert status == 200, data
    assert requests_for(fake, "m-blind") == []
    [rec] = requests_for(fake, "m-eyes")
    parts = rec.body["messages"][-1]["content"]
    assert {"type": "text", "text": "What is this?"} in parts
    assert any(p.get("type") == "image_url" and p["image_url"]["url"].endswith(PNG_B64) for p in parts)
    # without an image the same seat is asked
    status, _, data = http("POST", "/v1/chat/completions", body(content="no picture"))
    assert [s["status"] for s in data["bench"]["seats"]] == ["ok", "ok"]
    assert len(requests_for(fake, "m-blind")) == 1


def test_a_panel_where_no_seat_can_take_the_ask_is_a_400(home, fake, make_service):
    setup_bench(home, fake, {"core": {"members": ["blind"], "explore": 0}},
                blind=("fake", "m-blind", {"vision": False}))
    http = Http(make_service().url)
    content = [{"type": "text", "text": "What is this?"},
               {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}]
    status, _, data = http("POST", "/v1/chat/completions", body(content=content))
    assert status == 400, data
    assert data["error"]["code"] == "no_able_seat" and "no vision" in data["error"]["message"]
    status, _, data = http("POST", "/v1/chat/completions", body(content=content, stream=True))
    assert status == 400 and data["error"]["code"] == "no_able_seat"   # refused before any stream starts
    assert requests_for(fake, "m-blind") == []


def test_explore_passes_over_models_that_cannot_take_the_ask(home, fake, make_service):
    blind = {"vision": False}
    setup_bench(home, fake, x=("fake", "m-x", blind), y=("fake", "m-y", blind), z=("fake", "m-z", blind))
    http = Http(make_service().url)
    content = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "https://e.com/a.png"}}]
    status, _, data = http("POST", "/v1/chat/completions", body(content=content))
    assert status == 200, data
    assert [s["kind"] for s in data["bench"]["seats"]] == ["member"] * 3
    passed = data["bench"]["passed_over"]
    assert sorted(p["model"] for p in passed) == OTHERS and all("vision" in p["reason"] for p in passed)
    status, _, data = http("POST", "/v1/chat/completions", body(content="no image"))
    assert [s["kind"] for s in data["bench"]["seats"]] == ["member"] * 3 + ["explore"]


def test_concurrent_panels_take_different_explore_seats(api, fake):
    from concurrent.futures import ThreadPoolExecutor
    fake.script("*", Reply(delay=0.2))
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: api("POST", "/v1/chat/completions", body()), range(3)))
    picks = [next(s["model"] for s in r[2]["bench"]["seats"] if s["kind"] == "explore") for r in results]
    assert sorted(picks) == OTHERS
    assert len({r[2]["bench"]["panel"] for r in results}) == 3


def test_a_bad_streamed_ask_is_a_json_error_not_a_stream(api, fake):
    status, headers, data = api("POST", "/v1/chat/completions", body("bench/nope", stream=True))
    assert status == 404 and headers["Content-Type"].startswith("application/json")
    assert "bench/core" in data["error"]["message"]
    status, headers, data = api("POST", "/v1/chat/completions", body(stream=True, tools=[
        {"type": "function", "function": {"name": "f"}}]))
    assert status == 400 and data["error"]["code"] == "tools_need_route_mode"
