"""OpenAI chat completions (POST /v1/chat/completions): request -> Ask, Answer or Events -> reply."""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..canonical import (Answer, Ask, ErrorEvent, Finish, KeepAlive, Message, ReasoningDelta, Target, Text,
                         TextDelta, Tool, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent, merge_usage)
from ..errors import BadRequest, BenchError
from .base import (BOOL, COMPACT, LIST, SSE_KEEPALIVE, STRING, FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo,
                   check, client_only_tool, error_message, error_type, get, image_from_url, json_args, new_id, number,
                   parsed, positive_int, push, require_object, schema, sse, status_of, string_list, text_of,
                   with_models)

NAME = "openai_chat"
CONTENT_TYPE_STREAM = "text/event-stream"
SHAPE = "openai"                 # the error shape of its routes (and of any path under PATHS)
PATHS = r"/v1/"                  # paths of its API: a 404 under them answers in this shape (the longest match wins)
NATIVE_API = "openai"            # the upstream API a member must speak to get the client's body as it came
CONVERSATION = "messages"        # the field that carries the conversation
PREFIXES = ("/v1",)              # its routes' prefix: a path lacking it (or doubled) is a base URL set wrong
_BENCH_FIELDS: dict[str, dict] = {"with": {"type": ["array", "string"]}, "continue": STRING,
                                    "seat": {"type": "integer"}}
ROUTES = (FormatRoute("POST", "/v1/chat/completions", "ask", summary="OpenAI chat completions: ask a panel, a "
                      ":merged panel, route mode or one model.",
                      body=schema(("model", "messages"), model=STRING, messages=LIST, stream=BOOL, tools=LIST,
                                  bench=schema(**_BENCH_FIELDS))),
          FormatRoute("GET", "/v1/models", "models", summary="The model names this caller may ask (OpenAI's shape; "
                      "Anthropic's when the request sends anthropic-version)."),
          FormatRoute("GET", "/v1/models/{model:path}", "model", summary="One model name, if this caller may ask "
                      "it."))
ERROR_SCHEMA = schema(("error",), error=schema(("message", "type"), message=STRING, type=STRING))
FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "content_filter": "content_filter"}


# ---- parse -----------------------------------------------------------------------------------

def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = get(body, "model", str, required=True)
    raw = get(body, "messages", list, required=True)
    if not raw:
        raise BadRequest("`messages` is empty.", "Send at least one message.")
    ask = Ask(target=Target.parse(model), with_models=with_models(body))
    system: list[str] = []
    dropped: list[str] = []
    for i, m in enumerate(raw):
        _message(check(m, dict, f"messages[{i}]"), f"messages[{i}]", ask, system, dropped)
    ask.system = "\n\n".join(system) if system else None
    # each optional field read only when the body has it (what each read gives for an absent field, without its calls)
    ask.tools = tools(body, ask, dropped) if "tools" in body or "functions" in body else []
    ask.tool_choice = tool_choice(body.get("tool_choice", body.get("function_call"))) \
        if "tool_choice" in body or "function_call" in body else None
    ask.max_tokens = positive_int(body, "max_completion_tokens", "max_tokens") \
        if "max_completion_tokens" in body or "max_tokens" in body else None
    ask.temperature = number(body, "temperature") if "temperature" in body else None
    ask.top_p = number(body, "top_p") if "top_p" in body else None
    ask.stop = string_list(body.get("stop"), "stop") if "stop" in body else []
    stream = bool(get(body, "stream", bool, default=False))
    if "n" in body and get(body, "n", int, default=1) != 1:
        dropped.append("n (only one choice is returned)")
    return parsed(ask, NAME, stream, body, ctx, NATIVE_API, dropped)


def _message(m: dict, where: str, ask: Ask, system: list[str], dropped: list[str]) -> None:
    role = get(m, "role", str, required=True, where=where)
    if role in ("system", "developer"):
        text = text_of(m.get("content"), f"{where}.content")
        if not ask.messages:           # leading system prompts become Ask.system
            system.append(text)
        else:
            ask.messages.append(Message(role="system", parts=[Text(text)]))
    elif role == "user":
        push(ask.messages, "user", content_parts(m.get("content"), f"{where}.content", dropped))
    elif role == "assistant":
        parts = content_parts(m.get("content"), f"{where}.content", dropped)
        for j, call in enumerate(get(m, "tool_calls", list, default=[], where=where)):
            parts.append(_tool_call(check(call, dict, f"{where}.tool_calls[{j}]"), f"{where}.tool_calls[{j}]"))
        legacy = get(m, "function_call", dict, where=where)
        if legacy:
            name = get(legacy, "name", str, required=True, where=f"{where}.function_call")
            parts.append(ToolCall(id=name, name=name, arguments=json_args(legacy.get("arguments"), where)))
        ask.messages.append(Message(role="assistant", parts=parts))
    elif role in ("tool", "function"):
        call_id = m.get("tool_call_id") or m.get("name")
        if not isinstance(call_id, str):
            raise BadRequest(f"`{where}.tool_call_id` is required for a tool message.",
                             "Send the id of the tool call this message answers.")
        content = text_of(m.get("content"), f"{where}.content")
        push(ask.messages, "tool", [ToolResult(id=call_id, content=content, name=m.get("name"))])
    else:
        raise BadRequest(f"`{where}.role` is {role!r}, which is not a chat role.",
                         "Use system, developer, user, assistant or tool.")


def _tool_call(call: dict, where: str) -> ToolCall:
    fn = get(call, "function", dict, required=True, where=where)
    return ToolCall(id=get(call, "id", str, default="", where=where) or new_id("call_"),
                    name=get(fn, "name", str, required=True, where=f"{where}.function"),
                    arguments=json_args(fn.get("arguments"), f"{where}.function.arguments"))


def content_parts(content, where: str, dropped: list[str]) -> list:
    """Chat content: a string, or parts (text, image_url; audio and files are dropped visibly)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)] if content else []
    check(content, list, where)
    parts: list = []
    for i, part in enumerate(content):
        spot = f"{where}[{i}]"
        kind = get(check(part, dict, spot), "type", str, required=True, where=spot)
        if kind in ("text", "input_text", "output_text", "refusal"):
            field = "refusal" if kind == "refusal" else "text"
            parts.append(Text(get(part, field, str, default="", where=spot)))
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            parts.append(image_from_url(url, f"{spot}.image_url.url"))
        else:
            dropped.append(f"{kind} content part")
    return parts


def tools(body: dict, ask: Ask, dropped: list[str]) -> list[Tool]:
    out = []
    for i, t in enumerate(get(body, "tools", list, default=[])):
        check(t, dict, f"tools[{i}]")
        if t.get("type", "function") != "function":
            client_only_tool(t.get("type"), ask)
            dropped.append(f"{t.get('type')} tool")
            continue
        out.append(_tool(get(t, "function", dict, required=True, where=f"tools[{i}]"), f"tools[{i}].function"))
    for i, fn in enumerate(get(body, "functions", list, default=[])):
        out.append(_tool(check(fn, dict, f"functions[{i}]"), f"functions[{i}]"))
    return out


def _tool(fn: dict, where: str) -> Tool:
    params = get(fn, "parameters", dict, where=where) or {"type": "object", "properties": {}}
    return Tool(name=get(fn, "name", str, required=True, where=where),
                description=get(fn, "description", str, default="", where=where), parameters=params)


def tool_choice(value):
    """"auto"/"none"/"required" or {"type": "function", "function": {"name"}} (and legacy {"name"})."""
    if value is None or isinstance(value, str):
        return value
    check(value, dict, "tool_choice")
    fn = value.get("function") if isinstance(value.get("function"), dict) else value
    name = fn.get("name")
    if not isinstance(name, str):
        raise BadRequest("`tool_choice` names no function.",
                         'Send "auto", "none", "required" or {"type": "function", "function": {"name": ...}}.')
    return {"name": name}


# ---- render ----------------------------------------------------------------------------------

def usage_dict(u: Usage) -> dict:
    return {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens, "total_tokens": u.total,
            "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens}}


def _tool_calls(calls: list) -> list[dict]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
            for c in calls]


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    message: dict = {"role": "assistant", "content": answer.text if answer.text or not answer.tool_calls else None,
                     "refusal": None}
    if answer.tool_calls:
        message["tool_calls"] = _tool_calls(answer.tool_calls)
    thinking = "".join(r.text for r in answer.reasoning)
    if thinking:
        message["reasoning_content"] = thinking
    reply = {"id": "chatcmpl-" + ctx.id, "object": "chat.completion", "created": ctx.created, "model": ctx.model,
             "choices": [{"index": 0, "message": message, "logprobs": None,
                          "finish_reason": FINISH.get(answer.finish_reason, "stop")}],
             "usage": usage_dict(answer.usage), "system_fingerprint": None}
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply


# ---- stream ----------------------------------------------------------------------------------

def _chunk(ctx: ReplyInfo, delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-" + ctx.id, "object": "chat.completion.chunk", "created": ctx.created,
            "model": ctx.model, "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


_OPEN = ',"logprobs":null,"finish_reason":null}]}'   # what follows an open chunk's delta, its last field


def delta_frames(ctx: ReplyInfo) -> Callable[[dict], bytes]:
    """sse(_chunk(ctx, delta)) for each delta of one reply, the same bytes: the chunk's other fields are encoded once
    a reply, not once a delta (a streamed panel sends a frame for each piece its lead seat writes)."""
    whole = COMPACT.encode(_chunk(ctx, {}))
    head = "data: " + whole[:-len("{}" + _OPEN)]
    tail = _OPEN + "\n\n"
    return lambda delta: (head + COMPACT.encode(delta) + tail).encode("utf-8")


def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    frame = delta_frames(ctx)
    yield frame({"role": "assistant", "content": ""})
    usage = Usage()
    seen: set[int] = set()
    for event in events:
        if isinstance(event, TextDelta):
            if event.text:
                yield frame({"content": event.text})
        elif isinstance(event, ReasoningDelta):
            if event.text:
                yield frame({"reasoning_content": event.text})
        elif isinstance(event, ToolCallDelta):
            yield frame({"tool_calls": [_call_delta(event, seen)]})
        elif isinstance(event, Finish):
            yield b"".join(_finish(event, usage, ctx))   # the last frames in one write (one send, not three)
            return
        else:
            usage, frames, over = aside(event, usage)
            yield from frames
            if over:
                return
    yield b"".join(_finish(Finish(), usage, ctx))


def aside(event, usage: Usage) -> tuple[Usage, tuple, bool]:
    """What an OpenAI-shaped stream (chat's, legacy completions') does with an event besides its content and its end:
    usage kept for the last chunk, a keep-alive sent, an error sent in the error shape and then [DONE], which ends
    the stream (the third value); anything else passed over. (usage, the frames to send, whether it ended)"""
    if isinstance(event, UsageEvent):
        return merge_usage(usage, event.usage), (), False
    if isinstance(event, KeepAlive):
        return usage, (SSE_KEEPALIVE,), False
    if isinstance(event, ErrorEvent):
        return usage, (sse(error_body(event.error)), sse("[DONE]")), True
    return usage, (), False


def _call_delta(event: ToolCallDelta, seen: set[int]) -> dict:
    """The first fragment of a call carries id, type and name; later ones only arguments."""
    delta: dict = {"index": event.index, "function": {"arguments": event.arguments}}
    if event.index not in seen:
        seen.add(event.index)
        delta["id"] = event.id or new_id("call_")
        delta["type"] = "function"
        delta["function"]["name"] = event.name or ""
    return delta


def _finish(event: Finish, usage: Usage, ctx: ReplyInfo) -> Iterator[bytes]:
    usage = merge_usage(usage, event.usage) if event.usage else usage
    last = _chunk(ctx, {}, FINISH.get(event.reason, "stop"))
    extra = event.extra if event.extra is not None else ctx.extra
    if extra is not None:
        last["bench"] = extra
    yield sse(last)
    if ctx.option("stream_options", "include_usage"):
        tail = _chunk(ctx, {})
        tail["choices"] = []
        tail["usage"] = usage_dict(usage)
        yield sse(tail)
    yield sse("[DONE]")


# ---- errors and listings ---------------------------------------------------------------------

def error_body(err: BaseException) -> dict:
    status = status_of(err)
    kind = error_type(status)
    if status >= 500:
        kind = "server_error"
    code = err.code if isinstance(err, BenchError) else "internal_error"
    return {"error": {"message": error_message(err), "type": kind, "param": None, "code": code}}


def models_list(names: list[str], created: int = 0) -> dict:
    return {"object": "list", "data": [{"id": n, "object": "model", "created": created,
                                        "owned_by": "benchwarmers"} for n in names]}


def on_models(q: Lookup) -> dict:
    return models_list(q.names())


def on_model(q: Lookup) -> dict:
    """GET /v1/models/{id}: what the OpenAI SDK's models.retrieve asks."""
    q.require_listed(q.params["model"])
    return models_list([q.params["model"]])["data"][0]


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM


# the ops of its own routes (FormatRoute.op other than "ask")
OPS = {"models": on_models, "model": on_model}
load_reply = None                # an empty conversation is a 400 naming CONVERSATION
