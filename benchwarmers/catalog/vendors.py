"""Which catalog provider an endpoint is, from its base URL; where to add the providers the catalog knows; and
the providers whose free models work only in their own app (APP_ONLY)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..baseurls import suggestable

LOCAL = "local"          # a server on this machine: its models cost nothing and its names prove nothing
LOOPBACK = ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Known:
    id: str                          # the provider's id at models.dev
    name: str
    base: str                        # the base URL to give `bench endpoint add`
    api: str = "openai"              # the protocol Benchwarmers speaks to it
    hosts: tuple = ()                # other host[/path] prefixes that are this provider
    freellmapi: str | None = None    # FreeLLMAPI's name for it


# Providers whose models.dev entry names no base URL (they have their own SDKs), and the free tiers
# FreeLLMAPI lists. Cloudflare's URL holds the account id, so only its host is matched.
KNOWN = {k.id: k for k in (
    Known("openai", "OpenAI", "https://api.openai.com/v1"),
    Known("anthropic", "Anthropic", "https://api.anthropic.com", "anthropic"),
    Known("google", "Google Gemini API", "https://generativelanguage.googleapis.com/v1beta", "gemini",
          freellmapi="google"),
    Known("groq", "Groq", "https://api.groq.com/openai/v1", freellmapi="groq"),
    Known("cerebras", "Cerebras", "https://api.cerebras.ai/v1", freellmapi="cerebras"),
    Known("mistral", "Mistral", "https://api.mistral.ai/v1", freellmapi="mistral"),
    Known("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", freellmapi="openrouter"),
    Known("github-models", "GitHub Models", "https://models.github.ai/inference", freellmapi="github"),
    Known("nvidia", "NVIDIA NIM", "https://integrate.api.nvidia.com/v1", freellmapi="nvidia"),
    Known("huggingface", "Hugging Face", "https://router.huggingface.co/v1", freellmapi="huggingface"),
    Known("zai", "Z.AI", "https://api.z.ai/api/paas/v4", hosts=("open.bigmodel.cn",), freellmapi="zhipu"),
    Known("deepseek", "DeepSeek", "https://api.deepseek.com"),
    Known("opencode", "OpenCode Zen", "https://opencode.ai/zen/v1", freellmapi="opencode"),
    Known("ollama-cloud", "Ollama Cloud", "https://ollama.com/v1", freellmapi="ollama"),
    Known("cloudflare-workers-ai", "Cloudflare Workers AI",
          "https://api.cloudflare.com/client/v4/accounts/ACCOUNT_ID/ai/v1", hosts=("api.cloudflare.com",),
          freellmapi="cloudflare"),
)}
BY_FREELLMAPI = {k.freellmapi: k.id for k in KNOWN.values() if k.freellmapi}


@dataclass(frozen=True)
class AppOnly:
    id: str                          # the provider's id at models.dev
    name: str
    app: str                         # the only app its free models answer
    why: str                         # what the provider's own documents or answers say
    doc: str


# Providers whose free models answer only their own app. Discover leaves those free models out and explore
# seats pass them over, unless the user switches the provider on (overrides.json: providers.ID.use_free), say
# for an endpoint that reaches the provider through its app. Their paid models are not affected.
APP_ONLY = {a.id: a for a in (
    AppOnly("opencode", "OpenCode Zen", "OpenCode",
            "OpenCode Zen's docs call its free models free on OpenCode for a limited time, and its gateway answers "
            "other apps with 403: OpenCode's free tier can only be used from within OpenCode. Its paid models take "
            "an API key from any app.", "https://opencode.ai/docs/zen"),
    AppOnly("github-copilot", "GitHub Copilot", "GitHub Copilot",
            "A Copilot plan pays for these models (the catalog lists them at price 0); GitHub documents them inside "
            "Copilot's own editors, CLI and website, with no API key for other apps.",
            "https://docs.github.com/en/copilot/reference/ai-models/supported-models"),
)}


def url_key(url: str) -> str:
    """'https://API.groq.com/openai/v1/' -> 'api.groq.com/openai/v1': what base URLs are compared by."""
    split = urlsplit(url if "://" in url else "https://" + url)
    return ((split.hostname or "") + split.path.rstrip("/")).lower()


def prefixes(catalog_providers: dict) -> list[tuple[str, str]]:
    """(url key, provider id), longest first: our table, then every base URL models.dev names."""
    pairs = []
    for known in KNOWN.values():
        pairs += [(url_key(known.base), known.id)] + [(url_key(h), known.id) for h in known.hosts]
    for pid, provider in catalog_providers.items():
        if provider.get("api"):
            pairs.append((url_key(provider["api"]), pid))
    return sorted(pairs, key=lambda p: -len(p[0]))


def match(base_url: str, pairs: list[tuple[str, str]]) -> str | None:
    """The provider serving at base_url: the longest known prefix of it, else the only provider on its host;
    LOCAL for a server on this machine that matches nothing; None when unknown."""
    key = url_key(base_url)
    host = key.split("/", 1)[0]
    for prefix, pid in pairs:
        if key == prefix or key.startswith(prefix + "/"):
            return pid
    on_host = {pid for prefix, pid in pairs if prefix.split("/", 1)[0] == host}
    if len(on_host) == 1:
        return on_host.pop()
    if host in LOOPBACK or host.startswith("127."):
        return LOCAL
    return None


def add_argv(pid: str, base: str, api: str = "openai") -> list[str]:
    """The `bench endpoint add` that adds a provider, as its words (a client quotes them for its own shell)."""
    return ["bench", "endpoint", "add", pid, "--base", base] + (["--api", api] if api != "openai" else [])


def describe(pid: str, catalog_providers: dict) -> dict:
    """Name, base URL and the command that adds it, for a provider with no route yet. Only a built-in provider's
    base URL, or a catalog's that is https at a public host name and passes the endpoint checks, is offered: a
    catalog is not trusted to say where a key should go (it offered http://169.254.169.254/...)."""
    known = KNOWN.get(pid)
    entry = catalog_providers.get(pid) or {}
    base = known.base if known else (entry.get("api") if suggestable(entry.get("api")) else None)
    api = known.api if known else "openai"
    out = {"provider": pid, "name": (known.name if known else entry.get("name")) or pid, "base_url": base, "api": api}
    if base:
        argv = out["argv"] = add_argv(pid, base, api)
        out["command"] = shlex.join(argv)     # for a POSIX shell; `bench` prints it for its own
    return out
