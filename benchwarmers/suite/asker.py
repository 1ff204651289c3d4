"""The one way the suite calls a model: a direct ask through the service's own gateway, recorded as a call.

Every suite model call goes through `Asker.ask`, so pacing and limits have one place to act.
"""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Callable

MAX_TOKENS = 2000
SUITE_HEADER = "X-Bench-Suite"    # carries the service's mark: its rate limits and the usage ledger see a suite task


@dataclass
class Answered:
    status: str                      # ok | failed
    text: str = ""
    call: str | None = None          # the call id the gateway recorded
    error: str | None = None
    seconds: float = 0.0
    rate_limited: bool = False


class Asker:
    """POST /v1/chat/completions with `model: <alias>` on the running service: one seat, one recorded call."""

    def __init__(self, url: Callable[[], str], token: str | None, timeout: Callable[[], float],
                 mark: str | None = None):
        self.url = url                   # read at each ask: the service's port is known once it is bound
        self.token = token
        self.timeout = timeout
        self.mark = mark                 # this service's own secret mark: the gateway counts the ask as the suite's

    def ask(self, alias: str, system: str, prompt: str) -> Answered:
        body = {"model": alias, "temperature": 0, "max_tokens": MAX_TOKENS,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        headers = {"Content-Type": "application/json", "User-Agent": "benchwarmers-suite"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.mark:
            headers[SUITE_HEADER] = self.mark
        req = urllib.request.Request(self.url().rstrip("/") + "/v1/chat/completions", json.dumps(body).encode(),
                                     headers)
        started = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=self.timeout()) as resp:
                data = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return refused(e, time.monotonic() - started)
        except (urllib.error.URLError, OSError, socket.timeout, ValueError) as e:
            return Answered("failed", error=f"the service's gateway could not be asked: {e}",
                            seconds=time.monotonic() - started)
        return from_reply(data, time.monotonic() - started)


def from_reply(data: dict, seconds: float) -> Answered:
    """The one seat of a direct ask, from the reply's `bench` field."""
    seats = ((data.get("bench") or {}).get("seats") or []) if isinstance(data, dict) else []
    if not seats:
        return Answered("failed", error="the gateway's reply had no seat", seconds=seconds)
    seat = seats[0]
    if seat.get("status") != "ok":
        error = seat.get("error") or seat.get("status") or "failed"
        return Answered("failed", call=seat.get("call"), error=error, seconds=seconds,
                        rate_limited="rate" in error.lower() and "limit" in error.lower())
    return Answered("ok", seat.get("answer") or "", seat.get("call"), seconds=seconds)


def refused(e: urllib.error.HTTPError, seconds: float) -> Answered:
    try:
        err = json.loads(e.read()).get("error") or {}
    except ValueError:
        err = {}
    message = err.get("message") if isinstance(err, dict) else str(err)
    code = str(err.get("code") or "") if isinstance(err, dict) else ""
    limited = e.code == 429 or "rate_limited" in code or "rate limit" in (message or "").lower()
    return Answered("failed", error=message or f"HTTP {e.code}", seconds=seconds, rate_limited=limited)
