"""What a member call is asked with, worked out apart from the Dialer (core/calling.py): a seat's timeouts, its output
cap (from the client's max_tokens, the default, the model's speed, window and output limit), and the client."""
from __future__ import annotations

import os

from ..canonical import Ask
from ..providers import Timeouts
from ..providers.hangup import Hangup
from ..roster.speed import UNMEASURED
from ..settings import CLIENTS

BUILTIN, LLM = CLIENTS
CLIENT_ENV = "BENCH_CLIENT"
FEWEST_FIT = 256   # the fewest output tokens a speed-fitted cap asks for: fewer is rarely an answer


def seat_timeouts(seconds: float, hangup: Hangup | None = None) -> Timeouts:
    """The one place a seat's timeouts come from: `seat_timeout` for the first byte and between chunks,
    at most 10 s to connect; `hangup` lets the panel stop the call."""
    return Timeouts(connect=min(10.0, seconds), first_byte=seconds, idle=seconds, hangup=hangup)


def fitted(default: int, pace: tuple | None, seconds: float) -> int:
    """`default` cut to what a model of measured `pace` (ttft, tokens per second) writes in `seconds`: a slow local
    model asked for 4,096 tokens would hold its seat for minutes. Too fast to matter: `default`; speed unknown (never
    measured, or its last measure failed): at most UNMEASURED."""
    tps = pace[1] if pace else None
    if not pace or not tps:
        return min(default, UNMEASURED)
    room = max(seconds - (pace[0] or 0.0), 1.0)
    return max(min(default, int(tps * room)), min(default, FEWEST_FIT))


def budget(facts: dict, ask: Ask, default: int | None) -> int | None:
    """The output tokens to ask a member for: what the client asked (else `default`, when given), cut to what the
    model's context window leaves after the prompt and to its known output limit (`facts`: the model's, merged by
    the catalog). None leaves it to the upstream."""
    want = ask.max_tokens if ask.max_tokens is not None else default
    if want is None:
        return None
    window, limit = token_fact(facts, "context_window"), token_fact(facts, "max_output")
    if window:
        want = min(want, max(window - ask.prompt_tokens(), 1))   # a prompt that cannot fit is skipped before this
    return min(want, limit) if limit else want


def token_fact(facts: dict, name: str) -> int | None:
    """A token count of the model's facts (its context window, its output limit) as a whole number, when they give
    one above 0; 0 or None: none known."""
    value = facts.get(name)
    if value is None:   # most often: no type to look at
        return None
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def client_in_use(settings: dict, environ=None) -> tuple[str, str]:
    """(the client that makes member calls, what chose it): BENCH_CLIENT in the environment wins over the `client`
    setting. `bench serve` refuses a BENCH_CLIENT it does not know, so the fallback here is for embedders."""
    chosen = (os.environ if environ is None else environ).get(CLIENT_ENV, "").strip().lower()
    if not chosen:
        return settings["client"], "the client setting"
    return (chosen, CLIENT_ENV) if chosen in CLIENTS else (BUILTIN, f"{CLIENT_ENV}={chosen!r} is not a client")
