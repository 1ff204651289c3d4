"""Every setting declared once (default, type, check, help); settings.json in the data folder overrides defaults."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import BadRequest
from .numberchecks import finite, whole


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    type: type
    help: str
    check: Callable[[Any], bool] = lambda v: True
    restart: bool = False            # read once at start-up; every other setting counts from the next request
    most: float | None = None        # a number's upper bound: past it a value breaks what uses it (a timeout, a size)


CLIENTS = ("builtin", "llm")     # who makes member calls: the `client` setting, or BENCH_CLIENT
STREAM_SEATS = ("local", "all", "none")   # which seats ask streamed: the `stream_seats` setting
DAY, YEAR = 86400, 525600        # a day in seconds; a year in minutes


def _positive(v) -> bool:
    return v > 0


def _share(v) -> bool:
    return 0 < v <= 1


SETTINGS = {s.name: s for s in (
    Setting("seat_timeout", 300.0, float, "Seconds the panel waits for one seat before it gives up on it.", _positive,
            most=DAY),
    Setting("explore_grace_seconds", 15.0, float, "Seconds a panel waits for its explore seats once its members are "
            "in and one seat has answered; an explore seat still out then is reported as running, and its answer goes "
            "to the record when it comes. A collection's explore_grace overrides it.", lambda v: v >= 0, most=DAY),
    Setting("panel_seconds", 60.0, float, "Seconds a panel seat's answer is sized for: a model whose speed was "
            "measured is asked by default for no more output tokens than it writes in this time (at most "
            "default_max_tokens, at least 256); one whose speed is not known yet, for at most 1,024.", _positive,
            most=DAY),
    Setting("stream_seats", "local", str, "Which panel seats ask their member for a streamed answer, so that a seat "
            "given up (timed out, its client gone, the service stopping) stops the model's work: local (a server at "
            "a loopback or private address: Ollama, llama.cpp, LM Studio, vLLM), all, or none (every seat asks for "
            "its whole answer in one piece, the cheaper way). A streamed reply's seats and the Ask page's are asked "
            "streamed whatever this says, to be read as they write.", lambda v: v in STREAM_SEATS),
    Setting("max_body_mb", 20.0, float, "Largest request body accepted, in MB (413 beyond).", _positive,
            most=4096),
    Setting("bodies_in_flight_mb", 32.0, float, "Request bodies the service holds at once, in MB, across every "
            "request being read or answered (a large ask costs several times its size in memory until it is "
            "answered); a body that would pass it is refused with 503 and Retry-After. A request alone is always "
            "taken, up to max_body_mb.", _positive, most=65536),
    Setting("panel_workers", 256, int, "Threads for seats that wait in a thread of their own (the size of a pool, "
            "made at start-up: a change needs a restart). A seat on a kept-alive connection waits without one, up to "
            "400 at once across all panels (a streamed one takes a worker once its answer starts, to read it as it "
            "comes); one that must open its connection, goes through llm or waits for a limit takes a worker, as "
            "route mode's shadows do.", _positive, restart=True, most=4096),
    Setting("endpoint_share", 0.5, float, "Share of panel_workers one endpoint's seats may hold at once, above 0 and "
            "at most 1; its further seats wait for its own, so an upstream that hangs cannot stall the others.",
            _share),
    Setting("record_max_kb", 256.0, float, "Largest prompt and largest answer kept in a call record, in KB; past it "
            "the record keeps the start and says how much more there was.", _positive, most=1024 * 1024),
    Setting("record_keep_days", 0, int, "Days a call's prompt and answer text is kept (0: for ever); older text is "
            "pruned by bench store compact and the scheduler's daily compact job. Every count, verdict, claim and "
            "ledger line is kept.", lambda v: v >= 0, most=100_000),
    Setting("merge_model", None, str, "Model that writes :merged answers when a collection names none."),
    Setting("referee_model", None, str, "Model that finds a panel's points (where its seats disagree) when a "
            "collection names no referee, unless it is a seat of that panel; unset, the best-recorded active model "
            "outside the panel that writes the points within referee_timeout."),
    Setting("referee_timeout", 120.0, float, "Seconds a panel's referee may take to answer; past it the referee is "
            "hung up and its points say unavailable (the seats' answers went out before it, as they are).",
            _positive, most=DAY),
    Setting("points_wait_seconds", 3.0, float, "Seconds a streamed panel reply waits after its last seat for the "
            "referee's points: within it the stream ends with them, past it with a line saying where they will be "
            "(a whole reply never waits, unless its request asked for points). A collection's points_wait "
            "overrides it.", lambda v: v >= 0, most=600),
    Setting("keepalive_seconds", 10.0, float, "Seconds between keep-alive frames while a stream waits.", _positive,
            most=3600),
    Setting("pin_idle_minutes", 240.0, float, "Route-mode pins expire after this long without a turn.", _positive,
            most=YEAR),
    Setting("mcp_session_idle_minutes", 60.0, float, "MCP sessions over HTTP (/mcp) end after this long without a "
            "request.", _positive, most=YEAR),
    Setting("default_max_tokens", 4096, int, "Output tokens a panel seat or merge is asked for when the client "
            "sends no max_tokens (0: the upstream's own default). Route mode never applies it.", lambda v: v >= 0,
            most=10 ** 7),
    Setting("require_keys", False, bool, "Gateway routes need a gateway key even on loopback without an admin token "
            "(the admin routes stay open to local clients until BENCHWARMERS_ADMIN_TOKEN is set)."),
    Setting("client", "builtin", str,
            "How member calls are made: builtin (Benchwarmers' own HTTP client) or llm (the llm package and its "
            "plugins, when installed; each member by its served name). BENCH_CLIENT in the environment wins. The "
            "Member calls section of Settings, and GATEWAY.md, list what the llm path does not cover.",
            lambda v: v in CLIENTS),
    Setting("confidently_wrong_ratio", 0.35, float,
            "Share of a model's judged claims that were false at which it is flagged confidently wrong (once 3 "
            "were false), above 0 and at most 1. At 0.35, 92% of flags were right after 20 judged answers "
            "(BENCHMARKS.md).", _share),
    Setting("suite_gap_seconds", 2.0, float,
            "Seconds the suite waits between two of its model calls (it calls one model at a time).",
            lambda v: v >= 0, most=DAY),
    Setting("suite_job_calls", 60, int,
            "The most model calls one run of the scheduler's suite job makes (it plays owed suite runs, oldest "
            "first); what is left stays owed for its next run.", _positive, most=10 ** 6),
    Setting("limit_wait_seconds", 5.0, float,
            "Seconds a call of an ask (a seat, a merge, a route turn) may wait for a rate limit (bench limits) before "
            "it is refused unsent; an explore seat never waits (another model takes it).", lambda v: v >= 0, most=DAY),
    Setting("limit_wait_scheduled_seconds", 120.0, float,
            "Seconds a scheduled job's call, a probe, a speed test or a suite task may wait for a rate limit; a "
            "scheduled job skips a model that would wait longer, until its next run.", lambda v: v >= 0,
            most=DAY),
    Setting("scheduler_gap_seconds", 2.0, float, "Seconds between two scheduled calls to one endpoint.",
            lambda v: v >= 0, most=DAY),
    Setting("scheduler_yield_seconds", 300.0, float,
            "Seconds a scheduled call waits for your own asks on its endpoint to finish before it skips that "
            "model until the next run.", _positive, most=DAY),
)}


def coerce(name: str, value: Any) -> Any:
    """Check a value against its declaration; raises BadRequest saying what is allowed."""
    s = SETTINGS.get(name)
    if s is None:
        raise BadRequest(f"Unknown setting {name!r}.", "Known settings: " + ", ".join(sorted(SETTINGS)))
    if value is None and s.default is None:
        return None
    if s.type in (int, float):
        v = _number(s, value)
    else:
        try:
            if s.type is bool and not isinstance(value, bool):
                raise TypeError
            v = s.type(value) if not isinstance(value, s.type) else value
        except (TypeError, ValueError):
            raise BadRequest(f"Setting {name!r} must be a {s.type.__name__}, not {value!r}.", s.help) from None
    if not s.check(v):
        raise BadRequest(f"Setting {name!r} cannot be {value!r}.", s.help)
    return v


def _number(s: Setting, given):
    """A numeric setting's value: a real number (text of one, from a form or the CLI) within its bounds, a whole one
    for an int. int() would quietly cut 1.5 to 1, float() lets infinity through, and JSON's true is an int."""
    kind = "a whole number" if s.type is int else "a number"
    try:
        number = float(given) if isinstance(given, str) else given
    except ValueError:
        number = None
    if not finite(number) or (s.type is int and not whole(number)):
        raise BadRequest(f"Setting {s.name!r} must be {kind}, not {given!r}.", s.help)
    if s.most is not None and number is not None and number > s.most:
        raise BadRequest(f"Setting {s.name!r} can be at most {s.most:,}, not {given!r}.", s.help)
    return s.type(number)


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
