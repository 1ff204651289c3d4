"""Rate-limit facts read from provider headers and bodies, normalised, and kept per connection."""
from __future__ import annotations

import re
import threading
import time
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Mapping

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_duration(value: str) -> float | None:
    """OpenAI-style durations ("6m0s", "1s", "20ms", "1h2m3.5s") or plain seconds, as seconds."""
    value = (value or "").strip().lower()
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def parse_http_date(value: str) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def parse_rfc3339(value: str) -> float | None:
    value = (value or "").strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


def parse_epoch(value: str, now: float) -> float | None:
    """A reset given as epoch milliseconds (OpenRouter), epoch seconds, or seconds from now."""
    number = _number(value)
    if number is None:
        seconds = parse_duration(value)
        return None if seconds is None else now + seconds
    if number > 1e12:
        return number / 1000.0
    if number > 1e9:
        return number
    return now + number


def parse_retry_after(value: str, now: float) -> float | None:
    """`retry-after`: seconds, or an HTTP date; returned as seconds from now."""
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    when = parse_http_date(value)
    return None if when is None else max(when - now, 0.0)


def _number(value) -> float | None:
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


def _int(value) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


SIGNALS = ("x-ratelimit", "anthropic-ratelimit", "retry-after")


def parse_rate_limit_headers(headers: Mapping[str, str], now: float) -> dict:
    """Normalised facts: *_limit / *_remaining counts, *_reset_at epoch seconds, retry_after seconds."""
    if not headers:
        return {}
    names = " ".join(map(str, headers)).lower()   # every SIGNALS name holds one of these two; most responses have
    if "ratelimit" not in names and "retry-after" not in names:   # none, and are not looked through name by name
        return {}
    h = {}
    for k, v in headers.items():
        k = str(k).lower()
        if k.startswith(SIGNALS):
            h[k] = str(v)
    if not h:   # a name holding one of the two, but none of SIGNALS' (x-my-ratelimit-policy)
        return {}
    facts: dict = {}

    def put(key: str, value) -> None:
        if value is not None:
            facts[key] = value

    # OpenAI (and most OpenAI-compatible hosts): x-ratelimit-{limit,remaining,reset}-{requests,tokens}
    for unit in ("requests", "tokens"):
        put(f"{unit}_limit", _int(h.get(f"x-ratelimit-limit-{unit}")))
        put(f"{unit}_remaining", _int(h.get(f"x-ratelimit-remaining-{unit}")))
        reset = parse_duration(h.get(f"x-ratelimit-reset-{unit}", ""))
        put(f"{unit}_reset_at", None if reset is None else now + reset)

    # Anthropic: anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}
    for unit in ("requests", "tokens", "input-tokens", "output-tokens"):
        key = unit.replace("-", "_")
        prefix = f"anthropic-ratelimit-{unit}-"
        put(f"{key}_limit", _int(h.get(prefix + "limit")))
        put(f"{key}_remaining", _int(h.get(prefix + "remaining")))
        if prefix + "reset" in h:
            put(f"{key}_reset_at", parse_rfc3339(h[prefix + "reset"]))

    # OpenRouter (and others): x-ratelimit-limit / -remaining / -reset (epoch ms), counting requests
    if "x-ratelimit-limit" in h or "x-ratelimit-remaining" in h:
        put("requests_limit", _int(h.get("x-ratelimit-limit")))
        put("requests_remaining", _int(h.get("x-ratelimit-remaining")))
    if "x-ratelimit-reset" in h:
        put("requests_reset_at", parse_epoch(h["x-ratelimit-reset"], now))

    retry_ms = _number(h["retry-after-ms"]) if "retry-after-ms" in h else None
    if retry_ms is not None:
        facts["retry_after"] = max(retry_ms / 1000.0, 0.0)
    elif "retry-after" in h:
        put("retry_after", parse_retry_after(h["retry-after"], now))
    return facts


def gemini_retry_delay(body) -> float | None:
    """Seconds from a Gemini 429 body's RetryInfo.retryDelay ("30s", "1.5s"), or None."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            return parse_duration(str(detail.get("retryDelay", "")))
    return None


def reset_time(facts: dict, now: float) -> float | None:
    """When the exhausted limit resets: retry-after first, then the reset of whatever has nothing left."""
    if facts.get("retry_after") is not None:
        return now + facts["retry_after"]
    resets = [facts.get(f"{unit}_reset_at") for unit in ("requests", "tokens", "input_tokens", "output_tokens")
              if facts.get(f"{unit}_remaining") == 0]
    exhausted = [t for t in resets if t is not None]
    if exhausted:
        return max(exhausted)
    known = [v for k, v in facts.items() if k.endswith("_reset_at") and v is not None]
    return min(known) if known else None


KEY, MODEL = "key", "model"   # whose limit a rate-limit fact describes


def limit_scope(headers: Mapping[str, str], body=None) -> str:
    """Whose limit this is. KEY when it is the whole key's: OpenRouter's unit-less x-ratelimit-limit / -remaining /
    -reset count the key's requests over every model, and OpenAI's `insufficient_quota` is the account's credit.
    Otherwise MODEL: OpenAI's x-ratelimit-*-requests / -tokens, Anthropic's and Gemini's limits, a bare
    retry-after, all count per model, so one model's 429 must not rest its neighbours."""
    names = {str(k).lower() for k in (headers or {})}
    if names & {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"}:
        return KEY
    if body is not None and "insufficient_quota" in str(body):
        return KEY
    return MODEL


_NONE: dict = {}   # peek()'s answer when nothing is known (read only)


class RateLimitBook:
    """The latest rate-limit facts per connection name, and per (name, model) for limits that count per model;
    each entry says its `scope`. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: dict = {}   # read-only outside: Resting looks whether anything is known without a call

    def record(self, name: str, facts: dict, model: str | None = None, scope: str = KEY) -> None:
        """Keep `facts` as the connection's latest; a model-scoped limit is also kept under (name, model)."""
        if not facts:
            return
        with self._lock:
            for key in (name, (name, model)) if model and scope == MODEL else (name,):
                entry = self.entries.setdefault(key, {})
                entry.pop("retry_after", None)          # a retry-after only means something on its own response
                entry.update(facts)
                entry["scope"] = scope
                entry["updated_at"] = time.time()

    def get(self, name: str, model: str | None = None) -> dict:
        with self._lock:
            return dict(self.entries.get((name, model) if model else name, {}))

    def peek(self, name: str, model: str | None = None) -> dict:
        """get() without the copy or the lock, for a quick read-only look on the hot path (each entry is only
        ever updated in place, so a read sees the facts before or after an update)."""
        return self.entries.get((name, model) if model else name) or _NONE

    def snapshot(self) -> dict:
        with self._lock:
            return {name: dict(facts) for name, facts in self.entries.items() if isinstance(name, str)}

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()
