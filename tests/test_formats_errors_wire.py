"""Every error kind in every format's error shape; the registry; the captured Claude Code and Codex requests."""
import json
from pathlib import Path

import pytest

from benchwarmers import errors
from benchwarmers.canonical import Text, ToolCall, ToolResult
from benchwarmers.formats import FORMATS, anthropic, gemini, get, ollama, openai_responses
from benchwarmers.formats.base import ReplyInfo, RequestInfo, sse

WIRE = Path(__file__).parent / "wire"

ERRORS = [  # (error, anthropic type, gemini status)
    (errors.BadRequest("bad field", "send a string"), "invalid_request_error", "INVALID_ARGUMENT"),
    (errors.Unauthorized("no key"), "authentication_error", "UNAUTHENTICATED"),
    (errors.Forbidden("not yours"), "permission_error", "PERMISSION_DENIED"),
    (errors.NotFound("no such collection"), "not_found_error", "NOT_FOUND"),
    (errors.MethodNotAllowed("use POST", ["POST"]), "invalid_request_error", "INVALID_ARGUMENT"),
    (errors.Conflict("exists"), "invalid_request_error", "ABORTED"),
    (errors.PayloadTooLarge("too big"), "request_too_large", "INVALID_ARGUMENT"),
    (errors.RateLimited("slow down", retry_after=3), "rate_limit_error", "RESOURCE_EXHAUSTED"),
    (errors.UpstreamFailed("server", "upstream 500"), "api_error", "UNAVAILABLE"),
    (errors.UpstreamFailed("timeout", "upstream slow"), "api_error", "DEADLINE_EXCEEDED"),
    (errors.Timeout("took too long"), "api_error", "DEADLINE_EXCEEDED"),
    (errors.Unavailable("shutting down"), "overloaded_error", "UNAVAILABLE"),
    (errors.ConfigError("bad json at line 3"), "api_error", "INTERNAL"),
    (errors.BenchError("boom"), "api_error", "INTERNAL"),
]


@pytest.mark.parametrize("err, anthropic_type, gemini_status", ERRORS, ids=lambda x: type(x).__name__)
def test_error_shapes(err, anthropic_type, gemini_status):
    text = str(err)
    for name in ("openai_chat", "openai_completions", "openai_responses"):
        body = get(name).error_body(err)
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["message"] == text and body["error"]["code"] == err.code
        assert body["error"]["type"] == (anthropic_type if err.status < 500 else "server_error")
    assert anthropic.error_body(err) == {"type": "error", "error": {"type": anthropic_type, "message": text}}
    assert gemini.error_body(err) == {"error": {"code": err.status, "message": text, "status": gemini_status}}
    assert ollama.error_body(err) == {"error": text}


def test_error_messages_never_carry_keys():
    err = errors.UpstreamFailed("auth", "rejected key sk-abcdefghijklmnop1234 and AIzaSyA1234567890abcdefghijkl")
    for module in FORMATS.values():
        dumped = json.dumps(module.error_body(err))
        assert "sk-abcdefghijklmnop1234" not in dumped and "AIzaSyA1234567890" not in dumped
        assert "[redacted]" in dumped


def test_registry_and_public_api():
    assert set(FORMATS) == {"openai_chat", "openai_responses", "openai_completions", "anthropic", "gemini",
                            "ollama"}
    for name, module in FORMATS.items():
        assert module.NAME == name and get(name) is module
        for attr in ("parse", "render", "stream", "error_body"):
            assert callable(getattr(module, attr))
        assert module.stream_content_type(ReplyInfo.new("m")) == module.CONTENT_TYPE_STREAM


def test_every_format_declares_its_routes_paths_and_native_api():
    """What the route table, the 404 error shape and route mode's pass-through read: declared by each format."""
    from benchwarmers.formats import SHAPES, shape_of_path
    for name, module in FORMATS.items():
        assert module.SHAPE in SHAPES and isinstance(module.CONVERSATION, str)
        assert module.NATIVE_API in (None, "openai", "anthropic", "gemini", "ollama")
        assert module.ROUTES and all(r.op == "ask" or callable(getattr(module, "on_" + r.op)) for r in module.ROUTES)
        for route in module.ROUTES:   # a route's own path answers errors in its format's shape (a path shared
            if route.header:          # with another format by header takes the other's)
                continue
            model = "bench/core:method" if name == "gemini" else "bench/core"   # Gemini's names carry a method
            assert shape_of_path(route.pattern.replace("{model:path}", model)) == module.SHAPE, route
    assert shape_of_path("/v1/models/bench/core:embedContent") == "gemini"
    assert shape_of_path("/v1/nothing-here") == "openai" and shape_of_path("/elsewhere") is None
    assert get("ollama").CONTENT_TYPE_STREAM == "application/x-ndjson"
    with pytest.raises(errors.NotFound):
        get("soap")


def test_sse_framing():
    assert sse({"a": 1}) == b'data: {"a":1}\n\n'
    assert sse({"type": "ping"}, event="ping") == b'event: ping\ndata: {"type":"ping"}\n\n'
    assert sse("[DONE]") == b"data: [DONE]\n\n"
    ctx = ReplyInfo.new("m")
    assert ctx.id != ReplyInfo.new("m").id and ctx.created > 1_600_000_000


def wire(name: str) -> list[dict]:
    return json.loads((WIRE / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("index", [0, 1])
def test_claude_code_request_parses(index):
    request = wire("claude_code_2.1.197.json")[index]
    body = request["body"]
    ask, reply, passthrough = anthropic.parse(body, RequestInfo(path=request["path"], query={"beta": "true"}))
    assert reply.stream and ask.max_tokens == 32000 and ask.target.requested == body["model"]
    assert len(ask.tools) == len(body["tools"]) == 24 and passthrough.dropped == ()
    bash = next(t for t in ask.tools if t.name == "Bash")
    assert bash.parameters["properties"]["command"]["type"] == "string"
    assert ask.system.startswith("x-anthropic-billing-header") and "interactive agent" in ask.system
    assert any(m.role == "system" and "Available agent types" in m.text() for m in ask.messages)
    assert ask.messages[0].role == "user" and passthrough.body is body
    if index == 1:
        call = next(p for m in ask.messages for p in m.parts if isinstance(p, ToolCall))
        result = next(p for m in ask.messages for p in m.parts if isinstance(p, ToolResult))
        assert (call.name, call.args()) == ("Bash", {"command": "echo hi"})
        assert result.id == call.id and result.content == "hi" and not result.is_error
    assert anthropic.count_tokens(body)["input_tokens"] > 1000


@pytest.mark.parametrize("index", [0, 1])
def test_codex_request_parses(index):
    request = wire("codex_0.171.0.json")[index]
    body = request["body"]
    ask, reply, passthrough = openai_responses.parse(body, RequestInfo(path=request["path"]))
    assert reply.stream and ask.tool_choice == "auto" and ask.target.requested == body["model"]
    assert ask.system.startswith("You are a coding agent running in the Codex CLI")
    assert "<skills_instructions>" in ask.system          # every leading developer message is kept
    names = [t.name for t in ask.tools]
    assert "exec_command" in names and len(names) == 7
    assert sorted(passthrough.dropped) == ["namespace tool multi_agent_v1", "web_search tool"]
    assert [m.role for m in ask.messages][:2] == ["user", "user"]
    assert ask.messages[1].parts == [Text("echo hi")]
    if index == 1:
        assistant, tool = ask.messages[2], ask.messages[3]
        call = assistant.parts[0]
        assert (assistant.role, call.id, call.name, call.args()) == ("assistant", "call_e66591f23ce54bfd9bf26504",
                                                                     "exec_command", {"cmd": "echo hi"})
        assert tool.role == "tool" and tool.parts[0].id == call.id and "hi" in tool.parts[0].content


def test_reply_info_for_ask_carries_the_request_options():
    req = RequestInfo(path="/v1/chat/completions")
    ask, options, _ = get("openai_chat").parse({"model": "bench/core:merged", "stream": True,
                                                "stream_options": {"include_usage": True},
                                                "messages": [{"role": "user", "content": "hi"}]}, req)
    ctx = ReplyInfo.for_ask(ask, options, req, extra={"seats": []})
    assert (ctx.model, ctx.extra, ctx.request) == ("bench/core:merged", {"seats": []}, req)
    assert ctx.option("stream_options", "include_usage") is True
    assert ctx.option("stream_options", "missing", default=7) == 7 and ctx.option("stream", "x") is None
