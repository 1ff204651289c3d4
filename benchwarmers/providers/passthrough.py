"""Same-API pass-through: which fields of a client's own body may reach a member of that API; the rest is dropped.

Route mode sends an agent's body as it came when client and member speak the same API, so what the canonical form
cannot hold (thinking signatures, cache_control, Gemini thoughtSignature) survives. Only the fields its provider
class names go through (`passthrough_fields`, and of `tools` what `client_tool` says is the client's own function).
Everything else is dropped and recorded, above all what would spend money or reach further than the model asked:
OpenRouter's `models` and `provider` fallbacks, `n` above 1, Anthropic `mcp_servers`, `container`
and server tools, `service_tier`, Gemini `cachedContent` and `candidateCount` above 1. GATEWAY.md lists them."""
from __future__ import annotations


def function_tool(tool) -> bool:
    """An entry of `tools` that is the client's own function (OpenAI's and Ollama's shape)."""
    return isinstance(tool, dict) and tool.get("type", "function") == "function"


def _tool_kind(tool) -> str:
    if isinstance(tool, dict):
        return str(tool.get("type") or next(iter(tool), "?"))
    return type(tool).__name__


def native_body(api: str, body: dict) -> tuple[dict, list[str]]:
    """(what may be sent to a member of `api`, what was dropped: "field x", "web_search tool", "n=50", ...)."""
    from . import PROVIDERS           # late: the provider classes import this module
    cls = PROVIDERS.get(api)
    allowed = cls.passthrough_fields if cls else frozenset()
    out = {k: v for k, v in body.items() if k in allowed}
    dropped = [f"field {k}" for k in body if k not in allowed and k != "bench"]
    if isinstance(out.get("tools"), list):
        keep = cls.client_tool if cls else function_tool
        dropped += [f"{_tool_kind(t)} tool" for t in out["tools"] if not keep(t)]
        out["tools"] = [t for t in out["tools"] if keep(t)]
    if out.get("n", 1) != 1:
        dropped.append(f"n={out.pop('n')}")
    for config in ("generationConfig", "generation_config"):
        if isinstance(out.get(config), dict) and out[config].get("candidateCount", 1) != 1:
            out[config] = {k: v for k, v in out[config].items() if k != "candidateCount"}
            dropped.append(f"{config}.candidateCount={body[config]['candidateCount']}")
    return out, dropped
