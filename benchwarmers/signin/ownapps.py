"""The user's own sign-in apps: a client id per provider in the data folder (not a secret), a client secret in
keys.json like every key."""
from __future__ import annotations

from .. import keys
from ..errors import BadRequest, NotFound
from . import vendors

FILE = "apps.json"
MAX_ID = 200


def secret_name(provider_id: str) -> str:
    """Where keys.json keeps the app's client secret (beside the endpoints' keys)."""
    return provider_id + keys.APP_SECRET


def client_ids(config) -> dict[str, str]:
    """provider id -> the client id the user set (a file that does not parse sets none, and status says so)."""
    try:
        apps = config.view(FILE).get("apps") or {}
    except Exception:      # a broken hand edit: no app, the providers stay paste entries
        return {}
    return {p: str(a["client_id"]) for p, a in apps.items() if isinstance(a, dict) and a.get("client_id")}


def client_secret(provider_id: str) -> str | None:
    return keys.get(secret_name(provider_id))[0]


def check_text(value, what: str, required: bool) -> str | None:
    """Visible ASCII on one line, at most MAX_ID characters: an id or secret pasted with a space or a line break
    would be refused by the provider with no word about why."""
    if value is None or value == "":
        if required:
            raise BadRequest(f"{what} is required.", 'e.g. {"client_id": "Iv1.0123456789abcdef"}')
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{what} must be a string.")
    value = value.strip()
    if not value or len(value) > MAX_ID or any(not 33 <= ord(c) <= 126 for c in value):
        raise BadRequest(f"{what} must be visible ASCII characters on one line, at most {MAX_ID} of them.",
                         "Copy it again from the app's settings page.")
    return value


def known(provider_id: str) -> vendors.Vendor:
    found = vendors.get(provider_id)
    if found is None or not found.own_app:
        raise NotFound(f"{provider_id!r} takes no app of yours.",
                       "These do: " + ", ".join(vendors.own_app_ids()) + ".")
    return found


def set_app(config, provider_id: str, client_id: str | None, client_secret: str | None = None) -> dict:
    """Keep (or, with no client id, forget) the user's app for a provider; its secret goes to keys.json."""
    known(provider_id)
    client_id = check_text(client_id, "client_id", required=False)
    client_secret = check_text(client_secret, "client_secret", required=False)
    if client_secret and not client_id:
        raise BadRequest("A client_secret belongs to an app: give its client_id too.",
                         'e.g. {"client_id": "Iv1.0123456789abcdef", "client_secret": "..."}')
    if client_secret:
        keys.store(secret_name(provider_id), client_secret)
    elif client_id is None:
        keys.delete(secret_name(provider_id))

    def change(d: dict) -> None:
        apps = d.setdefault("apps", {})
        if client_id:
            apps[provider_id] = {"client_id": client_id}
        else:
            apps.pop(provider_id, None)
    config.update(FILE, change)
    return view(config, provider_id)


def view(config, provider_id: str) -> dict:
    """What the API shows of an app: its client id and whether a secret is kept (never the secret)."""
    return {"provider": provider_id, "client_id": client_ids(config).get(provider_id),
            "client_secret": "keys.json" if client_secret(provider_id) else None}
