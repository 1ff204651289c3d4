"""What the adapters share to build a request from canonical messages: images, system prompts, tool-call names."""
from __future__ import annotations

import secrets
from typing import Callable

from ..canonical import Ask, Image, Message, Text, ToolCall, ToolResult


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


def inline_image(image: Image) -> tuple[str, str] | None:
    """(media type, base64 data) for an inline image, including a data: URL; None for a web URL."""
    if image.data:
        return image.media_type, image.data
    url = image.url or ""
    if url.startswith("data:") and "," in url:
        head, data = url[5:].split(",", 1)
        media = head.split(";")[0] or image.media_type
        return media, data
    return None


def image_note(image: Image) -> str:
    """What an API that cannot take image URLs gets instead of the image (we never fetch for it)."""
    return f"[image: {image.url}]"


def system_prompt(ask: Ask) -> str:
    """The system prompt with every mid-conversation system message folded in, in order."""
    chunks = [ask.system] if ask.system else []
    chunks += [m.text() for m in ask.messages if m.role == "system" and m.text()]
    return "\n\n".join(chunks)


def call_names(messages: list[Message]) -> dict[str, str]:
    """call id -> function name, for APIs whose tool results name the function rather than the call."""
    return {p.id: p.name for m in messages for p in m.parts if isinstance(p, ToolCall)}


def split_parts(message: Message) -> tuple[list, list, list]:
    """(content parts: text and images, tool calls, tool results) of one message."""
    content: list = []
    calls: list = []
    results: list = []
    for p in message.parts:            # one pass, not three (each message of each seat's request); the kinds are apart
        if isinstance(p, (Text, Image)):
            content.append(p)
        elif isinstance(p, ToolCall):
            calls.append(p)
        elif isinstance(p, ToolResult):
            results.append(p)
    return content, calls, results


def chat_messages(ask: Ask, tool_message: Callable[[ToolResult], dict],
                  message: Callable[[Message, list, list], dict | None]) -> list[dict]:
    """The messages of a chat API that takes system messages where they stand (OpenAI's, Ollama's): the system prompt
    first; of each other message, its tool results as `tool_message(result)` each, then the rest as
    `message(it, its content parts, its tool calls)` (None: nothing of it to send)."""
    out = [{"role": "system", "content": ask.system}] if ask.system else []
    for m in ask.messages:
        content, calls, results = split_parts(m)
        if m.role == "system":
            if m.text():
                out.append({"role": "system", "content": m.text()})
            continue
        for r in results:
            out.append(tool_message(r))
        msg = message(m, content, calls)
        if msg is not None:
            out.append(msg)
    return out
