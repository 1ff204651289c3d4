"""The built-in upstream client: one adapter per protocol, chosen by name from a plain registry."""
from __future__ import annotations

from ..errors import BadRequest
from .anthropic import AnthropicProvider
from .base import Provider, Timeouts
from .gemini import GeminiProvider
from .ollama import OllamaProvider
from .openai import OpenAIProvider
from .ratelimits import RateLimitBook, parse_rate_limit_headers
from .transport import Transport, default_transport

PROVIDERS: dict[str, type[Provider]] = {
    "openai": OpenAIProvider,
    "anthropic": AnthropicProvider,
    "gemini": GeminiProvider,
    "ollama": OllamaProvider,
}

__all__ = ["PROVIDERS", "make_provider", "Provider", "Timeouts", "Transport", "default_transport",
           "RateLimitBook", "parse_rate_limit_headers"]


def make_provider(api: str, base_url: str, key: str | None, *, name: str = "",
                  transport: Transport | None = None) -> Provider:
    """The adapter for `api` talking to `base_url` (empty: the protocol's public default) with `key`."""
    cls = PROVIDERS.get((api or "").strip().lower())
    if cls is None:
        raise BadRequest(f"unknown endpoint protocol {api!r}",
                         f"Use one of: {', '.join(sorted(PROVIDERS))}.")
    return cls(base_url, key, name=name, transport=transport)
