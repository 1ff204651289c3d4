"""The stdio MCP server's way to the panel: HTTP to the running service (servicelink.py), one session id per process so
the answers it asked can be found again (pending_verdicts) when no gateway key names the caller."""
from __future__ import annotations

import os
import secrets
from typing import Callable
from urllib.parse import quote, urlencode

from ..servicelink import CommandError, ServiceLink
from .tools import OnSeat, Reach, ToolError

SHORT_TIMEOUT = 60.0                # listing collections, recording a verdict and listing pending ones are quick
START_HINT = ("Start the service in another terminal with `benchwarmers` (or `python serve.py` in a checkout); "
              "it listens on http://127.0.0.1:8122 by default. If it runs "
              "elsewhere, set BENCHWARMERS_URL (and BENCHWARMERS_KEY) in this MCP server's env. This MCP session "
              "stays up: call the tool again once the service runs.")


class HttpReach(Reach):
    def __init__(self, url: str | None = None, environ: dict | None = None):
        self.url, self.environ = url, environ
        self.session = "stdio-" + secrets.token_urlsafe(18)

    def client(self) -> ServiceLink:
        client = ServiceLink(self.url, environ=self.environ)
        client.headers["X-Bench-Session"] = self.session
        return client

    def describe(self) -> str:
        try:
            return self.client().url
        except CommandError as e:
            return f"(unusable settings: {e})"

    def secrets(self) -> tuple:
        env = os.environ if self.environ is None else self.environ
        return env.get("BENCHWARMERS_KEY"), env.get("BENCHWARMERS_ADMIN_TOKEN")

    def collections(self) -> dict:
        return self._run(lambda c: c.get("/bench/collections", gateway=True, timeout=min(SHORT_TIMEOUT, c.timeout)))

    def ask(self, body: dict, on_seat: OnSeat | None) -> tuple[dict, str]:
        # over HTTP the whole reply comes at once: no seat-by-seat progress (the service's /mcp gives it)
        reply = self._run(lambda c: c.post("/v1/chat/completions", body, gateway=True))
        bench = got if isinstance(got := reply.get("bench"), dict) else {}
        content = ((reply.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        return bench, content

    def verdict(self, body: dict) -> dict:
        return self._run(lambda c: c.post("/bench/verdict", body, gateway=True, timeout=min(SHORT_TIMEOUT, c.timeout)))

    def point_verdict(self, point: str, body: dict) -> dict:
        return self._run(lambda c: c.post(f"/bench/points/{quote(point, safe='')}/verdict", body, gateway=True,
                                          timeout=min(SHORT_TIMEOUT, c.timeout)))

    def pending(self, limit: int) -> dict:
        def get(c: ServiceLink) -> dict:
            query = {"limit": limit} if c.key else {"limit": limit, "session": self.session}
            return c.get("/bench/pending?" + urlencode(query), gateway=True, timeout=min(SHORT_TIMEOUT, c.timeout))
        return self._run(get)

    def _run(self, call: Callable[[ServiceLink], dict]) -> dict:
        """One request; a refusal or an absent service becomes a ToolError that says what to do."""
        client = None
        try:
            client = self.client()
            return call(client)
        except CommandError as e:
            message = str(e).splitlines()[0]
            if e.code == 3:
                message += "\n" + START_HINT
            elif "gateway key" in message and client is not None:
                message += ("\nSet BENCHWARMERS_KEY in this MCP server's env to a gateway key (the admin makes one "
                            "with `bench key create NAME --collections ...`)." if not client.key
                            else "\nBENCHWARMERS_KEY is set but was refused.")
            raise ToolError(message) from None
