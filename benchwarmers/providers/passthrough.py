"""Same-API pass-through: which fields of a client's own body may reach a member of that API; the rest is dropped.

Route mode sends an agent's body as it came when client and member speak the same API, so what the canonical form
cannot hold (thinking signatures, cache_control, Gemini thoughtSignature) survives. Only the fields below go
through. Everything else is dropped and recorded, above all what would spend money or reach further than the
model asked: OpenRouter's `models` and `provider` fallbacks, `n` above 1, Anthropic `mcp_servers`, `container`
and server tools, `service_tier`, Gemini `cachedContent` and `candidateCount` above 1. GATEWAY.md lists them."""
from __future__ import annotations

from typing import Callable

FIELDS: dict[str, frozenset] = {
    "openai": frozenset({
        "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature",
        "top_p", "stop", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call",
        "response_format", "seed", "presence_penalty", "frequency_penalty", "reasoning_effort", "n"}),
    "anthropic": frozenset({
        "model", "messages", "system", "max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences",
        "tools", "tool_choice", "thinking", "metadata", "context_management", "output_config"}),
    "gemini": frozenset({
        "contents", "systemInstruction", "system_instruction", "tools", "toolConfig", "tool_config",
        "generationConfig", "generation_config", "safetySettings", "safety_settings"}),
    "ollama": frozenset({"model", "messages", "stream", "tools", "options", "format", "think"}),
}


def _function_tool(tool) -> bool:
    return isinstance(tool, dict) and tool.get("type", "function") == "function"


def _anthropic_client_tool(tool) -> bool:
    return isinstance(tool, dict) and tool.get("type") in (None, "custom")   # the others run on Anthropic's servers


def _gemini_function_tool(tool) -> bool:
    return isinstance(tool, dict) and bool(tool) and set(tool) <= {"functionDeclarations", "function_declarations"}


# Which entries of `tools` are the client's own functions; server tools (web search, code execution, MCP
# connectors) would run, and bill, upstream.
CLIENT_TOOLS: dict[str, Callable[[object], bool]] = {
    "openai": _function_tool, "anthropic": _anthropic_client_tool, "gemini": _gemini_function_tool,
    "ollama": _function_tool,
}


def _tool_kind(tool) -> str:
    if isinstance(tool, dict):
        return str(tool.get("type") or next(iter(tool), "?"))
    return type(tool).__name__


def native_body(api: str, body: dict) -> tuple[dict, list[str]]:
    """(what may be sent to a member of `api`, what was dropped: "field x", "web_search tool", "n=50", ...)."""
    allowed = FIELDS.get(api, frozenset())
    out = {k: v for k, v in body.items() if k in allowed}
    dropped = [f"field {k}" for k in body if k not in allowed and k != "bench"]
    if isinstance(out.get("tools"), list):
        keep = CLIENT_TOOLS.get(api, _function_tool)
        dropped += [f"{_tool_kind(t)} tool" for t in out["tools"] if not keep(t)]
        out["tools"] = [t for t in out["tools"] if keep(t)]
    if out.get("n", 1) != 1:
        dropped.append(f"n={out.pop('n')}")
    for config in ("generationConfig", "generation_config"):
        if isinstance(out.get(config), dict) and out[config].get("candidateCount", 1) != 1:
            out[config] = {k: v for k, v in out[config].items() if k != "candidateCount"}
            dropped.append(f"{config}.candidateCount={body[config]['candidateCount']}")
    return out, dropped
