"""Endpoints and the model roster, read from the data folder's config, with a provider per endpoint."""
from __future__ import annotations

import difflib
import re
import threading
from dataclasses import asdict, dataclass, field
from typing import Protocol

from .. import keys
from ..baseurls import base_problem, link_local
from ..errors import BadRequest, NotFound
from ..names import check_name
from ..providers import PROVIDERS, Provider, Transport, make_provider
from ..store import Config

APIS = tuple(PROVIDERS)   # the upstream protocols an endpoint may speak
ACTIVE, RETIRED = "active", "retired"
PROVIDER_MEMO = "provider"   # where a Config.steady() memo keeps an endpoint's provider (not a file name)


class Renews(Protocol):
    """What renews signed-in endpoints' tokens (signin.renewal.Renewer, given by the Bench)."""

    def fresh(self, endpoint: str) -> None: ...

    def refused(self, endpoint: str) -> str | None: ...


@dataclass
class Endpoint:
    name: str
    base_url: str
    api: str = "openai"
    no_key: bool = False
    hub: str | None = None        # a kind of hubs.KINDS (open-webui ...): its admin API can add models

    @classmethod
    def from_dict(cls, name: str, d: dict) -> "Endpoint":
        hub = d.get("hub") if isinstance(d.get("hub"), str) and d.get("hub") else None
        return cls(name, str(d.get("base_url", "")).rstrip("/"), d.get("api", "openai"), bool(d.get("no_key")), hub)

    def to_dict(self) -> dict:
        return {"base_url": self.base_url, "api": self.api, "no_key": self.no_key, **({"hub": self.hub} if self.hub
                                                                                        else {})}

    def key(self) -> tuple[str | None, str | None]:
        return (None, None) if self.no_key else keys.get(self.name)


@dataclass
class Model:
    alias: str
    endpoint: str
    served: str
    status: str = ACTIVE
    reason: str | None = None            # why it was retired
    retired_at: float | None = None
    ad_hoc: bool = False                 # never called by the bench on its own (pay-per-use, trial keys)
    facts: dict = field(default_factory=dict)   # context_window, max_output, vision, tools, price_in, price_out
    added: float = 0.0

    @classmethod
    def from_dict(cls, alias: str, d: dict) -> "Model":
        return cls(alias, d.get("endpoint", ""), d.get("served", alias), d.get("status", ACTIVE), d.get("reason"),
                   d.get("retired_at"), bool(d.get("ad_hoc")), dict(d.get("facts") or {}), d.get("added") or 0.0)

    def to_dict(self) -> dict:
        d = asdict(self)
        del d["alias"]
        return d

    @property
    def active(self) -> bool:
        return self.status == ACTIVE


class Registry:
    """Parsed views of endpoints.json and models.json, rebuilt only when the files change."""

    def __init__(self, config: Config, transport=None):
        self.config = config
        self.transport = transport or Transport()   # this service's pooled connections and rate-limit facts
        self._lock = threading.Lock()
        self._seen: int | None = None
        self._endpoints: dict[str, Endpoint] = {}
        self._models: dict[str, Model] = {}
        self._providers: dict[tuple, Provider] = {}
        self._listed: dict[str, tuple[str, frozenset]] = {}   # name -> (base URL, served names), this run only
        self._sources: dict[str, tuple[str, tuple]] = {}      # hub name -> (base URL, catalog providers), this run
        self.tokens: Renews | None = None   # the Bench's Renewer of signed-in endpoints' tokens

    def _refresh(self) -> None:
        ends = self.config.view("endpoints.json")
        mods = self.config.view("models.json")
        marker = self.config.version   # bumped whenever any config file is re-read after a change
        if marker == self._seen:
            return
        with self._lock:
            self._endpoints = {n: Endpoint.from_dict(n, d) for n, d in (ends.get("endpoints") or {}).items()
                               if isinstance(d, dict)}
            self._models = {a: Model.from_dict(a, d) for a, d in (mods.get("models") or {}).items()
                            if isinstance(d, dict)}
            self._seen = marker
        keys.learn()      # at start-up and after an endpoint is added: every key it may send is redacted from then

    def endpoints(self) -> dict[str, Endpoint]:
        self._refresh()
        return self._endpoints

    def models(self) -> dict[str, Model]:
        self._refresh()
        return self._models

    def endpoint(self, name: str) -> Endpoint:
        found = self.endpoints().get(name)
        if not found:
            raise NotFound(f"No endpoint named {name!r}.", suggest(name, self.endpoints(), "endpoint"))
        return found

    def model(self, alias: str) -> Model:
        found = self.models().get(alias)
        if not found:
            raise NotFound(f"No model named {alias!r} on the bench.", suggest(alias, self.models(), "model"))
        return found

    def provider(self, endpoint: Endpoint) -> Provider:
        """One provider per endpoint and key (a changed key gets a new one); connections are pooled underneath.
        Within a request (Config.steady) the key is looked up once, as each config file is read once."""
        memo = self.config.memo()
        if memo is not None:
            key = (PROVIDER_MEMO, endpoint.name)
            try:   # ([] rather than .get(): a call less a seat)
                hit = memo[key]
                if hit[0] is endpoint:
                    return hit[1]
            except KeyError:
                pass
        provider = self._provider(endpoint)
        if memo is not None:
            memo[key] = (endpoint, provider)
        return provider

    def _provider(self, endpoint: Endpoint) -> Provider:
        if self.tokens is not None and not endpoint.no_key:
            self.tokens.fresh(endpoint.name)
        key, _ = endpoint.key()
        cache_key = (endpoint.name, endpoint.base_url, endpoint.api, key)
        with self._lock:
            if cache_key not in self._providers:
                self._providers[cache_key] = make_provider(endpoint.api, endpoint.base_url, key, name=endpoint.name,
                                                           transport=self.transport)
            return self._providers[cache_key]

    def signin_again(self, name: str) -> str | None:
        """Why a signed-in endpoint needs the user to sign in again (its renewal was refused), or None."""
        return self.tokens.refused(name) if self.tokens is not None else None

    def provider_for(self, model: Model) -> Provider:
        return self.provider(self.endpoint(model.endpoint))

    # -- what each endpoint's own model list said --------------------------------------------
    def note_listing(self, endpoint: Endpoint, models: list[dict]) -> None:
        """Keep the served names an endpoint's model list just gave (in memory, for this run of the service):
        Discover offers a route only to a model its endpoint lists. A name listed with `:latest` counts for the
        bare name too, as asking for it does (Ollama lists `llama3.2:latest` for `llama3.2`)."""
        names = {str(m.get("id")) for m in models if isinstance(m, dict) and m.get("id")}
        names |= {n[:-len(":latest")] for n in names if n.endswith(":latest")}
        with self._lock:
            self._listed[endpoint.name] = (endpoint.base_url, frozenset(names))

    def note_sources(self, endpoint: Endpoint, providers: list[str]) -> None:
        """The catalog providers a hub endpoint's sources reach, as its admin API just said (this run only)."""
        with self._lock:
            self._sources[endpoint.name] = (endpoint.base_url, tuple(providers))

    def sources(self, endpoint: Endpoint) -> tuple | None:
        """The catalog providers a hub can add models from, when its admin API was read this run; else None."""
        found = self._sources.get(endpoint.name)
        return found[1] if found and found[0] == endpoint.base_url else None

    def listed(self, endpoint: Endpoint) -> frozenset | None:
        """The served names its list gave when last read; None when it was not read since the service started,
        or was read at another address."""
        found = self._listed.get(endpoint.name)
        return found[1] if found and found[0] == endpoint.base_url else None

    # -- writes ------------------------------------------------------------------------------
    def save_model(self, model: Model) -> None:
        self.config.update("models.json", lambda d: d.setdefault("models", {}).__setitem__(model.alias,
                                                                                           model.to_dict()))

    def save_endpoint(self, endpoint: Endpoint, extra: dict | None = None) -> None:
        """Write one endpoint; `extra` holds facts about it (served_count, checked) kept beside its settings."""
        entry = {**endpoint.to_dict(), **(extra or {})}
        self.config.update("endpoints.json", lambda d: d.setdefault("endpoints", {}).__setitem__(endpoint.name,
                                                                                                 entry))

    def remove_endpoint(self, name: str) -> bool:
        return bool(self.config.update("endpoints.json",
                                       lambda d: (d.get("endpoints") or {}).pop(name, None) is not None))

    def endpoint_extra(self, name: str) -> dict:
        """What endpoints.json holds about an endpoint beyond its settings (served_count, checked)."""
        raw = (self.config.view("endpoints.json").get("endpoints") or {}).get(name) or {}
        return {k: v for k, v in raw.items() if k not in ("base_url", "api", "no_key", "hub")}

    def unique_alias(self, served: str) -> str:
        """A readable alias from a served name: 'openai/gpt-4o-mini:free' -> 'gpt-4o-mini-free'."""
        name = served.rsplit("/", 1)[-1].removesuffix(":latest")   # Ollama's default tag says nothing
        base = re.sub(r"[^a-z0-9.\-]+", "-", name.lower()).strip(".-")[:60] or "model"
        alias, n = base, 2
        while alias in self.models():
            alias, n = f"{base}-{n}", n + 1
        return alias


def close_names(name: str, known) -> list[str]:
    return difflib.get_close_matches(name, list(known), n=3, cutoff=0.5)


def known_list(known, noun: str) -> str:
    if not known:
        return f"There are no {noun}s yet."
    shown = sorted(known)
    more = f" and {len(shown) - 20} more" if len(shown) > 20 else ""
    return f"Known {noun}s: " + ", ".join(shown[:20]) + more + "."


def suggest(name: str, known, noun: str) -> str:
    close = close_names(name, known)
    if close:
        return "Did you mean " + " or ".join(repr(c) for c in close) + "?"
    return known_list(known, noun)


def suggest_all(names: list[str], known, noun: str) -> str:
    """One hint for several unknown names: the close matches of each, and the known names once for the rest."""
    if len(names) == 1:
        return suggest(names[0], known, noun)
    hints, lost = [], False
    for name in names:
        close = close_names(name, known)
        if close:
            hints.append(f"For {name!r}, did you mean " + " or ".join(repr(c) for c in close) + "?")
        lost = lost or not close
    return " ".join(hints + ([known_list(known, noun)] if lost else []))


def check_endpoint_name(name) -> str:
    """A valid name that is not one of the entries keys.json keeps beside an endpoint's key."""
    check_name(name, "Endpoint name")
    if name.endswith(keys.BESIDE):
        raise BadRequest(f"Endpoint name {name!r} ends like an entry kept beside another endpoint's key "
                         f"({', '.join(keys.BESIDE)}).", "Pick a name that does not end so.")
    return name


def new_endpoint(name, base_url, api="openai", no_key: bool = False, hub: str | None = None,
                 allow_link_local: bool = False) -> Endpoint:
    """An endpoint checked before it is saved: a valid name, a known protocol, a usable base URL (a hub's kind is
    checked by its caller, which knows the adapters), and not at a link-local or cloud metadata address unless
    `allow_link_local` says the user means it."""
    check_endpoint_name(name)
    if api not in APIS:
        raise BadRequest(f"Unknown api {api!r}.", "Use one of: " + ", ".join(APIS) + ".")
    if hub and api != "openai":
        raise BadRequest("A hub speaks the OpenAI-compatible API.", "Leave --api out (or give --api openai).")
    endpoint = Endpoint(name, check_base(base_url), api, no_key, hub or None)
    if not allow_link_local:
        refuse_link_local(endpoint.base_url, link_local(endpoint.base_url))
    return endpoint


def refuse_link_local(base_url: str, why: str | None) -> None:
    if why:
        raise BadRequest(f"{base_url[:200]!r} is refused: {why}, and this endpoint's key and requests would go "
                         "there.", "If you mean it, add it with --allow-link-local (allow_link_local: true; on "
                         "the Endpoints page, tick “Allow a link-local address”). Loopback and private addresses "
                         "need no such flag.")


def check_base(value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("base_url is required.", "e.g. --base https://openrouter.ai/api/v1")
    value = value.strip().rstrip("/")
    problem = base_problem(value)
    if problem:
        raise BadRequest(f"{value[:200]!r} is not a usable base URL ({problem}).",
                         "Give an http:// or https:// URL without credentials in it, e.g. http://localhost:11434.")
    return value
