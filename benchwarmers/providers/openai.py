"""OpenAI-compatible chat completions (OpenAI, OpenRouter, Groq, vLLM, LiteLLM, Ollama's /v1, ...)."""
from __future__ import annotations

from ..canonical import (CONTENT_FILTER, LENGTH, STOP, TOOL_CALLS, Answer, Ask, Finish, Image, Message, Reasoning,
                         ReasoningDelta, Text, TextDelta, ToolCall, ToolCallDelta, ToolResult, Usage, UsageEvent,
                         merge_usage)
from ..errors import FaultKind, UpstreamFailed
from ..redaction import answer_secrets, scrub_whole
from .base import Provider
from .framing import is_whole, iter_sse, load_json
from .passthrough import function_tool
from .requestparts import chat_messages

FINISH = {"stop": STOP, "length": LENGTH, "tool_calls": TOOL_CALLS, "function_call": TOOL_CALLS,
          "content_filter": CONTENT_FILTER}


class OpenAIProvider(Provider):
    api = "openai"
    title = "OpenAI-compatible"
    supports = {"tools": True, "vision": True, "image_urls": True, "stream_usage": True, "reasoning": True}
    default_base = "https://api.openai.com/v1"
    passthrough_fields = frozenset({
        "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature",
        "top_p", "stop", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call",
        "response_format", "seed", "presence_penalty", "frequency_penalty", "reasoning_effort", "n"})
    client_tool = staticmethod(function_tool)

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    # ---- request ------------------------------------------------------------------------------
    def stream_head(self, model: str) -> tuple[str, dict]:
        head: dict = {"model": model, "stream": True}
        if self.supports.get("stream_usage"):
            head["stream_options"] = {"include_usage": True}
        return f"{self.base}/chat/completions", head

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        url, body = self.stream_head(model)
        body["messages"] = messages(ask)
        sampling = self.supports.get("sampling", True)
        limit = "max_completion_tokens" if self.supports.get("max_completion_tokens") else "max_tokens"
        if ask.tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in ask.tools]
            if ask.tool_choice is not None:
                body["tool_choice"] = tool_choice(ask.tool_choice)
        for field, value in ((limit, ask.max_tokens), ("temperature", ask.temperature if sampling else None),
                             ("top_p", ask.top_p if sampling else None), ("stop", ask.stop or None)):
            if value is not None:
                body[field] = value
        return url, body

    def limit_native(self, body: dict, max_tokens: int) -> None:
        newer = "max_completion_tokens" in body or (self.supports.get("max_completion_tokens") and
                                                    "max_tokens" not in body)
        body["max_completion_tokens" if newer else "max_tokens"] = max_tokens

    def adapt(self, body: dict | None, exc: UpstreamFailed) -> dict | None:
        """Servers that refuse a parameter we chose get the request again without it (Provider.send), and we
        remember: the body without what a 400 says this server cannot take; None when nothing is to be done."""
        text = exc.message.lower()
        if not body or exc.kind is not FaultKind.BAD_REQUEST:
            return None
        if "stream_options" in text and "stream_options" in body:       # older compatible servers
            self.supports["stream_usage"] = False
            return {k: v for k, v in body.items() if k != "stream_options"}
        if "max_completion_tokens" in text and "max_tokens" in body:    # OpenAI reasoning models
            self.supports["max_completion_tokens"] = True
            return {("max_completion_tokens" if k == "max_tokens" else k): v for k, v in body.items()}
        if ("temperature" in text or "top_p" in text) and ("unsupported" in text or "not support" in text) \
                and ({"temperature", "top_p"} & set(body)):
            self.supports["sampling"] = False                           # only the default is allowed
            return {k: v for k, v in body.items() if k not in ("temperature", "top_p")}
        return None

    # ---- response -----------------------------------------------------------------------------
    def events(self, response, meta):
        if is_whole(response):                   # asked for whole, or a server that ignored stream: true
            yield from whole(self, load_json(response.read()), meta)
            return
        finish, done, calls = None, False, False
        for _event, data in iter_sse(response.pieces()):
            if data.strip() == "[DONE]":
                done = True
                response.finish()
                break
            chunk = load_json(data, "stream chunk")
            if chunk.get("error"):
                raise self.chunk_error(chunk["error"])
            if "model" not in meta:     # the first chunk's (every chunk repeats it)
                meta["model"] = chunk.get("model")
            if "usage" in chunk and chunk["usage"]:   # `in` first: most chunks have none (a call fewer a chunk)
                yield UsageEvent(usage(chunk["usage"]))
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                content = delta.get("content")   # first: a delta that is no object fails here, as it always did
                if "reasoning_content" in delta or "reasoning" in delta:   # (most chunks: neither)
                    thought = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(thought, str) and thought:
                        yield ReasoningDelta(thought)
                if content:
                    yield TextDelta(content)
                for position, tc in enumerate((delta["tool_calls"] or []) if "tool_calls" in delta else ()):
                    fn = tc.get("function") or {}
                    calls = True
                    yield ToolCallDelta(index=tc.get("index", position), id=tc.get("id"), name=fn.get("name"),
                                        arguments=fn.get("arguments") or "")
                finish = choice.get("finish_reason") or finish
        if not done and finish is None:
            raise self.dropped("[DONE] or a finish_reason")
        yield Finish(reason=finish_reason(finish, calls))

    def answer_of(self, response, meta):
        """A chat.completion body's Answer built straight from it (answer()); a stream, or a body of another shape,
        read as events."""
        if not is_whole(response):
            return self.events(response, meta)
        body = load_json(response.read())
        built = answer(self, body, meta)
        return whole(self, body, meta) if built is None else built

    def chunk_error(self, error) -> UpstreamFailed:
        error = error if isinstance(error, dict) else {"message": str(error)}
        code = error.get("code")
        status = code if isinstance(code, int) else None
        message = str(error.get("message") or error)
        kind = self.classify(status, message, error) if status else (
            FaultKind.RATE_LIMITED if "rate" in str(code or error.get("type") or "") else FaultKind.SERVER)
        return self.stream_failure(kind, message, status)

    # ---- models -------------------------------------------------------------------------------
    def models_url(self) -> str:
        return f"{self.base}/models"

    def parse_models(self, body):
        rows = body if isinstance(body, list) else body.get("data") or body.get("models") or []
        return [model_facts(m) for m in rows if isinstance(m, dict) and m.get("id")], None


def whole(provider: OpenAIProvider, body: dict, meta: dict):
    """Events from a non-streamed chat.completion body."""
    if body.get("error"):
        raise provider.chunk_error(body["error"])
    meta.setdefault("model", body.get("model"))
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    thought = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(thought, str) and thought:
        yield ReasoningDelta(thought)
    if message.get("content"):
        yield TextDelta(message["content"])
    calls = message.get("tool_calls") or []
    for i, tc in enumerate(calls):
        fn = tc.get("function") or {}
        yield ToolCallDelta(index=i, id=tc.get("id"), name=fn.get("name"), arguments=fn.get("arguments") or "")
    if body.get("usage"):
        yield UsageEvent(usage(body["usage"]))
    yield Finish(reason=finish_reason(choice.get("finish_reason"), bool(calls)))


def answer(provider: OpenAIProvider, body, meta: dict) -> Answer | None:
    """What whole()'s events, scrubbed, fold to (Collector), from a plain chat.completion body; None for a body of
    another shape (not a dict, an error, content or arguments that are not text, ...), which whole() reads (or
    fails on) as it always did."""
    if type(body) is not dict or ("error" in body and body["error"]):   # (`in`: no get() for a body without one)
        return None
    choices = body.get("choices") or [{}]
    choice = choices[0] if type(choices) is list else None
    message = choice.get("message") or {} if type(choice) is dict else None
    if type(message) is not dict:
        return None
    assert choice is not None      # a dict: its message is one
    content = message.get("content") or ""
    calls = message.get("tool_calls") or []
    if type(content) is not str or type(calls) is not list:
        return None
    secrets = answer_secrets(provider.key)
    tool_calls = []
    for tc in calls:
        fn = tc.get("function") or {} if type(tc) is dict else None
        if type(fn) is not dict or type(arguments := fn.get("arguments") or "") is not str:
            return None
        if secrets:
            arguments = scrub_whole(arguments, secrets)
        tool_calls.append(ToolCall(id=tc.get("id") or "", name=fn.get("name") or "", arguments=arguments or "{}"))
    meta.setdefault("model", body.get("model"))
    reasoning = []
    if "reasoning_content" in message or "reasoning" in message:   # (most answers have none: no get()s for it)
        thought = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(thought, str) and thought:
            reasoning.append(Reasoning(scrub_whole(thought, secrets) if secrets else thought))
    # the Answer made once its usage is known (not with an empty Usage made to be replaced)
    reported = body.get("usage")   # merged into nothing, as the Collector merges a UsageEvent
    counts = merge_usage(Usage(), usage(reported)) if reported else Usage()
    return Answer(scrub_whole(content, secrets) if secrets else content, tool_calls, reasoning, counts,
                  finish_reason(choice.get("finish_reason"), bool(calls)))


def finish_reason(raw: str | None, had_calls: bool) -> str:
    try:   # ([] rather than get(): a call less an answer)
        reason = FINISH[raw or "stop"]
    except KeyError:
        reason = STOP
    return TOOL_CALLS if had_calls and reason == STOP else reason


def usage(u: dict) -> Usage:
    details = u.get("prompt_tokens_details") or {}
    return Usage(input_tokens=int(u.get("prompt_tokens") or 0), output_tokens=int(u.get("completion_tokens") or 0),
                 cache_read_tokens=int(details.get("cached_tokens") or 0),
                 cache_write_tokens=int(details.get("cache_write_tokens") or 0))


def tool_choice(choice):
    if isinstance(choice, dict) and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


def user_content(parts: list):
    if len(parts) == 1 and type(parts[0]) is Text and type(parts[0].text) is str:   # the usual turn: no generators
        return parts[0].text
    if all(isinstance(p, Text) for p in parts):        # separate blocks stay separate paragraphs
        return "\n".join(p.text for p in parts)
    out: list[dict] = []
    for p in parts:
        if isinstance(p, Text):
            out.append({"type": "text", "text": p.text})
        elif isinstance(p, Image):
            out.append({"type": "image_url", "image_url": {"url": p.data_url()}})
    return out


def messages(ask: Ask) -> list[dict]:
    """Canonical messages in chat-completions form; system messages stay where they are (a valid role). The usual
    turn, one Text, is built here as chat_messages builds it (each seat builds its own body: no split, no helper
    calls a message); a conversation with any other turn goes through chat_messages whole."""
    out = [{"role": "system", "content": ask.system}] if ask.system else []
    for m in ask.messages:
        parts = m.parts
        if len(parts) != 1 or type(part := parts[0]) is not Text or type(text := part.text) is not str:
            return chat_messages(ask, _tool_message, _message)
        role = m.role
        if role == "system" or role == "assistant":     # an empty one is left out
            if text:
                out.append({"role": role, "content": text})
        else:
            out.append({"role": "user", "content": text})
    return out


def _tool_message(r: ToolResult) -> dict:
    return {"role": "tool", "tool_call_id": r.id, "content": f"Error: {r.content}" if r.is_error else r.content}


def _message(m: Message, content: list, calls: list) -> dict | None:
    if m.role != "assistant":
        return {"role": "user", "content": user_content(content)} if content else None
    text = "\n".join(p.text for p in content if isinstance(p, Text))
    if not (text or calls):
        return None
    msg: dict = {"role": "assistant", "content": text or None}
    if calls:
        msg["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": c.arguments or "{}"}} for c in calls]
    return msg


def model_facts(m: dict) -> dict:
    """{"id", and what the list says: context_window, max_output, vision, tools} (OpenRouter says most)."""
    top = m.get("top_provider") or {}
    arch = m.get("architecture") or {}
    facts = {"id": m["id"]}
    context = m.get("context_length") or m.get("context_window") or m.get("max_model_len") or top.get("context_length")
    output = top.get("max_completion_tokens") or m.get("max_completion_tokens") or m.get("max_output_tokens")
    if context:
        facts["context_window"] = int(context)
    if output:
        facts["max_output"] = int(output)
    if isinstance(arch.get("input_modalities"), list):
        facts["vision"] = "image" in arch["input_modalities"]
    if isinstance(m.get("supported_parameters"), list):
        facts["tools"] = "tools" in m["supported_parameters"]
    return facts
