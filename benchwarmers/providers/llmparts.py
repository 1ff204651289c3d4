"""An Ask as the `llm` package takes it (messages, tools, options), and llm's stream events as canonical events."""
from __future__ import annotations

import base64
import binascii

from ..canonical import Ask, Image, ReasoningDelta, Text, TextDelta, ToolCall, ToolCallDelta, ToolResult
from ..errors import FaultKind, UpstreamFailed
from .requestparts import new_call_id, system_prompt
# The Ask's sampling fields, by the name llm's option classes give them (a model declaring none gets none).
OPTIONS = ("max_tokens", "temperature", "top_p")


def messages(llm, ask: Ask) -> list:
    """The conversation as llm Messages: the system prompt first, then each turn with its text, images, tool calls
    and tool results (reasoning from earlier turns is not carried)."""
    out = []
    system = system_prompt(ask)
    if system:
        out.append(llm.system(system))
    for m in ask.messages:
        if m.role == "system":
            continue                      # folded into the system prompt above
        parts = [p for p in (part(llm, p) for p in m.parts) if p is not None]
        if parts:
            out.append(llm.Message(role=m.role, parts=parts))
    return out


def part(llm, p):
    from llm.parts import TextPart, ToolCallPart, ToolResultPart
    if isinstance(p, Text):
        return TextPart(text=p.text)
    if isinstance(p, Image):
        return attachment(llm, p)
    if isinstance(p, ToolCall):
        return ToolCallPart(name=p.name, arguments=p.args(), tool_call_id=p.id)
    if isinstance(p, ToolResult):
        return ToolResultPart(name=p.name or "", output=p.content, tool_call_id=p.id)
    return None


def attachment(llm, image: Image):
    from llm.parts import AttachmentPart
    if image.data:
        try:
            content = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError):
            raise UpstreamFailed(FaultKind.BAD_REQUEST, "an image's base64 data does not decode") from None
        return AttachmentPart(attachment=llm.Attachment(type=image.media_type, content=content))
    return AttachmentPart(attachment=llm.Attachment(url=image.url))


def tools(llm, ask: Ask) -> list:
    """The client's tools, declared to the model and never run here: the agent runs them (implementation=None)."""
    return [llm.Tool(name=t.name, description=t.description or None, input_schema=t.parameters,
                     implementation=None) for t in ask.tools]


def options(model, ask: Ask) -> dict:
    """The sampling settings the model's own options declare; one stop sequence where it takes one."""
    declared = getattr(getattr(model, "Options", None), "model_fields", {}) or {}
    out = {name: getattr(ask, name) for name in OPTIONS if name in declared and getattr(ask, name) is not None}
    if "stop" in declared and len(ask.stop) == 1:
        out["stop"] = ask.stop[0]
    return out


class Events:
    """llm's StreamEvents as canonical events; tool calls numbered in the order they start."""

    def __init__(self):
        self.calls: dict[str, int] = {}

    def convert(self, ev):
        kind, chunk = getattr(ev, "type", "text"), getattr(ev, "chunk", ev)
        if kind == "text":
            return TextDelta(chunk) if chunk else None
        if kind == "reasoning":
            return ReasoningDelta(chunk) if chunk else None
        if kind in ("tool_call_name", "tool_call_args") and not getattr(ev, "server_executed", False):
            key = ev.tool_call_id or f"#{len(self.calls)}"
            if kind == "tool_call_name" or key not in self.calls:
                index = self.calls.setdefault(key, len(self.calls))
                return ToolCallDelta(index, id=ev.tool_call_id or new_call_id(),
                                     name=chunk if kind == "tool_call_name" else None,
                                     arguments="" if kind == "tool_call_name" else chunk)
            return ToolCallDelta(self.calls[key], arguments=chunk)
        return None                       # a tool the provider ran itself, or a kind this version does not know
