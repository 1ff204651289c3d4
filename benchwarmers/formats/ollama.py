"""Ollama native API (/api/chat, /api/generate, /api/tags, /api/show, /api/version): requests and NDJSON replies."""
from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone
from typing import Iterable, Iterator

from ..canonical import (Answer, Ask, ErrorEvent, Finish, KeepAlive, Message, Reasoning, ReasoningDelta, Target,
                         Text, TextDelta, Tool, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent, merge_usage)
from ..errors import BadRequest, NotFound
from .base import (BOOL, LIST, STRING, CallIds, FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo, check,
                   error_message, get, image_from_base64, json_args, ndjson, parsed, push, require_object, schema,
                   string_list, with_models)

NAME = "ollama"
CONTENT_TYPE_STREAM = "application/x-ndjson"
SHAPE = "ollama"
PATHS = r"/api/"
NATIVE_API = "ollama"            # /api/chat only: an /api/generate body is no chat body (parse clears it)
CONVERSATION = "messages"
PREFIXES = ("/api",)
ROUTES = (FormatRoute("POST", "/api/chat", "ask", summary="Ollama chat: ask a panel, :merged, route mode or one "
                      "model (streams NDJSON unless stream is false).",
                      body=schema(("model",), model=STRING, messages=LIST, stream=BOOL, tools=LIST)),
          FormatRoute("POST", "/api/generate", "ask", summary="Ollama generate: a prompt to a panel, :merged or one "
                      "model.", body=schema(("model",), model=STRING, prompt=STRING, system=STRING, stream=BOOL)),
          FormatRoute("GET", "/api/tags", "models", summary="The model names, as Ollama lists models."),
          FormatRoute("GET", "/api/version", "version", summary="The Ollama version this answers as."),
          FormatRoute("POST", "/api/show", "show", summary="One model name described, if this caller may ask it.",
                      body=schema(("model",), model=STRING)))
ERROR_SCHEMA = schema(("error",), error=STRING)
DONE = {"length": "length"}          # everything else reads as "stop" to Ollama clients
VERSION = "0.12.0"


def _is_generate(path: str | None, body: dict | None) -> bool:
    if path:
        return path.rstrip("/").endswith("/api/generate")
    return body is not None and "prompt" in body and "messages" not in body


# ---- parse -----------------------------------------------------------------------------------

def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = get(body, "model", str, required=True)
    ask = Ask(target=Target.parse(model), with_models=with_models(body))
    api: str | None
    stream, api = bool(get(body, "stream", bool, default=True)), NATIVE_API
    if _is_generate(ctx.path, body):
        api = None
        _generate(body, ask)
    else:
        _chat(body, ask)
    opts = get(body, "options", dict, default={})
    ask.max_tokens = get(opts, "num_predict", int, where="options")
    if ask.max_tokens is not None and ask.max_tokens < 1:
        ask.max_tokens = None          # Ollama's -1 / -2 mean "no limit"
    for attr, key in (("temperature", "temperature"), ("top_p", "top_p")):
        value = get(opts, key, float, where="options")
        setattr(ask, attr, float(value) if value is not None else None)
    ask.stop = string_list(opts.get("stop"), "options.stop")
    dropped = ["format (structured output)"] if body.get("format") else []
    return parsed(ask, NAME, stream, body, ctx, api, dropped)


def _generate(body: dict, ask: Ask) -> None:
    prompt = get(body, "prompt", str, default="")
    parts: list = [Text(prompt)] if prompt else []
    for i, img in enumerate(get(body, "images", list, default=[])):
        parts.append(image_from_base64(img, f"images[{i}]"))
    ask.messages.append(Message(role="user", parts=parts))
    ask.system = get(body, "system", str) or None


def _chat(body: dict, ask: Ask) -> None:
    raw = get(body, "messages", list, required=True)
    ids, system = CallIds(), []
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        role = get(check(m, dict, where), "role", str, required=True, where=where)
        content = get(m, "content", str, default="", where=where)
        if role == "system":
            if ask.messages:
                ask.messages.append(Message(role="system", parts=[Text(content)]))
            else:
                system.append(content)
        elif role == "tool":
            name = m.get("tool_name") or m.get("name") or ""
            push(ask.messages, "tool", [ToolResult(id=ids.result(name, m.get("tool_call_id")), content=content,
                                                   name=name or None)])
        elif role in ("user", "assistant"):
            ask.messages.append(Message(role=role, parts=_parts(m, where, content, ids)))
        else:
            raise BadRequest(f"`{where}.role` is {role!r}.", "Use system, user, assistant or tool.")
    ask.system = "\n\n".join(system) if system else None
    ask.tools = _tools(get(body, "tools", list, default=[]))


def _parts(m: dict, where: str, content: str, ids: CallIds) -> list:
    parts: list = []
    if m.get("thinking"):
        parts.append(Reasoning(text=get(m, "thinking", str, where=where)))
    if content:
        parts.append(Text(content))
    for j, img in enumerate(get(m, "images", list, default=[], where=where)):
        parts.append(image_from_base64(img, f"{where}.images[{j}]"))
    for j, call in enumerate(get(m, "tool_calls", list, default=[], where=where)):
        spot = f"{where}.tool_calls[{j}]"
        fn = get(check(call, dict, spot), "function", dict, required=True, where=spot)
        name = get(fn, "name", str, required=True, where=f"{spot}.function")
        parts.append(ToolCall(id=ids.call(name, call.get("id")), name=name,
                              arguments=json_args(fn.get("arguments"), f"{spot}.function.arguments")))
    return parts


def _tools(raw: list) -> list[Tool]:
    out = []
    for i, t in enumerate(raw):
        where = f"tools[{i}]"
        fn = get(check(t, dict, where), "function", dict, required=True, where=where)
        out.append(Tool(name=get(fn, "name", str, required=True, where=f"{where}.function"),
                        description=get(fn, "description", str, default="", where=f"{where}.function"),
                        parameters=get(fn, "parameters", dict, where=f"{where}.function")
                        or {"type": "object", "properties": {}}))
    return out


# ---- render ----------------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _head(ctx: ReplyInfo) -> dict:
    return {"model": ctx.model, "created_at": _now()}


def _body(ctx: ReplyInfo, text: str, thinking: str = "", calls: list | None = None) -> dict:
    """The text-carrying part of a record: `response` for /api/generate, `message` for /api/chat."""
    if _is_generate(ctx.request.path if ctx.request else None, ctx.native):
        out = {"response": text}
        if thinking:
            out["thinking"] = thinking
        return out
    message: dict = {"role": "assistant", "content": text}
    if thinking:
        message["thinking"] = thinking
    if calls:
        message["tool_calls"] = [{"function": {"name": c.name, "arguments": c.args()}} for c in calls]
    return {"message": message}


def _done(reason: str, usage: Usage, seconds: float, ttft: float | None) -> dict:
    first = ttft if ttft is not None and ttft <= seconds else 0.0
    return {"done": True, "done_reason": DONE.get(reason, "stop"), "total_duration": int(seconds * 1e9),
            "load_duration": 0, "prompt_eval_count": usage.input_tokens, "prompt_eval_duration": int(first * 1e9),
            "eval_count": usage.output_tokens, "eval_duration": int((seconds - first) * 1e9)}


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    thinking = "".join(r.text for r in answer.reasoning)
    reply = {**_head(ctx), **_body(ctx, answer.text, thinking, answer.tool_calls),
             **_done(answer.finish_reason, answer.usage, answer.seconds, answer.ttft)}
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply


def load_reply(ctx: ReplyInfo, names: list[str]) -> dict:
    """An empty `messages` or `prompt` only loads the model in Ollama: one object, done_reason "load".
    `names`: what the caller can ask; loading any other is Ollama's own 404."""
    if ctx.model not in names:
        raise NotFound(f"model {ctx.model!r} not found", "GET /api/tags lists what this service answers as.")
    return {**_head(ctx), **_body(ctx, ""), "done": True, "done_reason": "load"}


# ---- stream ----------------------------------------------------------------------------------

def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    start, first = time.monotonic(), None
    yield ndjson({**_head(ctx), **_body(ctx, ""), "done": False})
    calls: dict[int, ToolCall] = {}
    usage, finish = Usage(), Finish()
    for event in events:
        if isinstance(event, (TextDelta, ReasoningDelta)) and event.text:
            first = first if first is not None else time.monotonic() - start
            body = _body(ctx, event.text) if isinstance(event, TextDelta) else _body(ctx, "", event.text)
            yield ndjson({**_head(ctx), **body, "done": False})
        elif isinstance(event, ToolCallDelta):
            call = calls.setdefault(event.index, ToolCall(id=event.id or "", name=event.name or "", arguments=""))
            call.name = call.name or event.name or ""
            call.arguments += event.arguments
        elif isinstance(event, UsageEvent):
            usage = merge_usage(usage, event.usage)
        elif isinstance(event, KeepAlive):
            yield ndjson({**_head(ctx), **_body(ctx, ""), "done": False})
        elif isinstance(event, ErrorEvent):
            yield ndjson(error_body(event.error))
            return
        elif isinstance(event, Finish):
            finish = event
            break
    if calls:                          # Ollama sends tool calls whole, in one record
        yield ndjson({**_head(ctx), **_body(ctx, "", calls=[calls[i] for i in sorted(calls)]), "done": False})
    usage = merge_usage(usage, finish.usage) if finish.usage else usage
    last = {**_head(ctx), **_body(ctx, ""), **_done(finish.reason, usage, time.monotonic() - start, first)}
    extra = finish.extra if finish.extra is not None else ctx.extra
    if extra is not None:
        last["bench"] = extra
    yield ndjson(last)


# ---- errors and listings ---------------------------------------------------------------------

def error_body(err: BaseException) -> dict:
    return {"error": error_message(err)}


def _details(info: dict | None = None) -> dict:
    info = info or {}
    return {"parent_model": "", "format": info.get("format", "gguf"), "family": info.get("family", "bench"),
            "families": [info.get("family", "bench")], "parameter_size": info.get("parameter_size", ""),
            "quantization_level": info.get("quantization_level", "")}


def tags(models: list[dict]) -> dict:
    """GET /api/tags: each entry needs a `name`; `modified_at`, `size` and `details` fields are optional."""
    out = []
    for m in models:
        name = m["name"]
        out.append({"name": name, "model": name, "modified_at": m.get("modified_at") or _now(),
                    "size": m.get("size", 0), "digest": hashlib.sha256(name.encode()).hexdigest(),
                    "details": _details(m.get("details"))})
    return {"models": out}


def version() -> dict:
    return {"version": VERSION}


def show(name: str, info: dict | None = None) -> dict:
    """POST /api/show: `info` may carry context_window (int), tools and vision (bools)."""
    info = info or {}
    caps = ["completion"] + [c for c in ("tools", "vision") if info.get(c)]
    model_info = {"general.architecture": "bench", "general.basename": name}
    if info.get("context_window"):
        model_info["bench.context_length"] = info["context_window"]
    return {"modelfile": f"# {name}: served by Benchwarmers", "parameters": "", "template": "{{ .Prompt }}",
            "details": _details(info), "model_info": model_info, "capabilities": caps,
            "modified_at": _now()}


def on_models(q: Lookup) -> dict:
    return tags([{"name": n} for n in q.names()])


def on_version(q: Lookup) -> dict:
    return version()


def on_show(q: Lookup) -> dict:
    body = q.body()
    name = body.get("model") or body.get("name")
    if not isinstance(name, str) or name not in q.names():
        raise NotFound(f"model {name!r} not found", "GET /api/tags lists what this service answers as.")
    return show(name, {})


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM


# the ops of its own routes (FormatRoute.op other than "ask")
OPS = {"models": on_models, "version": on_version, "show": on_show}
