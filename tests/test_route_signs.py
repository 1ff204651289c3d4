"""What agent turns show without a verdict: tool calls checked against the tools offered, in every client format
route mode speaks; a conversation that leaves its member after two failing turns; a turn sent again, and a tool
result that reports the call malformed."""
from __future__ import annotations

import json

import pytest

from benchwarmers.canonical import Tool, ToolCall
from benchwarmers.core import toolcheck
from benchwarmers.core.choose import rank
from benchwarmers.core.rankings import Standing
from tests.fakes import Reply
from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.helpers.route import fakes, route_collection  # noqa: F401 (fakes is a fixture)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]},
                                           "days": {"type": "integer"}},
          "required": ["city"], "additionalProperties": False}
TOOL = Tool("weather", "the weather", SCHEMA)
ROUTE = "bench/core:route"


# ---- the checker --------------------------------------------------------------------------------

@pytest.mark.parametrize("arguments, kind", [
    ('{"city": "Oslo"}', None), ('{"city": "Oslo", "unit": "c", "days": 3}', None), ('{"city": "Oslo", "days": 2.0}',
                                                                                     None),
    ('{"city": "Oslo"', toolcheck.NOT_JSON), ("city=Oslo", toolcheck.NOT_JSON),
    ("{}", toolcheck.SCHEMA), ('{"city": 7}', toolcheck.SCHEMA), ('{"city": "Oslo", "unit": "k"}', toolcheck.SCHEMA),
    ('{"city": "Oslo", "days": true}', toolcheck.SCHEMA), ('{"city": "Oslo", "when": "now"}', toolcheck.SCHEMA),
    ('["Oslo"]', toolcheck.SCHEMA)])
def test_arguments_are_checked_against_the_schema(arguments, kind):
    faults = toolcheck.check([ToolCall("c1", "weather", arguments)], [TOOL])
    assert [f.kind for f in faults] == ([kind] if kind else [])


def test_a_tool_not_offered_and_the_checks_bounds():
    faults = toolcheck.check([ToolCall("c1", "search", "{}")], [TOOL])
    assert faults[0].kind == toolcheck.UNOFFERED and "weather" in faults[0].why
    deep: dict = {"type": "object"}
    node = deep
    for _ in range(50):   # deeper than MAX_DEPTH: the check stops, it never faults what it did not read
        node["properties"] = {"x": {"type": "object"}}
        node = node["properties"]["x"]
    value: dict = {}
    v = value
    for _ in range(50):
        v["x"] = {}
        v = v["x"]
    assert toolcheck.schema_fault(value, deep) is None
    assert toolcheck.schema_fault({"a": 1}, {"anyOf": [{"type": "string"}]}) is None   # not read: passes


def test_malformed_reports_are_told_from_tools_that_ran_and_failed():
    assert toolcheck.malformed("<tool_use_error>InputValidationError: Bash failed: command is missing", True)
    assert toolcheck.malformed("failed to parse function arguments: EOF", False)
    assert not toolcheck.malformed("exit status 1: invalid json in package.json", False)   # the tool ran


def test_tool_evidence_orders_members_without_a_verdict():
    failing = Standing(tool_turns=3, tool_failed=3)
    right = Standing(tool_turns=3, tool_failed=0)
    assert [r.alias for r in rank(["failing", "right"], {"failing": failing, "right": right})] == ["right", "failing"]
    assert "tool calls failed in 3/3 turns" in rank(["failing"], {"failing": failing})[0].why
    # a rare fault does not bury a member whose calls keep working
    assert rank(["rare", "fresh"], {"rare": Standing(tool_turns=200, tool_failed=2),
                                    "fresh": Standing(tool_turns=4, tool_failed=2)})[0].alias == "rare"


# ---- every client format ------------------------------------------------------------------------

def _oai_tools():
    return [{"type": "function", "function": {"name": "weather", "parameters": SCHEMA}}]


def body(fmt: str, text: str) -> tuple[str, dict]:
    if fmt == "chat":
        return "/v1/chat/completions", {"model": ROUTE, "messages": [{"role": "user", "content": text}],
                                        "tools": _oai_tools()}
    if fmt == "responses":
        return "/v1/responses", {"model": ROUTE, "input": text, "stream": False,
                                 "tools": [{"type": "function", "name": "weather", "parameters": SCHEMA}]}
    if fmt == "anthropic":
        return "/v1/messages", {"model": ROUTE, "max_tokens": 100, "messages": [{"role": "user", "content": text}],
                                "tools": [{"name": "weather", "input_schema": SCHEMA}]}
    if fmt == "gemini":
        return f"/v1beta/models/{ROUTE}:generateContent", {
            "contents": [{"role": "user", "parts": [{"text": text}]}],
            "tools": [{"functionDeclarations": [{"name": "weather", "parameters": SCHEMA}]}]}
    return "/api/chat", {"model": ROUTE, "stream": False, "messages": [{"role": "user", "content": text}],
                         "tools": _oai_tools()}


FAULTY = [Reply.tool("search", {"q": "x"}),                                      # not offered
          Reply(tool_calls=[{"name": "weather", "arguments": '{"city": "Oslo'}]),   # not JSON
          Reply.tool("weather", {"city": "Oslo", "unit": "kelvin"}),              # breaks the schema (enum)
          Reply.tool("weather", {"days": 2}),                                     # breaks it (required)
          Reply.tool("weather", {"city": "Oslo", "unit": "c"})]                   # right


@pytest.mark.parametrize("fmt", ["chat", "responses", "anthropic", "gemini", "ollama"])
def test_tool_faults_are_counted_in_every_client_format(service, home, fakes, fmt):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    fakes["openai"].script("agent-s", list(FAULTY))
    http = Http(service.url)
    calls = []
    for n in range(len(FAULTY)):
        path, b = body(fmt, f"conversation {n}")
        status, headers, reply = http("POST", path, b)
        assert status == 200, reply
        calls.append(headers["x-bench-call"])
    signs = [http("GET", f"/bench/calls/{c}")[2]["signs"] for c in calls]
    assert signs == ["tools,unoffered", "tools,not_json", "tools,schema", "tools,schema", "tools"]
    faults = http("GET", f"/bench/calls/{calls[1]}")[2]["extra"]["tool_faults"]
    assert faults[0]["kind"] == "not_json" and faults[0]["tool"] == "weather"
    rec = http("GET", "/bench/record")[2]["collections"]["core"]["agent"]
    assert (rec["tool_turns"], rec["tool_errors"], rec["answers"], rec["failures"]) == (5, 4, 5, 0)
    assert rec["tool_error_kinds"] == {"unoffered": 1, "not_json": 1, "schema": 2, "reported": 0}
    page = http("GET", "/models")[2]
    assert "Tool errors" in page and "4 <span class=\"muted\">of 5 (1 unoffered, 1 not json, 2 schema)" in page


def test_shadow_answers_are_checked_too(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("a", "openai"), ("b", "openai")], shadow=1)
    fakes["openai"].script("a-s", Reply.tool("nope", {}))
    fakes["openai"].script("b-s", Reply.tool("nope", {}))
    http = Http(service.url)
    status, headers, reply = http("POST", *body("chat", "with a shadow"))
    assert status == 200, reply
    shadow = wait_for(lambda: [c for c in http("GET", "/bench/calls?collection=core")[2]["calls"]
                               if c["kind"] == "shadow"])[0]
    assert shadow["signs"] == "tools,unoffered" and shadow["model"] != headers["x-bench-model"]


# ---- a conversation leaves a failing member -----------------------------------------------------

def test_a_conversation_moves_after_two_failing_turns(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("a", "openai"), ("b", "openai")])
    bad = Reply.tool("weather", {"city": 3})
    for served in ("a-s", "b-s"):
        fakes["openai"].script(served, [bad, bad, Reply(text="fine")])
    http = Http(service.url)
    path, b = body("chat", "a long task")
    picked, calls = [], []
    for n in range(3):
        status, headers, reply = http("POST", path, b)
        assert status == 200, reply
        picked.append(headers["x-bench-model"])
        calls.append(headers["x-bench-call"])
        b = dict(b, messages=b["messages"] + [{"role": "assistant", "content": "…"},
                                              {"role": "user", "content": f"turn {n + 2}"}])
    first, other = picked[0], ({"a", "b"} - {picked[0]}).pop()
    assert picked == [first, first, other]   # pinned through one failing turn, moved after the second
    third = http("GET", f"/bench/calls/{calls[2]}")[2]["extra"]
    assert third["moved_from"]["model"] == first and "2 failing turns in a row" in third["moved_from"]["why"]
    assert "weather" in third["moved_from"]["why"] and third["choice"][0].startswith(f"moved from {first}")


def test_a_turn_failing_mid_answer_counts_as_a_failing_turn(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("a", "openai"), ("b", "openai")])
    cut = Reply(text="one two three four five", stream_error="upstream broke")
    for served in ("a-s", "b-s"):
        fakes["openai"].script(served, [cut, cut, Reply(text="fine")])
    http = Http(service.url)
    path, b = body("chat", "streamed task")
    picked = []
    for n in range(3):
        status, headers, _ = http("POST", path, dict(b, stream=True))
        assert status == 200
        picked.append(headers["x-bench-model"])
        b = dict(b, messages=b["messages"] + [{"role": "user", "content": f"turn {n + 2}"}])
    assert picked[0] == picked[1] != picked[2]


# ---- a turn sent again; a tool result saying the call was malformed ------------------------------

def test_a_retry_is_recorded_but_not_weighed(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    http = Http(service.url)
    path, b = body("chat", "same turn")
    first = http("POST", path, b)[1]["x-bench-call"]
    http("POST", path, b)
    assert wait_for(lambda: http("GET", f"/bench/calls/{first}")[2]["signs"]) == "retried"
    rec = http("GET", "/bench/record")[2]["collections"]["core"]["agent"]
    assert rec["retried"] == 1 and rec["tool_errors"] == 0 and rec["tool_turns"] == 0


def test_a_tool_result_reporting_a_malformed_call_counts_against_the_caller(service, home, fakes):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    fakes["openai"].script("agent-s", [Reply.tool("weather", {"city": "Oslo"}, ), Reply(text="ok")])
    http = Http(service.url)
    path, b = body("anthropic", "claude code turn")
    status, headers, reply = http("POST", path, b)
    assert status == 200, reply
    use = next(x for x in reply["content"] if x["type"] == "tool_use")
    b["messages"] += [{"role": "assistant", "content": reply["content"]},
                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "is_error": True,
                                                    "content": "<tool_use_error>InputValidationError: weather failed "
                                                               "due to the following issue: unit is invalid"}]}]
    assert http("POST", path, b)[0] == 200
    first = headers["x-bench-call"]
    assert wait_for(lambda: http("GET", f"/bench/calls/{first}")[2]["signs"]) == "tools,reported"
    rec = http("GET", "/bench/record")[2]["collections"]["core"]["agent"]
    assert rec["tool_errors"] == 1 and rec["tool_error_kinds"]["reported"] == 1


def test_signs_are_made_again_from_the_history(tmp_path):
    from benchwarmers.store import Database
    from benchwarmers.store.calls import CallRecord, Calls
    from benchwarmers.store.migrations import rebuild_kept
    db = Database(tmp_path / "bench.db")
    try:
        calls = Calls(db)
        for n, signs in enumerate(["tools,schema", "tools", None, "retried"]):
            calls.add(CallRecord(id=f"c{n}", model="m", status="ok", collection="core", kind="route", signs=signs))
        db.sync()
        before = dict(db.one("SELECT * FROM standings WHERE model = 'm'"))
        db.call(rebuild_kept)
        after = dict(db.one("SELECT * FROM standings WHERE model = 'm'"))
        assert before == after and (after["tool_turns"], after["tool_failed"], after["retried"]) == (2, 1, 1)
    finally:
        db.close()


def test_the_record_serves_the_signs_as_json():
    s = Standing(tool_turns=4, tool_failed=1, tool_schema=1)
    d = json.loads(json.dumps(s.to_dict()))
    assert d["tool_errors"] == 1 and d["tool_error_rate"] == 0.25 and d["tool_error_kinds"]["schema"] == 1


def test_the_issues_case_one_turn_conversations_without_a_verdict(service, home, fakes):
    """A member whose tool calls break the schema beside one whose calls are right, 24 one-turn conversations and no
    verdict: before, route mode picked the failing member in 21 of them, the last 8 included."""
    route_collection(home, {"openai": fakes["openai"]}, [("failing", "openai"), ("right", "openai")])
    fakes["openai"].script("failing-s", Reply.tool("weather", {"city": 3}))
    fakes["openai"].script("right-s", Reply.tool("weather", {"city": "Oslo"}, delay=0.1))   # slower: speed favours
    http = Http(service.url)                                                                  # the failing one
    picked = []
    for n in range(24):
        status, headers, reply = http("POST", *body("chat", f"one-turn conversation {n}"))
        assert status == 200, reply
        picked.append(headers["x-bench-model"])
    assert picked.count("failing") <= 2 and "failing" not in picked[-8:]
    rec = http("GET", "/bench/record")[2]["collections"]["core"]
    assert rec["failing"]["tool_errors"] == picked.count("failing") and rec["right"]["tool_errors"] == 0


def test_the_benchmark_measures_turns_kept_after_failures_start():
    from benchmarks.selection_signs import kept_turns
    moved, stayed = kept_turns(1.0, 0), kept_turns(1.0, 0, strikes=10 ** 9)
    assert moved[1] < stayed[1] and moved[1] <= 3 * moved[2]   # at most one more turn after the first failing one


@pytest.mark.parametrize("fmt", ["chat", "responses", "anthropic", "gemini", "ollama"])
def test_streamed_turns_are_checked_too(service, home, fakes, fmt):
    route_collection(home, {"openai": fakes["openai"]}, [("agent", "openai")])
    fakes["openai"].script("agent-s", Reply(tool_calls=[{"name": "weather", "arguments": '{"city": "Os'}]))
    http = Http(service.url)
    path, b = body(fmt, "streamed")
    if fmt == "gemini":
        path = path.replace(":generateContent", ":streamGenerateContent?alt=sse")
    status, headers, _ = http("POST", path, b if fmt == "gemini" else dict(b, stream=True))
    assert status == 200
    rec = http("GET", f"/bench/calls/{headers['x-bench-call']}")[2]
    assert rec["signs"] == "tools,not_json" and rec["extra"]["tool_faults"][0]["kind"] == "not_json"


def test_the_command_lines_record_names_tool_errors():
    from benchwarmers.cli.models import record_text
    rec = Standing(asks=5, answers=5, tool_turns=5, tool_failed=2).to_dict()
    assert record_text(rec) == "none judged of 5 asks, tool calls failed in 2/5 turns"
    rec = Standing(asks=5, useful=1, tool_turns=5, tool_failed=2).to_dict()
    assert record_text(rec).endswith("useful of 1 judged, tool calls failed in 2/5 turns")
