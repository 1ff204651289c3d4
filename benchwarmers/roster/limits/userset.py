"""The limits the user sets, kept in config/limits.json: rate limits per connection (an endpoint and its key) or per
model, and a monthly budget in dollars (`usd_month`) on those, on a collection, a gateway key and the whole bench:

    {"limits": {"connections": {"openrouter": {"rpm": 20, "rpd": 50, "usd_month": 10}},
                "models": {"mini": {"tpm": 100000, "rpmonth": 3000}},
                "collections": {"review": {"usd_month": 5}}, "keys": {"my-app": {"usd_month": 2}},
                "bench": {"all": {"usd_month": 25}}}}

A bad hand edit of one number is passed over (that limit is not set); a broken file sets none and `bench status`
names its line."""
from __future__ import annotations

from ...errors import BadRequest, ConfigError, NotFound
from ...numberchecks import finite, whole
from ...store import Config
from ..registry import close_names, known_list

FILE = "limits.json"
CONNECTION, MODEL, COLLECTION, KEY, BENCH = "connection", "model", "collection", "key", "bench"
SCOPES = {CONNECTION: "connections", MODEL: "models", COLLECTION: "collections", KEY: "keys", BENCH: "bench"}
RATED = (CONNECTION, MODEL)       # the scopes that take rate limits; every scope takes a budget
WHOLE = "all"                     # the one name of the bench scope: the whole bench
USD = "usd_month"                 # the monthly budget in dollars
MOST_USD = 10.0 ** 9
# Each limit, with what it counts and over which window (minutes sliding; days and months by the UTC calendar).
LIMITS = {"rpm": "requests a minute", "rpd": "requests a day", "rpmonth": "requests a month",
          "tpm": "tokens a minute", "tpd": "tokens a day"}
HIGHEST = 10 ** 12


def number(value) -> int | None:
    """A usable limit: a whole number from 1 up; None for anything else (NaN and infinity too)."""
    if not whole(value):
        return None
    return int(value) if 1 <= value <= HIGHEST else None


def dollars(value) -> float | None:
    """A usable budget: a finite number of dollars from 0 up (0: nothing may be spent); None for anything else."""
    if not finite(value) or not 0 <= value <= MOST_USD:
        return None
    return float(value)


def read(config: Config) -> dict:
    """{"connections": {name: {limit: n}}, "models": {alias: {limit: n}}, "collections", "keys", "bench"}, the
    well-formed entries only."""
    try:
        data = config.view(FILE).get("limits")
    except ConfigError:
        return {key: {} for key in SCOPES.values()}
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
    out: dict[str, float] = {k: n for k in LIMITS if (n := number(entry.get(k))) is not None}
    if (usd := dollars(entry.get(USD))) is not None:
        out[USD] = usd
    return out


def budgets(limits: dict) -> dict:
    """{(scope, name): dollars a month} of every budget set in read()'s limits."""
    return {(scope, name): entry[USD] for scope, key in SCOPES.items()
            for name, entry in limits.get(key, {}).items() if USD in entry}


def rates(entry: dict) -> dict:
    """An entry's rate limits alone (its budget left out; most entries have none: no copy then)."""
    return {k: v for k, v in entry.items() if k != USD} if USD in entry else entry


def changes(body: dict, scope: str | None = None) -> dict:
    """The limits a request sets ({limit: n}, or None to clear it); 400 for anything else (a collection, a key and the
    whole bench take a budget alone)."""
    out = {}
    for key in sorted(set(body) - {"name", "scope"}):
        if key == USD:
            value = body[key]
            if value is not None and dollars(value) is None:
                raise BadRequest(f"The budget {USD} must be a number of dollars from 0 to {MOST_USD:.0f}, not "
                                 f"{value!r}.", f"Clear a budget with null (bench limits clear NAME {USD}).")
            out[key] = value if value is None else float(value)
            continue
        if isinstance(scope, str) and scope in SCOPES and scope not in RATED:
            raise BadRequest(f"A {scope} takes a budget ({USD}), not the rate limit {key!r}.",
                             "Rate limits go on a connection or a model.")
        if key not in LIMITS:
            raise BadRequest(f"Unknown limit {key!r}.", "Limits: " + ", ".join(f"{k} ({v})" for k, v in LIMITS.items())
                             + f", {USD} (dollars a month).")
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
        raise BadRequest(f"Scope {scope!r} is not one of " + ", ".join(SCOPES) + ".",
                         "Leave it out, or say connection, model, collection, key or bench.")
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


def resolve_other(scope: str, name, known) -> tuple[str, str]:
    """(scope, name) for a budget on a collection, a gateway key (`known`: their names now, plus those holding a
    budget already) or the whole bench (its one name, whatever was given)."""
    if scope == BENCH:
        return BENCH, WHOLE
    if not isinstance(name, str) or not name:
        raise BadRequest(f"Say which {scope}.", f"e.g. bench limits set review --{scope} --usd-month 5")
    if name not in known:
        close = close_names(name, dict.fromkeys(known))
        hint = ("Did you mean " + " or ".join(repr(c) for c in close) + "?") if close else \
            known_list(dict.fromkeys(known), scope)
        raise NotFound(f"No {scope} named {name!r}.", hint)
    return scope, name


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
