"""Every setting declared once (default, type, check, help); settings.json in the data folder overrides defaults."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import BadRequest


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    type: type
    help: str
    check: Callable[[Any], bool] = lambda v: True
    restart: bool = False            # read once at start-up; every other setting counts from the next request


def _positive(v) -> bool:
    return v > 0


def _share(v) -> bool:
    return 0 < v <= 1


SETTINGS = {s.name: s for s in (
    Setting("seat_timeout", 300.0, float, "Seconds the panel waits for one seat before it gives up on it.", _positive),
    Setting("max_body_mb", 20.0, float, "Largest request body accepted, in MB (413 beyond).", _positive),
    Setting("panel_workers", 256, int, "Seats that may run at once across all panels (the size of a thread pool, "
            "made at start-up: a change needs a restart).", _positive, restart=True),
    Setting("endpoint_share", 0.5, float, "Share of panel_workers one endpoint's seats may hold at once, above 0 and "
            "at most 1; its further seats wait for its own, so an upstream that hangs cannot stall the others.",
            _share),
    Setting("record_max_kb", 256.0, float, "Largest prompt and largest answer kept in a call record, in KB; past it "
            "the record keeps the start and says how much more there was.", _positive),
    Setting("merge_model", None, str, "Model that writes :merged answers when a collection names none."),
    Setting("keepalive_seconds", 10.0, float, "Seconds between keep-alive frames while a stream waits.", _positive),
    Setting("pin_idle_minutes", 240.0, float, "Route-mode pins expire after this long without a turn.", _positive),
    Setting("confidently_wrong_ratio", 0.35, float,
            "Share of a model's judged claims that were false at which it is flagged confidently wrong (once 3 "
            "were false), above 0 and at most 1. At 0.35, 92% of flags were right after 20 judged answers "
            "(BENCHMARKS.md).", _share),
)}


def coerce(name: str, value: Any) -> Any:
    """Check a value against its declaration; raises BadRequest saying what is allowed."""
    s = SETTINGS.get(name)
    if s is None:
        raise BadRequest(f"Unknown setting {name!r}.", "Known settings: " + ", ".join(sorted(SETTINGS)))
    if value is None and s.default is None:
        return None
    try:
        if s.type is bool and not isinstance(value, bool):
            raise TypeError
        v = s.type(value) if not isinstance(value, s.type) else value
    except (TypeError, ValueError):
        raise BadRequest(f"Setting {name!r} must be a {s.type.__name__}, not {value!r}.", s.help) from None
    if not s.check(v):
        raise BadRequest(f"Setting {name!r} cannot be {value!r}.", s.help)
    return v


def effective(stored: dict) -> dict:
    """Defaults, overridden by settings.json."""
    out = {}
    for name, s in SETTINGS.items():
        value = stored.get(name, s.default)
        try:
            out[name] = coerce(name, value)
        except BadRequest:
            out[name] = s.default   # a bad hand edit falls back to the default for that one setting
    return out
