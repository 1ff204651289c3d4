"""The running service's shared state: data folder, config, database, settings and the bind address."""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__, home as home_mod
from ..errors import ConfigError
from ..settings import effective
from ..store import Config, Database

log = logging.getLogger("benchwarmers.server")
_NO_SETTINGS: dict = {}


@dataclass
class Context:
    home: Path
    config: Config
    db: Database
    host: str = "127.0.0.1"
    port: int = 0
    role: str = "dashboard"          # "dashboard" (dashboard + gateway) or "gateway" (gateway routes alone)
    admin_token: str | None = None
    public_hosts: tuple = ()
    started: float = field(default_factory=time.time)
    version: str = __version__
    services: dict = field(default_factory=dict)   # lazily built core parts (panel, router, ...)
    _lock: threading.RLock = field(default_factory=threading.RLock)

    @classmethod
    def open(cls, folder: Path | None = None, **kw) -> "Context":
        folder = home_mod.ensure(Path(folder) if folder else None)
        token = kw.pop("admin_token", None) or os.environ.get("BENCHWARMERS_ADMIN_TOKEN") or None
        hosts = kw.pop("public_hosts", None)
        if hosts is None:
            hosts = tuple(h.strip().lower() for h in os.environ.get("BENCHWARMERS_PUBLIC_HOSTS", "").split(",")
                          if h.strip())
        return cls(home=folder, config=Config(folder), db=Database(folder / "bench.db"),
                   admin_token=token, public_hosts=tuple(hosts), **kw)

    @property
    def settings(self) -> dict:
        """Effective settings, recomputed only when a config file changed."""
        try:
            stored = self.config.view("settings.json")
        except ConfigError:
            # A broken hand edit must not take every request down: defaults serve, /bench/status reports it.
            stored = _NO_SETTINGS
        cached = self.services.get("_settings")
        if cached is None or cached[0] is not stored:
            cached = (stored, effective(stored))
            self.services["_settings"] = cached
        return cached[1]

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def service(self, name: str, build):
        """One instance of a core part per service, built on first use."""
        with self._lock:
            if name not in self.services:
                self.services[name] = build(self)
            return self.services[name]

    def close(self) -> None:
        for name, part in list(self.services.items()):
            if name.startswith("_"):
                continue
            closer = getattr(part, "close", None)
            if closer:
                try:
                    closer()
                except Exception:   # shutting down: one part failing to close must not keep the rest open
                    log.exception("closing %s failed", name)
        self.db.close()
