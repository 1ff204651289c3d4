"""What each seat of a panel was sent, read from the fakes' logs: its thread (the assistant turns it saw) for the
ask whose last user message is a given prompt."""
from __future__ import annotations

import re

GEMINI_CALL = re.compile(r"/(?:models/)?([^/:]+):(?:generateContent|streamGenerateContent)$")


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _turns(rec) -> tuple[str | None, list[tuple[str, str]]]:
    """(the served model, [(role, text)]) of one recorded upstream request, in any of the fakes' protocols."""
    body = rec.body if isinstance(rec.body, dict) else {}
    if "contents" in body:   # Gemini: the model is in the path
        found = GEMINI_CALL.search(rec.path)
        return (found.group(1) if found else None), [
            ("assistant" if c.get("role") == "model" else c.get("role", "user"), _text(c.get("parts")))
            for c in body["contents"]]
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None, []
    return body.get("model"), [(m.get("role"), _text(m.get("content"))) for m in messages]


def sent(fakes, prompt: str, role: str) -> dict[str, list[str]]:
    """Served model -> the texts of `role` it was sent, in the request whose last user message is `prompt`."""
    out = {}
    for fake in fakes:
        for rec in fake.requests:
            model, turns = _turns(rec)
            users = [t for r, t in turns if r == "user"]
            if model and users and users[-1] == prompt:
                out[model] = [t for r, t in turns if r == role]
    return out


def threads(fakes, prompt: str) -> dict[str, list[str]]:
    """Served model -> the assistant texts (its thread's earlier answers) it was sent with `prompt`."""
    return sent(fakes, prompt, "assistant")


def users_sent(fakes, prompt: str) -> dict[str, list[str]]:
    """Served model -> the user texts it was sent with `prompt`."""
    return sent(fakes, prompt, "user")
