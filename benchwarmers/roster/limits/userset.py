"""The rate limits the user sets, per connection (an endpoint and its key) or per model, kept in config/limits.json:

    {"limits": {"connections": {"openrouter": {"rpm": 20, "rpd": 50}},
                "models": {"mini": {"tpm": 100000, "rpmonth": 3000}}}}

A bad hand edit of one number is passed over (that limit is not set); a broken file sets none and `bench status`
names its line."""
from __future__ import annotations

from ...errors import BadRequest, ConfigError, NotFound
from ...numberchecks import whole
from ...store import Config
from ..registry import close_names, known_list

FILE = "limits.json"
CONNECTION, MODEL = "connection", "model"
SCOPES = {CONNECTION: "connections", MODEL: "models"}
# Each limit, with what it counts and over which window (minutes sliding; days and months by the UTC calendar).
LIMITS = {"rpm": "requests a minute", "rpd": "requests a day", "rpmonth": "requests a month",
          "tpm": "tokens a minute", "tpd": "tokens a day"}
HIGHEST = 10 ** 12


def number(value) -> int | None:
    """A usable limit: a whole number from 1 up; None for anything else (NaN and infinity too)."""
    if not whole(value):
        return None
    return int(value) if 1 <= value <= HIGHEST else None


def read(config: Config) -> dict:
    """{"connections": {name: {limit: n}}, "models": {alias: {limit: n}}}, the well-formed entries only."""
    try:
        data = config.view(FILE).get("limits")
    except ConfigError:
        return {"connections": {}, "models": {}}
    data = data if isinstance(data, dict) else {}
    out = {}
    for key in SCOPES.values():
        entries = got if isinstance(got := data.get(key), dict) else {}
        usable = {name: well_formed(entry) for name, entry in entries.items()}
        out[key] = {name: limits for name, limits in usable.items() if limits}
    return out


def well_formed(entry) -> dict:
    """The usable limits of one entry of the file."""
    if not isinstance(entry, dict):
        return {}
    return {k: number(entry.get(k)) for k in LIMITS if number(entry.get(k)) is not None}


def changes(body: dict) -> dict:
    """The limits a request sets ({limit: n}, or None to clear it); 400 for anything else."""
    out = {}
    for key in sorted(set(body) - {"name", "scope"}):
        if key not in LIMITS:
            raise BadRequest(f"Unknown limit {key!r}.", "Limits: " + ", ".join(f"{k} ({v})" for k, v in LIMITS.items())
                             + ".")
        value = body[key]
        if value is not None and number(value) is None:
            raise BadRequest(f"The limit {key} must be a whole number from 1 to {HIGHEST}, not {value!r}.",
                             "Clear a limit with null (bench limits clear NAME " + key + ").")
        out[key] = value if value is None else int(value)
    if not out:
        raise BadRequest("Name at least one limit to set.", "e.g. {\"name\": \"openrouter\", \"rpm\": 20} "
                         "(bench limits set openrouter --rpm 20).")
    return out


def resolve(registry, name, scope: str | None, stored: dict) -> tuple[str, str]:
    """(scope, name): what NAME is, a connection (an endpoint) or a model alias; one already holding limits in the
    file counts too, so a limit left by a removed endpoint can still be cleared."""
    if not isinstance(name, str) or not name:
        raise BadRequest("Say whose limits: a connection (an endpoint's name) or a model alias.",
                         "e.g. bench limits set openrouter --rpm 20")
    if scope not in (None, "", CONNECTION, MODEL):
        raise BadRequest(f"Scope {scope!r} is neither {CONNECTION!r} nor {MODEL!r}.",
                         "Leave it out, or say connection or model.")
    found = [s for s, known in ((CONNECTION, registry.endpoints()), (MODEL, registry.models()))
             if (not scope or s == scope) and (name in known or name in stored[SCOPES[s]])]
    if len(found) == 1:
        return found[0], name
    if found:
        raise BadRequest(f"{name!r} is both a connection and a model.",
                         "Say which: --connection or --model (scope in the API).")
    known = ({} if scope == MODEL else registry.endpoints()) | ({} if scope == CONNECTION else registry.models())
    close = close_names(name, known)
    hint = ("Did you mean " + " or ".join(repr(c) for c in close) + "?") if close else \
        known_list(known, "connection or model" if not scope else scope)
    raise NotFound(f"No {scope or 'connection or model'} named {name!r}.", hint)


def apply(config: Config, scope: str, name: str, change: dict) -> dict:
    """Set (or, for None, clear) NAME's limits in the file, atomically; returns what NAME has now."""
    def edit(data: dict) -> dict:
        if not isinstance(data.get("limits"), dict):
            data["limits"] = {}
        entries = data["limits"].setdefault(SCOPES[scope], {})
        entry = got if isinstance(got := entries.get(name), dict) else {}
        for key, value in change.items():
            if value is None:
                entry.pop(key, None)
            else:
                entry[key] = value
        if entry:
            entries[name] = entry
        else:
            entries.pop(name, None)
        return dict(entry)
    return config.update(FILE, edit)
