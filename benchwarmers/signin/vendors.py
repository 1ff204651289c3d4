"""Provider sign-in: one entry per provider, saying how this service gets a key for it.

Each entry is a `Vendor`, with one of three kinds:

- ``sign-in``: the provider documents a flow a locally run app may use without registering itself first,
  and `flows.py` runs it: ``handoff`` (the browser goes to the provider's auth page with a PKCE challenge,
  comes back to this service's callback with a code, and the code is exchanged for a key) or ``device``
  (the provider shows the user a code to approve while this service polls for the key).
- ``paste``: no such flow exists; the entry names the page where the user makes a key, to add like any
  endpoint's key (`bench endpoint add` or `POST /bench/endpoints`, which check it by listing models).
- ``local``: a server on this machine that takes no key (Ollama). The Endpoints page offers it in one click
  when it answers (`GET /bench/local-servers`), added like any endpoint (`POST /bench/endpoints`).

`why` says, in one line, why the entry has its kind and which of the provider's own documents says so;
`catalog` is the provider's id in the catalog (models.dev), so Discover can point a model with no route yet
at the entry that adds one.

To add a provider: append a `Vendor(...)` to VENDORS with a unique lower-case `id` (also the default
endpoint name), its `name`, `kind`, `why` and `doc`, its `api` (openai, anthropic, gemini or ollama), the
`base_url` an endpoint uses, and:
for a paste provider, `key_page`; for a handoff sign-in, `site` (the auth page is `site + "/auth"`, the
key exchange `base_url + "/auth/keys"`, as OpenRouter and NanoGPT both document), `auth_params` and
`exchange_params` for fields the provider wants beyond the PKCE ones, and `echoes_state` when the
provider sends `state` back; for a device sign-in, `device_url` (its device endpoints are
`device_url + "/code"` and `device_url + "/token"`) and `device_params` for the body of the first.
Nothing else needs to change: the routes (`dashboard/signin.py`), the JSON list (`api/connect.py`) and the
Endpoints page's sign-in card read this table.

A paste entry whose provider documents a flow for an app the user registers (Hugging Face's OAuth apps, GitHub's
device flow) also has `own_app` (``oauth``: authorization code with PKCE to this service's registered callback;
``device``: the device flow) and the URLs of that flow. Once the user gives that app's client id (Settings, "Use
your own app", kept by `ownapps.py` in the data folder), `with_app` makes the entry a sign-in.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

SIGN_IN, PASTE, LOCAL = "sign-in", "paste", "local"
HANDOFF, DEVICE, OAUTH = "handoff", "device", "oauth"


@dataclass(frozen=True)
class Vendor:
    id: str
    name: str
    api: str
    base_url: str
    kind: str
    why: str
    doc: str
    key_page: str | None = None
    flow: str | None = None              # sign-in only: handoff or device
    site: str | None = None              # handoff: the auth page is site + "/auth"
    auth_params: dict = field(default_factory=dict)
    exchange_params: dict = field(default_factory=dict)
    echoes_state: bool = False           # handoff: the provider sends `state` back with the code
    device_url: str | None = None        # device: device_url + "/code" and + "/token"
    device_params: dict = field(default_factory=dict)   # device: the body of the /code request
    note: str | None = None              # something the user should know after signing in
    catalog: str | None = None           # the provider's id in the catalog (models.dev)
    code_url: str | None = None          # device: where the flow starts, when not device_url + "/code"
    token_url: str | None = None         # device or oauth: where a code (or a refresh token) becomes a token
    token_params: dict = field(default_factory=dict)    # device: the poll's fields beside device_code
    own_app: str | None = None           # oauth or device: the flow an app the user registers can run
    authorize_url: str | None = None     # oauth: the provider's authorization page
    scope: str | None = None             # oauth or device: the scope asked for
    app_page: str | None = None          # where the user registers that app
    app_why: str | None = None           # one line: what the app needs (its callback, its permissions)
    client_id: str | None = None         # set by with_app: the user's app

    @property
    def auth_url(self) -> str:
        return f"{self.site}/auth"

    @property
    def exchange_url(self) -> str:
        return f"{self.base_url}/auth/keys"

    @property
    def device_code_url(self) -> str:
        return self.code_url or f"{self.device_url}/code"

    @property
    def device_token_url(self) -> str:
        return self.token_url or f"{self.device_url}/token"

    def entry(self) -> dict:
        """What a page or the JSON list shows: never anything secret (a client id is not)."""
        start = f"/connect/{self.id}" if self.kind == SIGN_IN else None
        app = None if not self.own_app else {"flow": self.own_app, "client_id": self.client_id, "page": self.app_page,
                                              "why": self.app_why, "settings": "/settings#apps"}
        return {"id": self.id, "name": self.name, "kind": self.kind, "flow": self.flow, "api": self.api,
                "base_url": self.base_url, "key_page": self.key_page, "start": start, "why": self.why,
                "doc": self.doc, "note": self.note, "catalog": self.catalog, "app": app}


VENDORS: tuple[Vendor, ...] = (
    Vendor("openrouter", "OpenRouter", "openai", "https://openrouter.ai/api/v1", SIGN_IN, flow=HANDOFF,
           catalog="openrouter", site="https://openrouter.ai", exchange_params={"code_challenge_method": "S256"},
           key_page="https://openrouter.ai/settings/keys",
           why="OAuth PKCE without a client id; localhost callbacks on any port are allowed.",
           doc="https://openrouter.ai/docs/guides/overview/auth/oauth"),
    Vendor("nanogpt", "NanoGPT", "openai", "https://nano-gpt.com/api/v1", SIGN_IN, flow=HANDOFF,
           catalog="nano-gpt", site="https://nano-gpt.com", auth_params={"scope": "api.use models.read"},
           exchange_params={"grant_type": "authorization_code"}, echoes_state=True,
           key_page="https://nano-gpt.com/api",
           why="The key handoff flow for local apps: PKCE, a localhost callback, no client id.",
           doc="https://docs.nano-gpt.com/api-reference/miscellaneous/oauth-pkce"),
    Vendor("pollinations", "Pollinations", "openai", "https://gen.pollinations.ai/v1", SIGN_IN, flow=DEVICE,
           device_url="https://enter.pollinations.ai/api/device", key_page="https://enter.pollinations.ai",
           why="Device sign-in needs no app key (the app key is optional, for attribution); its code flow "
                 "needs a registered app key, so it is not used.",
           doc="https://github.com/pollinations/pollinations/blob/main/BRING_YOUR_OWN_POLLEN.md",
           note="Pollinations says keys it issues to apps expire (7 days by default): sign in again when "
                  "its models start failing with an auth error."),
    Vendor("huggingface", "Hugging Face", "openai", "https://router.huggingface.co/v1", PASTE,
           catalog="huggingface", key_page="https://huggingface.co/settings/tokens",
           why="Sign in with Hugging Face needs an OAuth app created first (its client id), so paste a "
                 "token with the 'Make calls to Inference Providers' permission, or set your own app in Settings.",
           doc="https://huggingface.co/docs/hub/oauth", own_app=OAUTH,
           authorize_url="https://huggingface.co/oauth/authorize", token_url="https://huggingface.co/oauth/token",
           scope="openid profile inference-api", app_page="https://huggingface.co/settings/applications/new",
           app_why="An OAuth app whose redirect URL is this service's callback (shown in Settings), with the "
                     "inference-api scope; its access tokens expire and are renewed with the refresh token."),
    Vendor("github", "GitHub Models", "openai", "https://models.github.ai/inference", PASTE,
           catalog="github-models", key_page="https://github.com/settings/personal-access-tokens/new",
           why="GitHub's OAuth and device flows need a registered OAuth app's client id; the documented way "
                 "is a personal access token with the models permission, or set your own app in Settings.",
           doc="https://docs.github.com/en/github-models/quickstart", own_app=DEVICE,
           code_url="https://github.com/login/device/code", token_url="https://github.com/login/oauth/access_token",
           token_params={"grant_type": "urn:ietf:params:oauth:grant-type:device_code"},
           app_page="https://github.com/settings/apps/new",
           app_why="A GitHub App with the device flow enabled and the Models (read) permission; no callback, so "
                     "it also works from a dashboard on another machine. Renewing its expiring tokens needs the "
                     "app's client secret."),
    Vendor("openai", "OpenAI (ChatGPT plan: see why)", "openai", "https://api.openai.com/v1", PASTE,
           catalog="openai", key_page="https://platform.openai.com/api-keys",
           why="A ChatGPT plan gives no API key, and sign-in with ChatGPT is documented only for OpenAI's "
                 "own Codex client (its registered client id and fixed callback); paste an OpenAI API key, "
                 "billed apart from the plan.",
           doc="https://developers.openai.com/codex/auth"),
    Vendor("anthropic", "Anthropic", "anthropic", "https://api.anthropic.com", PASTE, catalog="anthropic",
           key_page="https://console.anthropic.com/settings/keys",
           why="The Messages API documents API keys only; there is no sign-in for other apps.",
           doc="https://docs.anthropic.com/en/api/overview"),
    Vendor("gemini", "Gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", PASTE,
           catalog="google", key_page="https://aistudio.google.com/apikey",
           why="Google's OAuth needs a registered OAuth client; the Gemini API documents API keys from "
                 "AI Studio.",
           doc="https://ai.google.dev/gemini-api/docs/api-key"),
    Vendor("ollama", "Ollama on this machine", "ollama", "http://127.0.0.1:11434", LOCAL,
           why="A local server: no key and no sign-in; added after it lists its models.",
           doc="https://github.com/ollama/ollama/blob/main/docs/api.md"),
)

_table: dict[str, Vendor] = {p.id: p for p in VENDORS}


def get(provider_id: str, apps: dict | None = None) -> Vendor | None:
    """The entry, a sign-in when `apps` (provider id -> client id) holds the user's app for it."""
    found = _table.get(provider_id)
    return with_app(found, (apps or {}).get(provider_id)) if found else None


def with_app(provider: Vendor, client_id: str | None) -> Vendor:
    """A paste entry that documents a flow for the user's own app, made a sign-in with that app's client id."""
    if not provider.own_app or not client_id:
        return provider
    return replace(provider, kind=SIGN_IN, flow=provider.own_app, client_id=client_id)


def own_app_ids() -> list[str]:
    """The providers that can sign in with an app the user registers."""
    return [p.id for p in VENDORS if _table[p.id].own_app]


def auth_origins() -> list[str]:
    """The origins of the sign-in pages a browser is sent to: a dashboard page's form-action lets the start's
    redirect go there (a handoff's site, an own app's authorization page)."""
    urls = [p.site for p in _table.values() if p.kind == SIGN_IN and p.flow == HANDOFF and p.site]
    urls += [p.authorize_url for p in _table.values() if p.own_app == OAUTH and p.authorize_url]
    found = (urlsplit(u) for u in urls)
    return sorted({f"{u.scheme}://{u.netloc}" for u in found})


def entries(apps: dict | None = None) -> list[dict]:
    """Every provider, in table order, as the Endpoints page and GET /bench/connect show them (`apps`: provider id
    -> the user's client id)."""
    return [with_app(p, (apps or {}).get(p.id)).entry() for p in VENDORS]
