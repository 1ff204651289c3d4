"""OpenAI Responses (POST /v1/responses, nothing stored): input items -> Ask, Answer or Events -> response."""
from __future__ import annotations

from typing import Iterable, Iterator

from ..canonical import (CONTENT_FILTER, ERROR, LENGTH, Answer, Ask, ErrorEvent, Finish, KeepAlive, Message,
                         Reasoning, ReasoningDelta, Target, Text, TextDelta, Tool, ToolCall, ToolCallDelta, ToolResult,
                         Usage, UsageEvent, merge_usage)
from ..errors import BadRequest, NotFound
from .base import (BOOL, LIST, SSE_KEEPALIVE, STRING, FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo, check,
                   client_only_tool, error_message, get, image_from_url, json_args, new_id, number, parsed,
                   positive_int, push, require_object, schema, sse, text_of, typed_parts, with_models)
from .openai_chat import ERROR_SCHEMA, error_body  # the same {"error": {...}} shape

NAME = "openai_responses"
CONTENT_TYPE_STREAM = "text/event-stream"
SHAPE = "openai"
PATHS = r"/v1/responses"
NATIVE_API = None                # no member protocol speaks Responses: bodies are always translated
CONVERSATION = "input"
PREFIXES = ("/v1",)
ROUTES = (FormatRoute("POST", "/v1/responses", "ask", summary="OpenAI Responses: ask a panel, :merged, route "
                      "mode or one model. Nothing is stored.",
                      body=schema(("model", "input"), model=STRING, input={"type": ["string", "array"]},
                                  instructions={"type": ["string", "null"]}, stream=BOOL, tools=LIST)),
          FormatRoute("GET", "/v1/responses/{id}", "stored_response", summary="Always 404: no response is stored."))
__all__ = ["NAME", "CONTENT_TYPE_STREAM", "ERROR_SCHEMA", "parse", "render", "stream", "error_body", "response_object"]


# ---- parse -----------------------------------------------------------------------------------

def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = get(body, "model", str, required=True)
    if body.get("previous_response_id"):
        raise BadRequest("`previous_response_id` cannot be used: this gateway stores no responses.",
                         "Re-send the whole conversation in `input` (as Codex does with store=false).")
    ask = Ask(target=Target.parse(model), with_models=with_models(body))
    system = [get(body, "instructions", str)] if body.get("instructions") else []
    dropped: list[str] = []
    raw = body.get("input")
    if isinstance(raw, str):
        ask.messages.append(Message(role="user", parts=[Text(raw)]))
    else:
        for i, item in enumerate(get(body, "input", list, required=True)):
            _item(check(item, dict, f"input[{i}]"), f"input[{i}]", ask, system, dropped)
    ask.system = "\n\n".join(system) if system else None
    ask.tools = _tools(body, ask, dropped)
    ask.tool_choice = _tool_choice(body.get("tool_choice"))
    ask.max_tokens = positive_int(body, "max_output_tokens")
    ask.temperature = number(body, "temperature")
    ask.top_p = number(body, "top_p")
    stream = bool(get(body, "stream", bool, default=False))
    return parsed(ask, NAME, stream, body, ctx, NATIVE_API, dropped)


def _item(item: dict, where: str, ask: Ask, system: list[str], dropped: list[str]) -> None:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        _message(item, where, ask, system, dropped)
    elif kind == "function_call":
        call = ToolCall(id=get(item, "call_id", str, required=True, where=where),
                        name=get(item, "name", str, required=True, where=where),
                        arguments=json_args(item.get("arguments"), f"{where}.arguments"))
        _assistant(ask).parts.append(call)
    elif kind == "function_call_output":
        output = text_of(item.get("output"), f"{where}.output")
        push(ask.messages, "tool", [ToolResult(id=get(item, "call_id", str, required=True, where=where),
                                               content=output)])
    elif kind == "reasoning":
        summary = "\n".join(s.get("text", "") for s in item.get("summary") or [] if isinstance(s, dict))
        _assistant(ask).parts.append(Reasoning(text=summary, signature=item.get("encrypted_content")))
    else:
        dropped.append(f"{kind} input item")


def _assistant(ask: Ask) -> Message:
    """Function calls and reasoning join the assistant turn they belong to (parallel calls share one)."""
    if not ask.messages or ask.messages[-1].role != "assistant":
        ask.messages.append(Message(role="assistant"))
    return ask.messages[-1]


def _message(item: dict, where: str, ask: Ask, system: list[str], dropped: list[str]) -> None:
    role = get(item, "role", str, required=True, where=where)
    parts = _content(item.get("content"), f"{where}.content", dropped)
    if role in ("system", "developer"):
        text = "\n".join(p.text for p in parts if isinstance(p, Text))
        if not ask.messages:           # leading instructions become Ask.system
            system.append(text)
        else:
            ask.messages.append(Message(role="system", parts=[Text(text)]))
    elif role == "assistant":
        _assistant(ask).parts.extend(parts)
    elif role == "user":
        push(ask.messages, "user", parts)
    else:
        raise BadRequest(f"`{where}.role` is {role!r}.", "Use developer, system, user or assistant.")


def _content(content, where: str, dropped: list[str]) -> list:
    return typed_parts(content, where, lambda kind, part, spot: _part(kind, part, spot, dropped))


def _part(kind: str, part: dict, spot: str, dropped: list[str]):
    if kind in ("input_text", "output_text", "text", "summary_text"):
        return Text(str(part.get("text", "")))
    if kind == "refusal":
        return Text(str(part.get("refusal", "")))
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return image_from_url(part["image_url"], f"{spot}.image_url")
    dropped.append(f"{kind} content part")
    return None


def _tools(body: dict, ask: Ask, dropped: list[str]) -> list[Tool]:
    out = []
    for i, t in enumerate(get(body, "tools", list, default=[])):
        where = f"tools[{i}]"
        kind = get(check(t, dict, where), "type", str, required=True, where=where)
        if kind != "function":
            client_only_tool(kind, ask)
            # web_search, namespace, file_search...: no member can run them for the client
            dropped.append(f"{kind} tool" + (f" {t['name']}" if isinstance(t.get("name"), str) else ""))
            continue
        out.append(Tool(name=get(t, "name", str, required=True, where=where),
                        description=get(t, "description", str, default="", where=where),
                        parameters=get(t, "parameters", dict, where=where) or {"type": "object", "properties": {}}))
    return out


def _tool_choice(value):
    if value is None or isinstance(value, str):
        return value
    check(value, dict, "tool_choice")
    if value.get("type") == "function" and isinstance(value.get("name"), str):
        return {"name": value["name"]}
    if value.get("type") in ("auto", "none", "required"):
        return value["type"]
    raise BadRequest("`tool_choice` is not understood.", 'Send "auto", "none", "required" or '
                     '{"type": "function", "name": ...}.')


# ---- render ----------------------------------------------------------------------------------

def usage_dict(u: Usage) -> dict:
    return {"input_tokens": u.input_tokens, "input_tokens_details": {"cached_tokens": u.cache_read_tokens,
                                                                   "cache_write_tokens": u.cache_write_tokens},
            "output_tokens": u.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.total}


def message_item(text: str, item_id: str | None = None, status: str = "completed") -> dict:
    return {"id": item_id or new_id("msg_"), "type": "message", "status": status, "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}


def call_item(call: ToolCall, item_id: str | None = None, status: str = "completed") -> dict:
    return {"id": item_id or new_id("fc_"), "type": "function_call", "status": status, "call_id": call.id,
            "name": call.name, "arguments": call.arguments if status == "in_progress" else call.arguments or "{}"}


def reasoning_item(r: Reasoning, item_id: str | None = None) -> dict:
    item = {"id": item_id or new_id("rs_"), "type": "reasoning",
            "summary": [{"type": "summary_text", "text": r.text}] if r.text else []}
    if r.signature:
        item["encrypted_content"] = r.signature
    return item


def response_object(ctx: ReplyInfo, status: str, output: list, usage: Usage | None, reason: str = "") -> dict:
    """The `response` object, both for a whole reply and inside the stream's lifecycle events."""
    opt = ctx.option
    resp = {"id": "resp_" + ctx.id, "object": "response", "created_at": ctx.created, "status": status,
            "background": False, "error": None, "incomplete_details": None,
            "instructions": opt("instructions"), "max_output_tokens": opt("max_output_tokens"),
            "model": ctx.model, "output": output, "parallel_tool_calls": opt("parallel_tool_calls", default=True),
            "previous_response_id": None, "reasoning": {"effort": opt("reasoning", "effort"), "summary": None},
            "store": False, "temperature": opt("temperature", default=1.0),
            "text": {"format": {"type": "text"}}, "tool_choice": opt("tool_choice", default="auto"),
            "tools": opt("tools", default=[]), "top_p": opt("top_p", default=1.0), "truncation": "disabled",
            "usage": usage_dict(usage) if usage is not None else None, "metadata": opt("metadata", default={})}
    if status == "incomplete":
        resp["incomplete_details"] = {"reason": "max_output_tokens" if reason == LENGTH else "content_filter"}
    return resp


def status_for(reason: str) -> str:
    return {LENGTH: "incomplete", CONTENT_FILTER: "incomplete", ERROR: "failed"}.get(reason, "completed")


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    output = [reasoning_item(r) for r in answer.reasoning]
    if answer.text or not answer.tool_calls:
        output.append(message_item(answer.text))
    output.extend(call_item(c) for c in answer.tool_calls)
    reply = response_object(ctx, status_for(answer.finish_reason), output, answer.usage, answer.finish_reason)
    if reply["status"] == "failed":
        reply["error"] = {"code": "server_error", "message": "The answer ended with an error."}
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply



# ---- stream ----------------------------------------------------------------------------------

class _Writer:
    """Turns Events into Responses SSE events, numbering them and keeping the output items."""

    def __init__(self, ctx: ReplyInfo) -> None:
        self.ctx, self.seq, self.usage = ctx, 0, Usage()
        self.output: list[dict] = []
        self.text: dict | None = None            # the open message or reasoning item
        self.calls: dict[int, dict] = {}         # tool index -> open function_call item state

    def event(self, kind: str, **fields) -> bytes:
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return sse(data, event=kind)

    def lifecycle(self, kind: str, status: str, reason: str = "", extra: dict | None = None) -> bytes:
        resp = response_object(self.ctx, status, self.output, self.usage if status != "in_progress" else None,
                               reason)
        if extra is not None:
            resp["bench"] = extra
        return self.event(kind, response=resp)

    def _open(self, item: dict) -> tuple[dict, bytes]:
        """A new output item: its state, and the `output_item.added` frame to send."""
        state = {"index": len(self.output), "id": item["id"], "kind": item["type"], "chunks": [], "sig": ""}
        self.output.append(item)
        return state, self.event("response.output_item.added", output_index=state["index"], item=item)

    def text_delta(self, kind: str, text: str, signature: str | None = None) -> Iterator[bytes]:
        if self.text and (self.text["kind"] != kind or (kind == "reasoning" and self.text["sig"] and text)):
            yield from self.close_text()
        if not self.text:
            yield from self._open_text(kind)
        st = self.text
        assert st is not None      # _open_text opened it
        if text:
            st["chunks"].append(text)
            name = "response.output_text.delta" if kind == "message" else "response.reasoning_summary_text.delta"
            extra = {"content_index": 0, "logprobs": []} if kind == "message" else {"summary_index": 0}
            yield self.event(name, item_id=st["id"], output_index=st["index"], delta=text, **extra)
        st["sig"] += signature or ""

    def _open_text(self, kind: str) -> Iterator[bytes]:
        if kind == "message":
            self.text, frame = self._open({**message_item("", new_id("msg_"), "in_progress"), "content": []})
            yield frame
            yield self.event("response.content_part.added", item_id=self.text["id"], output_index=self.text["index"],
                             content_index=0, part=_text_part(""))
        else:
            self.text, frame = self._open({"id": new_id("rs_"), "type": "reasoning", "summary": []})
            yield frame
            yield self.event("response.reasoning_summary_part.added", item_id=self.text["id"],
                             output_index=self.text["index"], summary_index=0,
                             part={"type": "summary_text", "text": ""})

    def close_text(self) -> Iterator[bytes]:
        st, self.text = self.text, None
        if not st:
            return
        text, where = "".join(st["chunks"]), {"item_id": st["id"], "output_index": st["index"]}
        if st["kind"] == "message":
            yield self.event("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
            yield self.event("response.content_part.done", **where, content_index=0, part=_text_part(text))
            item = message_item(text, st["id"])
        else:
            part = {"type": "summary_text", "text": text}
            yield self.event("response.reasoning_summary_text.done", **where, summary_index=0, text=text)
            yield self.event("response.reasoning_summary_part.done", **where, summary_index=0, part=part)
            item = {"id": st["id"], "type": "reasoning", "summary": [part]}
            if st["sig"]:
                item["encrypted_content"] = st["sig"]
        self.output[st["index"]] = item
        yield self.event("response.output_item.done", output_index=st["index"], item=item)

    def call_delta(self, index: int, call_id: str | None, name: str | None, args: str) -> Iterator[bytes]:
        yield from self.close_text()
        st = self.calls.get(index)
        if st is None:
            call = ToolCall(id=call_id or new_id("call_"), name=name or "", arguments="")
            st, frame = self._open(call_item(call, new_id("fc_"), "in_progress"))
            st["call"], self.calls[index] = call, st
            yield frame
        if args:
            st["chunks"].append(args)
            yield self.event("response.function_call_arguments.delta", item_id=st["id"],
                             output_index=st["index"], delta=args)

    def close_calls(self) -> Iterator[bytes]:
        for st in sorted(self.calls.values(), key=lambda s: s["index"]):
            call = st["call"]
            call.arguments = "".join(st["chunks"]) or "{}"
            yield self.event("response.function_call_arguments.done", item_id=st["id"], output_index=st["index"],
                             name=call.name, arguments=call.arguments)
            item = call_item(call, st["id"])
            self.output[st["index"]] = item
            yield self.event("response.output_item.done", output_index=st["index"], item=item)
        self.calls = {}


def _text_part(text: str) -> dict:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    w = _Writer(ctx)
    yield w.lifecycle("response.created", "in_progress")
    yield w.lifecycle("response.in_progress", "in_progress")
    finish = Finish()
    for event in events:
        if isinstance(event, TextDelta):
            if event.text:
                yield from w.text_delta("message", event.text)
        elif isinstance(event, ReasoningDelta):
            yield from w.text_delta("reasoning", event.text, event.signature)
        elif isinstance(event, ToolCallDelta):
            yield from w.call_delta(event.index, event.id, event.name, event.arguments)
        elif isinstance(event, UsageEvent):
            w.usage = merge_usage(w.usage, event.usage)
        elif isinstance(event, KeepAlive):
            yield SSE_KEEPALIVE
        elif isinstance(event, ErrorEvent):
            resp = response_object(ctx, "failed", w.output, w.usage)
            err = event.error
            resp["error"] = {"code": getattr(err, "code", "server_error"), "message": error_message(err)}
            yield w.event("response.failed", response=resp)
            return
        elif isinstance(event, Finish):
            finish = event
            break
    closing = [*w.close_text(), *w.close_calls()]
    w.usage = merge_usage(w.usage, finish.usage) if finish.usage else w.usage
    status = status_for(finish.reason)
    kind = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(status, "response.failed")
    extra = finish.extra if finish.extra is not None else ctx.extra
    yield b"".join([*closing, w.lifecycle(kind, status, finish.reason, extra)])   # the last events in one write


def on_stored_response(q: Lookup) -> dict:
    raise NotFound(f"Response {q.params['id']!r} is not stored: this gateway stores no responses.",
                   "Send the whole conversation as input on each request (store is ignored).")


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM


# the ops of its own routes (FormatRoute.op other than "ask")
OPS = {"stored_response": on_stored_response}
load_reply = None                # an empty conversation is a 400 naming CONVERSATION
