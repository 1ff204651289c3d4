"""Hubs: endpoints whose server takes new models through its own admin API (Open WebUI, the LiteLLM proxy, CLI
Proxy API). An endpoint marked a hub of a kind (endpoints.json's `hub`) has an admin key apart from its API key,
in keys.json as `<name>.admin`. A hub's sources are the upstreams it already reaches; a model Discover found (or
one the onboarding queue is given) that the hub does not list yet is added from one of them, then the hub's model
list is read again and the model onboards as usual. Each adapter is one module here meeting HubContract
(contract.py), one entry in KINDS: the dashboard's endpoint form, the CLI's --hub and the hints below follow KINDS.
"""
from __future__ import annotations

from typing import Callable

from .. import keys
from ..errors import BadRequest
from .base import Hub, Source
from .cliproxy import CLIProxy
from .litellm import LiteLLM
from .openwebui import OpenWebUI

KINDS: dict[str, type[Hub]] = {c.kind: c for c in (OpenWebUI, LiteLLM, CLIProxy)}
CHOICES = "|".join(KINDS)      # every kind, as a hint offers them: "--hub open-webui|litellm|cliproxy"


def admin_name(endpoint: str) -> str:
    """Where keys.json keeps a hub's admin key, beside its API key."""
    return endpoint + keys.ADMIN


def check_kind(kind) -> str | None:
    if kind in (None, ""):
        return None
    if not isinstance(kind, str) or kind not in KINDS:     # a list or an object is no kind either (not a 500)
        shown = repr(kind)
        raise BadRequest(f"Unknown hub kind {shown if len(shown) <= 40 else shown[:37] + '...'}.",
                         "Use one of: " + ", ".join(KINDS) + ".")
    return kind


def adapter(endpoint, admin_key: str | None = None) -> Hub:
    """The admin API of a hub endpoint (its admin key from keys.json or BENCHWARMERS_KEY_<NAME>_ADMIN)."""
    key = admin_key if admin_key is not None else keys.get(admin_name(endpoint.name))[0]
    return KINDS[endpoint.hub](endpoint.name, endpoint.base_url, key)


def sources(hub: Hub, provider_of: Callable[[str], str | None]) -> list[Source]:
    """The hub's sources, each with its catalog provider where the hub's answer or its base URL says it."""
    found = hub.sources()
    for s in found:
        if s.provider is None and s.base_url:
            s.provider = provider_of(s.base_url)
    return found


def pick(found: list[Source], via: str | None, model: str, hub: Hub) -> Source:
    """The source a model comes from: the one `via` names (its id or catalog provider), or the only one."""
    if via:
        hits = [s for s in found if via in (s.id, s.provider)]
        if hits:
            return hits[0]
        raise BadRequest(f"{hub.name} of endpoint {hub.endpoint!r} has no source {via!r} for {model!r}.",
                         "Its sources: " + (", ".join(f"{s.id} ({s.provider or 'provider unknown'})" for s in found)
                                            or "none: add a connection or provider to the hub first") + ".")
    if len(found) == 1:
        return found[0]
    raise BadRequest(f"Say which of {hub.name}'s sources {model!r} comes from.",
                     ("Add --via with one of: " + ", ".join(s.provider or s.id for s in found) + ".") if found else
                     f"{hub.name} reaches no provider yet: add one to it first.")
