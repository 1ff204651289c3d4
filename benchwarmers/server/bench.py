"""The Bench: every part of the running service, built once at start-up and handed to every handler."""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from .. import __version__, home as home_mod
from ..core.calling import Caller
from ..core.collections import Collections
from ..core.panel import Panel
from ..core.pins import Pins
from ..core.record import Record
from ..core.route import Router
from ..core.seating import Seating
from ..errors import ConfigError
from ..roster.onboard import Onboarding
from ..roster.registry import Registry
from ..roster.resting import Resting
from ..settings import effective
from ..store import Config, Database
from ..store.calls import Calls
from ..store.verdicts import Verdicts
from .gatewaykeys import GatewayKeys
from .throttle import Guesses

log = logging.getLogger("benchwarmers.server")
NO_SETTINGS: dict = {}   # one object, so a broken settings.json is not re-read as "changed" on every call


class Bench:
    """The data folder's config and records, the roster, the core and the server's own facts, as attributes.
    A part added later is one more attribute built here, after the parts it uses."""

    def __init__(self, home: Path, *, host: str = "127.0.0.1", port: int = 0, role: str = "dashboard",
                 admin_token: str | None = None, public_hosts: tuple = ()):
        # the server's own facts
        self.home = home
        self.host, self.port, self.role = host, port, role      # role: "dashboard" (all routes) or "gateway"
        self.admin_token, self.public_hosts = admin_token, tuple(public_hosts)
        self.started, self.version = time.time(), __version__
        self._settings: tuple = (None, {})
        self._settings_lock = threading.Lock()
        # the data folder
        self.config = Config(home)
        self.db = Database(home / "bench.db")
        try:
            self._build()
        except BaseException:
            self.db.close()   # a failed start must not leave the database writer running
            raise

    def _build(self) -> None:
        self.calls = Calls(self.db)
        self.verdicts = Verdicts(self.db)
        # the roster
        self.registry = Registry(self.config)
        self.resting = Resting(self.db, self.registry.transport.limits)
        self.onboarding = Onboarding(self.registry, self.db)
        # the core
        self.collections = Collections(self.config, self.registry)
        self.record = Record(self.db, self.settings)
        self.seating = Seating(self.registry, self.calls.last_asked(), self.resting)
        self.caller = Caller(self.registry, self.calls, self.resting, self.settings)
        self.panel = Panel(self.registry, self.collections, self.seating, self.caller, self.record, self.settings,
                           workers=self.settings()["panel_workers"])
        self.router = Router(self.registry, self.collections, self.seating, self.caller, self.record,
                             Pins(self.db), self.panel.lanes, self.settings)
        # the server side
        self.gateway_keys = GatewayKeys(self.db)
        self.guesses = Guesses()

    @classmethod
    def open(cls, folder: Path | None = None, **kw) -> "Bench":
        """The bench of a data folder (seeded on first use); the admin token and public hosts default to the
        environment's BENCHWARMERS_ADMIN_TOKEN and BENCHWARMERS_PUBLIC_HOSTS."""
        folder = home_mod.ensure(Path(folder) if folder else None)
        kw["admin_token"] = kw.get("admin_token") or os.environ.get("BENCHWARMERS_ADMIN_TOKEN") or None
        if kw.get("public_hosts") is None:
            kw["public_hosts"] = tuple(h.strip().lower() for h in
                                       os.environ.get("BENCHWARMERS_PUBLIC_HOSTS", "").split(",") if h.strip())
        return cls(folder, **kw)

    def settings(self) -> dict:
        """Effective settings, read again whenever settings.json changed: a hand edit counts from the next request
        (panel_workers, the size of a thread pool, from the next start)."""
        try:
            stored = self.config.view("settings.json")
        except ConfigError:
            stored = NO_SETTINGS   # a broken hand edit must not take every request down: defaults serve, status says
        seen, values = self._settings
        if seen is not stored:
            with self._settings_lock:
                values = effective(stored)
                self._settings = (stored, values)
        return values

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        """Stop the seat workers, then commit what is queued and close the database."""
        try:
            self.panel.close()
        except Exception:   # shutting down: a failing pool must not keep the database open
            log.exception("closing the panel's seat workers failed")
        self.db.close()
