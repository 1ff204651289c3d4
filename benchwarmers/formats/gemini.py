"""Gemini generateContent / streamGenerateContent: contents -> Ask, Answer or Events -> responses."""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from ..canonical import (Answer, Ask, ErrorEvent, Finish, Image, KeepAlive, Reasoning, ReasoningDelta,
                         Target, Text, TextDelta, Tool, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent,
                         merge_usage)
from ..errors import BadRequest, NotFound
from ..tokencount import estimate_tokens
from .base import (LIST, STRING, CallIds, FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo, check, error_message,
                   get, image_from_base64, parsed, push, require_object, schema, sse, status_of, string_list,
                   with_models)

NAME = "gemini"
CONTENT_TYPE_STREAM = "text/event-stream"
SHAPE = "gemini"
PATHS = r"/v1beta/|/v1/models/.*:"         # /v1/models/<name>:<method> is Gemini's too (its SDK's v1 form)
NATIVE_API = "gemini"
CONVERSATION = "contents"
PREFIXES = ("/v1beta", "/v1")     # its API versions, as path prefixes
ACTIONS = (("generateContent", "ask", "Gemini: ask the panel, :merged, route mode or model named in the path."),
           ("streamGenerateContent", "ask", "Gemini, streamed (?alt=sse: Server-Sent Events; else one JSON array)."),
           ("countTokens", "count_tokens", "An estimate of the prompt's tokens."))
CONTENTS = schema(("contents",), contents=LIST, systemInstruction={"type": "object"}, tools=LIST,
                  generationConfig={"type": "object"})
ROUTES = (FormatRoute("GET", "/v1beta/models", "models", summary="The model names, in Gemini's shape."),
          *(FormatRoute("POST", f"{base}/{{model:path}}:{action}", op, stream=action == "streamGenerateContent",
                        summary=summary, body=CONTENTS)
            for base in ("/v1beta/models", "/v1/models") for action, op, summary in ACTIONS),
          FormatRoute("POST", "/v1beta/models/{model:path}", "unknown_method",
                      summary="Any other method of a model: a 404 in Gemini's shape."),
          FormatRoute("POST", "/v1/models/{model:path}", "unknown_method",
                      summary="Any other method of a model: a 404 in Gemini's shape."))
ERROR_SCHEMA = schema(("error",), error=schema(("code", "message", "status"), code={"type": "integer"},
                                               message=STRING, status=STRING))
FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP", "content_filter": "SAFETY", "error": "OTHER"}
STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
          405: "INVALID_ARGUMENT", 409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
          500: "INTERNAL", 502: "UNAVAILABLE", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def _f(d: dict, camel: str):
    """Gemini's JSON accepts camelCase and snake_case names alike."""
    if camel in d:
        return d[camel]
    return d.get("".join("_" + c.lower() if c.isupper() else c for c in camel))


# ---- parse -----------------------------------------------------------------------------------

def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = ctx.path_model or body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("No model in the URL.", "POST to /v1beta/models/bench/<collection>:generateContent.")
    ask = Ask(target=Target.parse(model.removeprefix("models/")), with_models=with_models(body))
    dropped: list[str] = []
    ids = CallIds()
    for i, c in enumerate(get(body, "contents", list, required=True)):
        where = f"contents[{i}]"
        role = check(c, dict, where).get("role") or "user"
        parts = _parts(get(c, "parts", list, default=[], where=where), f"{where}.parts", dropped, ids)
        push(ask.messages, "assistant" if role == "model" else "user", parts)
    system = _f(body, "systemInstruction")
    if isinstance(system, str):
        ask.system = system
    elif system is not None:
        inner = _parts(get(check(system, dict, "systemInstruction"), "parts", list, default=[]),
                       "systemInstruction.parts", dropped, ids)
        ask.system = "\n".join(p.text for p in inner if isinstance(p, Text)) or None
    _config(check(_f(body, "generationConfig") or {}, dict, "generationConfig"), ask, dropped)
    ask.tools = _tools(get(body, "tools", list, default=[]), dropped)
    ask.tool_choice = _tool_choice(_f(body, "toolConfig"))
    return parsed(ask, NAME, ctx.stream_route, body, ctx, NATIVE_API, dropped)


def _parts(raw: list, where: str, dropped: list[str], ids: CallIds) -> list:
    parts: list = []
    for i, p in enumerate(raw):
        spot = f"{where}[{i}]"
        check(p, dict, spot)
        inline, call, result, file = (_f(p, k) for k in ("inlineData", "functionCall", "functionResponse",
                                                         "fileData"))
        if "text" in p and p.get("thought"):
            parts.append(Reasoning(text=check(p["text"], str, f"{spot}.text"), signature=_f(p, "thoughtSignature")))
        elif "text" in p:
            parts.append(Text(check(p["text"], str, f"{spot}.text")))
        elif inline is not None:
            check(inline, dict, f"{spot}.inlineData")
            parts.append(image_from_base64(_f(inline, "data"), f"{spot}.inlineData.data", _f(inline, "mimeType")))
        elif file is not None:
            parts.append(Image(media_type=_f(check(file, dict, f"{spot}.fileData"), "mimeType") or "image/png",
                               url=_f(file, "fileUri")))
        elif call is not None:
            name = get(check(call, dict, f"{spot}.functionCall"), "name", str, required=True, where=spot)
            args = check(call.get("args") or {}, dict, f"{spot}.functionCall.args")
            parts.append(ToolCall(id=ids.call(name, call.get("id")), name=name,
                                  arguments=json.dumps(args, ensure_ascii=False), signature=_f(p, "thoughtSignature")))
        elif result is not None:
            name = get(check(result, dict, f"{spot}.functionResponse"), "name", str, required=True, where=spot)
            response = result.get("response")
            content = response if isinstance(response, str) else json.dumps(response or {}, ensure_ascii=False)
            parts.append(ToolResult(id=ids.result(name, result.get("id")), content=content, name=name))
        else:
            dropped.append("part " + ",".join(sorted(p)))
    return parts


def _config(cfg: dict, ask: Ask, dropped: list[str]) -> None:
    where = "generationConfig"
    ask.max_tokens = _f(cfg, "maxOutputTokens")
    if ask.max_tokens is not None:
        check(ask.max_tokens, int, f"{where}.maxOutputTokens")
    for attr, key in (("temperature", "temperature"), ("top_p", "topP")):
        value = _f(cfg, key)
        setattr(ask, attr, float(check(value, float, f"{where}.{key}")) if value is not None else None)
    ask.stop = string_list(_f(cfg, "stopSequences"), f"{where}.stopSequences")
    if (_f(cfg, "candidateCount") or 1) != 1:
        dropped.append("candidateCount (only one candidate is returned)")


def _tools(raw: list, dropped: list[str]) -> list[Tool]:
    out = []
    for i, t in enumerate(raw):
        decls = _f(check(t, dict, f"tools[{i}]"), "functionDeclarations")
        if decls is None:
            dropped.append("tool " + ",".join(sorted(t)))      # googleSearch, codeExecution...
            continue
        for j, d in enumerate(check(decls, list, f"tools[{i}].functionDeclarations")):
            where = f"tools[{i}].functionDeclarations[{j}]"
            params = _f(check(d, dict, where), "parametersJsonSchema") or d.get("parameters")
            out.append(Tool(name=get(d, "name", str, required=True, where=where),
                            description=get(d, "description", str, default="", where=where),
                            parameters=_lower_types(params) if params else {"type": "object", "properties": {}}))
    return out


def _lower_types(schema):
    """Gemini schemas may say "OBJECT"/"STRING": JSON Schema wants lower case."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def _tool_choice(cfg):
    fcc = _f(cfg, "functionCallingConfig") if isinstance(cfg, dict) else None
    if not isinstance(fcc, dict):
        return None
    mode, allowed = str(fcc.get("mode", "AUTO")).upper(), _f(fcc, "allowedFunctionNames") or []
    if mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
        return {"name": allowed[0]}
    return {"ANY": "required", "NONE": "none", "VALIDATED": "auto"}.get(mode, "auto")


# ---- render ----------------------------------------------------------------------------------

def usage_dict(u: Usage) -> dict:
    d = {"promptTokenCount": u.input_tokens, "candidatesTokenCount": u.output_tokens, "totalTokenCount": u.total}
    if u.cache_read_tokens:
        d["cachedContentTokenCount"] = u.cache_read_tokens
    return d


def _call_part(call: ToolCall) -> dict:
    fn = {"id": call.id, "name": call.name, "args": call.args()} if call.id else {"name": call.name,
                                                                                   "args": call.args()}
    return {"functionCall": fn}


def _record(ctx: ReplyInfo, parts: list, finish: str | None = None, usage: Usage | None = None) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = FINISH.get(finish, "STOP")
    record: dict = {"candidates": [candidate]}
    if usage is not None:
        record["usageMetadata"] = usage_dict(usage)
    record["modelVersion"] = ctx.model
    record["responseId"] = ctx.id
    return record


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    """Thought text as thought parts; the signature where Gemini puts it and wants it back: on the first
    functionCall part, else on the answer's text part (a part of its own would not be sent back in place)."""
    parts: list = [{"text": r.text, "thought": True} for r in answer.reasoning if r.text]
    if answer.text or not answer.tool_calls:
        parts.append({"text": answer.text})
    calls = [_call_part(c) for c in answer.tool_calls]
    signature = next((r.signature for r in answer.reasoning if r.signature), None)
    if signature:
        (calls or parts)[0 if calls else -1]["thoughtSignature"] = signature
    reply = _record(ctx, parts + calls, answer.finish_reason, answer.usage)
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply


# ---- stream ----------------------------------------------------------------------------------

def is_sse(ctx: ReplyInfo) -> bool:
    """`?alt=sse` (what the SDKs send) gives SSE; without it, one JSON array streamed."""
    return ctx.request is None or ctx.request.query.get("alt") == "sse"


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM if is_sse(ctx) else "application/json"


def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    framed = is_sse(ctx)
    first = [True]

    def frame(record: dict | None) -> bytes:
        """A record in this framing; None is a keep-alive (the SDK's SSE parser takes no comments)."""
        if framed:
            return sse(record if record is not None else _record(ctx, [{"text": ""}]))
        if record is None:
            return b"\n"                 # whitespace between array items is valid JSON
        sep = b"" if first[0] else b",\r\n"
        first[0] = False
        return sep + json.dumps(record, ensure_ascii=False).encode("utf-8")

    if not framed:
        yield b"["
    yield from _records(events, ctx, frame)
    if not framed:
        yield b"]"


def _records(events: Iterable, ctx: ReplyInfo, frame) -> Iterator[bytes]:
    """Text as it comes; tool calls held until whole (Gemini sends `args` as one object)."""
    calls: dict[int, ToolCall] = {}
    usage, finish, signature = Usage(), Finish(), None
    for event in events:
        if isinstance(event, TextDelta):
            if event.text:
                part = {"text": event.text}
                if signature:            # a signed text part: the signature came just before its text
                    part["thoughtSignature"], signature = signature, None
                yield frame(_record(ctx, [part]))
        elif isinstance(event, ReasoningDelta):
            if event.text:
                yield frame(_record(ctx, [{"text": event.text, "thought": True}]))
            signature = signature or event.signature   # held for the part it belongs to
        elif isinstance(event, ToolCallDelta):
            call = calls.setdefault(event.index, ToolCall(id=event.id or "", name=event.name or "", arguments=""))
            call.arguments += event.arguments
            call.id, call.name = call.id or event.id or "", call.name or event.name or ""
        elif isinstance(event, UsageEvent):
            usage = merge_usage(usage, event.usage)
        elif isinstance(event, KeepAlive):
            yield frame(None)
        elif isinstance(event, ErrorEvent):
            yield frame(error_body(event.error))
            return
        elif isinstance(event, Finish):
            finish = event
            break
    usage = merge_usage(usage, finish.usage) if finish.usage else usage
    parts = [_call_part(calls[i]) for i in sorted(calls)] or [{"text": ""}]
    if signature:                        # Gemini wants it on the first functionCall part
        parts[0]["thoughtSignature"] = signature
    last = _record(ctx, parts, finish.reason, usage)
    extra = finish.extra if finish.extra is not None else ctx.extra
    if extra is not None:
        last["bench"] = extra
    yield frame(last)


# ---- errors and listings ---------------------------------------------------------------------

def error_body(err: BaseException) -> dict:
    status = status_of(err)
    return {"error": {"code": status, "message": error_message(err),
                      "status": STATUS.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")}}


def models_list(names: list[str]) -> dict:
    return {"models": [{"name": f"models/{n}", "baseModelId": n, "version": "1", "displayName": n,
                        "description": "A Benchwarmers panel or model.", "inputTokenLimit": 1048576,
                        "outputTokenLimit": 65536,
                        "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]}
                       for n in names]}


def on_models(q: Lookup) -> dict:
    return models_list(q.names())


def on_count_tokens(q: Lookup) -> dict:
    ask = parse(q.body(), q.info).ask   # checks the body first: a bad one is a 400 before an unknown model is a 404
    q.require_listed(q.info.path_model)
    return {"totalTokens": estimate_tokens(ask.prompt_text())}


def on_unknown_method(q: Lookup) -> dict:
    action = q.params["model"].rpartition(":")[2]
    raise NotFound(f"Unknown Gemini method {action!r}.",
                   "Use models/bench/<collection>:generateContent or :streamGenerateContent.")


# the ops of its own routes (FormatRoute.op other than "ask")
OPS = {"models": on_models, "count_tokens": on_count_tokens, "unknown_method": on_unknown_method}
load_reply = None                # an empty conversation is a 400 naming CONVERSATION
