"""Canonical sample asks the adapter tests share: a whole conversation with every kind of part."""
from __future__ import annotations

from benchwarmers.canonical import Ask, Image, Message, Text, Tool, ToolCall, ToolResult

# A 1x1 transparent PNG.
PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
CAT_URL = "https://example.com/cat.jpg"
WEATHER = Tool("weather", "Weather by city", {"type": "object", "properties": {"city": {"type": "string"}},
                                              "required": ["city"], "additionalProperties": False})


def conversation(**kw) -> Ask:
    """System prompt, images (inline and URL), a tool call and its result, a mid-conversation system message."""
    ask = Ask(system="You are terse.", messages=[
        Message("user", [Text("Look at these"), Image(media_type="image/png", data=PNG_B64), Image(url=CAT_URL)]),
        Message("assistant", [Text("Checking the weather."),
                              ToolCall(id="call_1", name="weather", arguments='{"city": "Paris"}')]),
        Message("tool", [ToolResult(id="call_1", content='{"temp": 21}')]),
        Message("system", [Text("Answer in French.")]),
        Message("user", [Text("And tomorrow?")]),
    ], tools=[WEATHER], tool_choice="auto", max_tokens=100, temperature=0.2, top_p=0.9, stop=["END"])
    for name, value in kw.items():
        setattr(ask, name, value)
    return ask


def parallel_tools() -> Ask:
    """Two calls in one assistant turn, answered by two results (one an error), then a user turn."""
    return Ask(messages=[
        Message("user", [Text("Weather in Paris and Rome?")]),
        Message("assistant", [ToolCall(id="c1", name="weather", arguments='{"city": "Paris"}'),
                              ToolCall(id="c2", name="weather", arguments='{"city": "Rome"}')]),
        Message("tool", [ToolResult(id="c1", content="21C")]),
        Message("tool", [ToolResult(id="c2", content="service down", is_error=True)]),
        Message("user", [Text("Thanks")]),
    ], tools=[WEATHER])
