"""The user's own facts and roles (config/overrides.json): they beat every catalog, and the file is theirs to edit.

    {"models": {"ALIAS": {"context_window": 128000, "vision": true, "tools": false,
                          "price_in": 0.15, "price_out": 0.6, "roles": ["code", "reasoning"]}},
     "endpoints": {"NAME": {"provider": "groq"}},
     "providers": {"opencode": {"use_free": true}}}

`endpoints.NAME.provider` names the models.dev provider behind an endpoint whose base URL the catalog does
not recognise (a proxy, a self-hosted gateway); it then counts as that provider. `providers.ID.use_free`
switches on the free models of a provider whose free models work only in its own app (providers.APP_ONLY):
Discover lists them and explore seats may go to them.
"""
from __future__ import annotations

from ..errors import BadRequest, ConfigError
from ..numberchecks import finite, whole
from ..store import Config
from .roles import check_roles

FILE = "overrides.json"
NUMBERS = {"context_window": int, "max_output": int, "price_in": float, "price_out": float}
# Far above any model's (prices are dollars a million tokens): a typo of a few zeros, or 1e30, would price every
# call of the model at that and stay in the ledger.
MOST = {"context_window": 10 ** 9, "max_output": 10 ** 9, "price_in": 10_000, "price_out": 10_000}
FLAGS = ("vision", "tools", "reasoning")
SETTABLE = (*NUMBERS, *FLAGS)


def read(config: Config) -> dict:
    """The file's data; {} while it is broken (bench status names the line)."""
    try:
        return config.view(FILE)
    except ConfigError:
        return {}


def for_model(data: dict, alias: str) -> dict:
    entry = (data.get("models") or {}).get(alias)
    return entry if isinstance(entry, dict) else {}


def facts_of(entry: dict) -> dict:
    """The fact overrides that are well-formed; a bad hand edit of one fact is passed over."""
    out = {}
    for key, kind in NUMBERS.items():
        value = entry.get(key)
        if finite(value) and 0 <= value <= MOST[key]:
            out[key] = kind(value)
    out.update({k: entry[k] for k in FLAGS if isinstance(entry.get(k), bool)})
    return out


def roles_of(entry: dict) -> list[str] | None:
    try:
        return check_roles(entry["roles"]) if "roles" in entry else None
    except ValueError:
        return None


def endpoint_provider(data: dict, name: str) -> str | None:
    entry = (data.get("endpoints") or {}).get(name)
    value = entry.get("provider") if isinstance(entry, dict) else None
    return value if isinstance(value, str) and value else None


def uses_free(data: dict, provider: str) -> bool:
    entry = (data.get("providers") or {}).get(provider)
    return isinstance(entry, dict) and entry.get("use_free") is True


def save_use_free(config: Config, provider: str, value) -> bool:
    if not isinstance(value, bool):
        raise BadRequest("use_free must be true or false.", 'e.g. {"use_free": true}')

    def change(data: dict) -> None:
        providers = got if isinstance(got := data.get("providers"), dict) else {}
        data["providers"] = providers
        entry = got if isinstance(got := providers.get(provider), dict) else {}
        providers[provider] = entry
        entry.pop("use_free", None) if not value else entry.__setitem__("use_free", True)
        if not entry:
            providers.pop(provider)
    config.update(FILE, change)
    return value


def check_facts(changes) -> dict:
    """{fact: value or None (back to the catalog)}, each checked; raises BadRequest saying what is allowed."""
    if not isinstance(changes, dict) or not changes:
        raise BadRequest("Say which facts to set.", "Facts: " + ", ".join(SETTABLE) + " (null clears one).")
    out: dict[str, bool | int | float | None] = {}
    for key, value in changes.items():
        if key not in SETTABLE:
            raise BadRequest(f"Unknown fact {key!r}.", "Facts: " + ", ".join(SETTABLE) + ".")
        if value is None:
            out[key] = None
        elif key in FLAGS:
            if not isinstance(value, bool):
                raise BadRequest(f"{key} must be true or false.")
            out[key] = value
        elif not finite(value) or value < 0 or value > MOST[key] or \
                (NUMBERS[key] is int and (not whole(value) or value == 0)):
            kind = "a whole number above 0" if NUMBERS[key] is int else "a number of dollars, 0 or more"
            raise BadRequest(f"{key} must be {kind}, not {value!r} (at most {MOST[key]:,}).")
        else:
            out[key] = NUMBERS[key](value)
    return out


def save_facts(config: Config, alias: str, changes: dict) -> dict:
    changes = check_facts(changes)

    def change(data: dict) -> dict:
        entry = data.setdefault("models", {}).setdefault(alias, {})
        for key, value in changes.items():
            entry.pop(key, None) if value is None else entry.__setitem__(key, value)
        return dict(entry)
    return config.update(FILE, change)


def save_roles(config: Config, alias: str, roles) -> list[str] | None:
    """Set the model's roles; None goes back to the roles its facts give."""
    if roles is not None:
        try:
            roles = check_roles(roles)
        except ValueError as e:
            raise BadRequest(str(e).capitalize() + ".") from None

    def change(data: dict) -> None:
        entry = data.setdefault("models", {}).setdefault(alias, {})
        entry.pop("roles", None) if roles is None else entry.__setitem__("roles", roles)
    config.update(FILE, change)
    return roles
