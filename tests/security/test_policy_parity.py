"""Policy parity: a rule holds the same in every format and every mode (whole, streamed, :merged, direct)."""
from __future__ import annotations

import pytest

from tests.fakes import FakeOpenAI
from tests.security.attack import bench_data

CUSTOM = {"type": "custom", "name": "apply_patch", "description": "Edit files", "format": {"type": "text"}}
FUNCTION_TOOLS = {
    "/v1/chat/completions": ({"messages": [{"role": "user", "content": "hi"}]},
                             {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}),
    "/v1/responses": ({"input": "hi"}, {"type": "function", "name": "f", "parameters": {"type": "object"}}),
    "/v1/messages": ({"max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]},
                     {"name": "f", "input_schema": {"type": "object"}}),
    "/api/chat": ({"stream": False, "messages": [{"role": "user", "content": "hi"}]},
                  {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}),
}


@pytest.fixture
def app(home, make_app):
    with FakeOpenAI() as fake:
        bench_data(home, fake)
        yield make_app(), fake


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
@pytest.mark.parametrize("model", ["bench/core", "bench/core:merged", "a"])
@pytest.mark.parametrize("stream", [False, True])
def test_openai_custom_tools_are_refused_by_a_panel_not_dropped(app, path, model, stream):
    """A `custom` tool was once dropped silently: the panel answered a question the client did not ask."""
    http, fake = app
    base, _ = FUNCTION_TOOLS[path]
    status, _, reply = http("POST", path, {**base, "model": model, "stream": stream, "tools": [CUSTOM]})
    assert status == 400 and reply["error"]["code"] == "tools_need_route_mode", reply
    assert not fake.requests


@pytest.mark.parametrize("path", sorted(FUNCTION_TOOLS))
def test_function_tools_are_refused_by_a_panel_in_every_format(app, path):
    http, _ = app
    base, tool = FUNCTION_TOOLS[path]
    status, _, reply = http("POST", path, {**base, "model": "bench/core", "tools": [tool]})
    assert status == 400 and ":route" in str(reply), reply


def test_route_mode_takes_custom_tools_and_records_them_as_dropped(app):
    http, _ = app
    status, headers, _ = http("POST", "/v1/chat/completions", {
        "model": "bench/core:route", "messages": [{"role": "user", "content": "hi"}], "tools": [CUSTOM]})
    assert status == 200
    assert "custom tool" in http.bench.calls.get(headers["x-bench-call"]).extra["dropped"]
