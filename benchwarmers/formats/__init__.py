"""The client formats, by name: each parses a request into an Ask and renders Answers and Events back."""
from __future__ import annotations

from types import ModuleType

from ..errors import NotFound
from . import anthropic, gemini, ollama, openai_chat, openai_completions, openai_responses
from .base import ReplyInfo, RequestInfo

FORMATS: dict[str, ModuleType] = {m.NAME: m for m in (openai_chat, openai_responses, openai_completions,
                                                      anthropic, gemini, ollama)}

__all__ = ["FORMATS", "get", "stream_content_type", "ReplyInfo", "RequestInfo"]


def get(name: str) -> ModuleType:
    try:
        return FORMATS[name]
    except KeyError:
        raise NotFound(f"No client format named {name!r}.", f"Use one of: {', '.join(sorted(FORMATS))}.") from None


def stream_content_type(module: ModuleType, ctx: ReplyInfo) -> str:
    """The Content-Type of a streamed reply (Gemini's depends on `?alt=sse`)."""
    pick = getattr(module, "stream_content_type", None)
    return pick(ctx) if pick else module.CONTENT_TYPE_STREAM
