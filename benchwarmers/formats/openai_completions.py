"""OpenAI legacy completions (POST /v1/completions): a prompt in, `text_completion` objects out."""
from __future__ import annotations

from typing import Iterable, Iterator

from ..canonical import Answer, Ask, Finish, Message, Target, Text, TextDelta, Usage, merge_usage
from ..errors import BadRequest
from .base import (BOOL, STRING, FormatRoute, Parsed, ReplyInfo, RequestInfo, get, number, parsed,
                   positive_int, require_object, schema, sse, string_list, with_models)
from .openai_chat import ERROR_SCHEMA, aside, error_body, usage_dict  # same error shape, usage and stream as chat

NAME = "openai_completions"
CONTENT_TYPE_STREAM = "text/event-stream"
SHAPE = "openai"
PATHS = r"/v1/completions"
NATIVE_API = None                # no member takes a legacy completions body as it came
CONVERSATION = "prompt"
PREFIXES = ("/v1",)
ROUTES = (FormatRoute("POST", "/v1/completions", "ask", summary="OpenAI legacy completions: a prompt (a list is "
                      "joined into one) to a panel, :merged or one model.",
                      body=schema(("model", "prompt"), model=STRING, prompt={"type": ["string", "array"]},
                                  stream=BOOL)),)
__all__ = ["NAME", "CONTENT_TYPE_STREAM", "ERROR_SCHEMA", "parse", "render", "stream", "error_body"]
FINISH = {"length": "length", "content_filter": "content_filter"}   # no tools here: the rest is "stop"


def parse(body: dict, ctx: RequestInfo) -> Parsed:
    body = require_object(body)
    model = get(body, "model", str, required=True)
    prompt = _prompt(body.get("prompt"))
    ask = Ask(messages=[Message(role="user", parts=[Text(prompt)])], target=Target.parse(model),
              with_models=with_models(body))
    ask.max_tokens = positive_int(body, "max_tokens")
    ask.temperature = number(body, "temperature")
    ask.top_p = number(body, "top_p")
    ask.stop = string_list(body.get("stop"), "stop")
    stream = bool(get(body, "stream", bool, default=False))
    dropped = [key for key in ("suffix", "echo", "logprobs", "best_of") if body.get(key) not in (None, False, 1)]
    if get(body, "n", int, default=1) != 1:      # checked as chat completions checks it
        dropped.append("n (only one choice is returned)")
    return parsed(ask, NAME, stream, body, ctx, NATIVE_API, dropped)


def _prompt(prompt) -> str:
    """A string or a list of strings (joined by newlines); token ids cannot be read without a tokenizer."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return "\n".join(prompt)
    if isinstance(prompt, list) and prompt and all(isinstance(p, (int, list)) for p in prompt):
        raise BadRequest("`prompt` as token ids is not supported: the gateway has no tokenizer.",
                         "Send `prompt` as a string or a list of strings.")
    raise BadRequest("`prompt` is required and must be a string or a list of strings.",
                     'Send e.g. "prompt": "Say hello".')


def render(answer: Answer, ctx: ReplyInfo) -> dict:
    reply = {"id": "cmpl-" + ctx.id, "object": "text_completion", "created": ctx.created, "model": ctx.model,
             "choices": [{"text": answer.text, "index": 0, "logprobs": None,
                          "finish_reason": FINISH.get(answer.finish_reason, "stop")}],
             "usage": usage_dict(answer.usage)}
    if ctx.extra is not None:
        reply["bench"] = ctx.extra
    return reply


def _chunk(ctx: ReplyInfo, text: str, finish: str | None = None) -> dict:
    return {"id": "cmpl-" + ctx.id, "object": "text_completion", "created": ctx.created, "model": ctx.model,
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]}


def stream(events: Iterable, ctx: ReplyInfo) -> Iterator[bytes]:
    yield sse(_chunk(ctx, ""))     # the reply starts at once
    usage = Usage()
    finish = Finish()
    for event in events:
        if isinstance(event, TextDelta):
            if event.text:
                yield sse(_chunk(ctx, event.text))
        elif isinstance(event, Finish):
            finish = event
            break
        else:
            usage, frames, over = aside(event, usage)
            yield from frames
            if over:
                return
    usage = merge_usage(usage, finish.usage) if finish.usage else usage
    last = _chunk(ctx, "", FINISH.get(finish.reason, "stop"))
    extra = finish.extra if finish.extra is not None else ctx.extra
    if extra is not None:
        last["bench"] = extra
    yield sse(last)
    if ctx.option("stream_options", "include_usage"):
        tail = _chunk(ctx, "")
        tail["choices"], tail["usage"] = [], usage_dict(usage)
        yield sse(tail)
    yield sse("[DONE]")


def stream_content_type(ctx: ReplyInfo) -> str:
    return CONTENT_TYPE_STREAM


OPS: dict = {}                   # no route of its own: every route asks
load_reply = None                # an empty conversation is a 400 naming CONVERSATION
