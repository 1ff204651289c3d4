"""The Bench: every part of the running service, built once at start-up and handed to every handler."""
from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from . import __version__, home as home_mod, keys
from .catalog import Catalog
from .core.bestpick import Best
from .core.calling import Dialer
from .core.collection import Collections
from .core.panel import Panel
from .core.pins import Pins
from .core.pointverdicts import PointVerdicts
from .core.rankings import Rankings
from .core.ratings import Ratings
from .core.route import Router
from .core.seating import Seating
from .core.shadowjudge import ShadowJudge
from .errors import ConfigError
from .mcp.sessions import Sessions
from .roster.health import Health
from .roster.limits.budgets import Budgets
from .roster.limits.quota import Quota
from .roster.limits.resting import Resting
from .roster.onboard import Onboarding
from .roster.onboardqueue import OnboardQueue
from .roster.registry import Endpoint, Registry
from .roster.speed import Paces
from .scheduler import Clock, Scheduler
from .server.gatewaykeys import GatewayKeys
from .server.logins import Logins
from .server.throttle import Guesses
from .settings import effective
from .signin.flows import Flows
from .signin.renewal import Renewer
from .store import Config, Database
from .store.bestpicks import BestPicks
from .store.calls import Calls
from .store.judgestore import JudgeStore
from .store.pointstore import PointStore
from .store.verdicts import Verdicts
from .suite.service import SuiteService

log = logging.getLogger("benchwarmers.server")
NO_SETTINGS: dict = {}   # one object, so a broken settings.json is not re-read as "changed" on every call
SETTINGS_MEMO = ("settings",)   # where a Config.steady() memo keeps the effective settings (not a file name)


class Bench:
    """The data folder's config and records, the roster and catalog, the core and the server's own facts, as attributes.
    A part added later is one more attribute built here, after the parts it uses."""

    def __init__(self, home: Path, *, host: str = "127.0.0.1", port: int = 0, role: str = "dashboard",
                 admin_token: str | None = None, public_hosts: tuple = (), clock: Clock | None = None):
        # the server's own facts
        self.home = home
        self.host, self.port, self.role = host, port, role      # role: "dashboard" (all routes) or "gateway"
        self.admin_token, self.public_hosts = admin_token, tuple(public_hosts)
        self.started, self.version = time.time(), __version__
        self._settings: tuple = (None, {})
        self._settings_lock = threading.Lock()
        self.clock = clock or Clock()        # the scheduler's and the rate limits' (tests give one they control)
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
        keys.learn()     # every key it may send is known to redaction before the first prompt is recorded
        self.registry.tokens = Renewer(self.config, self.db, self.home)   # signed-in tokens renewed before expiry
        self.resting = Resting(self.db, self.registry.transport.limits, self.config.memo)
        # the user's rate limits, counted per connection and model from the usage ledger (the scheduler's clock)
        self.quota = Quota(self.db, self.config, self.resting, self.clock)
        # the user's monthly budgets in dollars, held before each priced call and booked after (months in local time)
        self.budgets = Budgets(self.db, self.config, self.clock)
        self.catalog = Catalog(self.home, self.config, self.registry)
        # the one way to call a member: seats, merges, route turns, probes (onboarding's too) and speed tests; each
        # is counted against the rate limits before it is sent, and goes into the usage ledger
        self.paces = Paces(self.db)     # each model's measured speed: output caps and seating read it per seat
        self.dialer = Dialer(self.registry, self.calls, self.resting, self.settings, self.catalog.facts,
                             quota=self.quota, price=self.catalog.price, paces=self.paces.of, budgets=self.budgets)
        # the core
        self.collections = Collections(self.config, self.registry)
        self.rankings = Rankings(self.db, self.settings)
        self.seating = Seating(self.registry, self.calls.last_asked(self._aliases()), self.resting, self.catalog,
                               self.dialer)
        self.point_store = PointStore(self.db)   # the referee's points: kept by the panel, judged by the user
        self.panel = Panel(self.registry, self.collections, self.seating, self.dialer, self.rankings, self.settings,
                           self.point_store, workers=self.settings()["panel_workers"])
        self.points = PointVerdicts(self.point_store, self.settings)   # a panel's points, judged once for every seat
        self.best = Best(BestPicks(self.db))     # a panel's best answer: comparisons for the ratings
        self.ratings = Ratings(self.best.store)  # Bradley-Terry from those comparisons, fitted when they change
        self.referees = self.panel.picker   # who referees and merges a panel (never its own seat when another can)
        # route mode's shadow answers judged by a collection's judge model, apart from the user's verdicts
        self.judges = ShadowJudge(self.registry, self.dialer, JudgeStore(self.db), self.panel.lanes)
        self.router = Router(self.registry, self.collections, self.seating, self.dialer, self.rankings,
                             Pins(self.db), self.panel.lanes, self.settings, self.judges)
        # the suite: its runs ask models directly through the panel, in this process (no gateway key needed)
        self.suite = SuiteService(self.home, self.db, self.registry, self.catalog.held, self.settings, self.panel)
        # onboarding probes through the dialer; a full one runs the suite, a quick one owes it
        self.onboarding = Onboarding(self.registry, self.db, self.dialer, self.suite, provider_of=self.provider_at)
        self.onboard_queue = OnboardQueue(self.onboarding, self.db, self.home / "runs")   # its worker starts with
        # the service (or at the first item queued), so a bench opened only to read starts no thread
        # the bench looking after itself: checks and retirements, and the jobs that run them (the service
        # starts the scheduler's thread; a bench without a service never runs a job on its own)
        self.health = Health(self.registry, self.db, self.resting, self.dialer, self.catalog)
        self.scheduler = Scheduler(self.config, self.health, self.dialer, clock=self.clock, suite=self.suite)
        # the server side
        self.gateway_keys = GatewayKeys(self.db)
        self.guesses = Guesses()                # wrong secrets per address: the throttle on guessing
        self.logins = Logins()                  # the dashboard's sessions, in memory (a restart ends them)
        self.mcp_sessions = Sessions()          # MCP over HTTP (/mcp): in memory, ended by a restart
        self.signins = Flows()              # provider sign-ins under way, in memory (a restart forgets them)

    def _aliases(self) -> list[str]:
        try:
            return list(self.registry.models())
        except ConfigError:   # models.json broken by hand: seating starts with no history (status says which line)
            return []

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
        (panel_workers, the size of a thread pool, from the next start). Within a Config.steady() block (a request
        and its panel's seats, which ask it dozens of times) the answer is kept in the block's memo."""
        return self.config.kept(SETTINGS_MEMO, self._effective)

    def _effective(self) -> dict:
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

    def provider_at(self, base_url: str) -> str | None:
        """The catalog's provider for a base URL (a hub's source): as for an endpoint there."""
        return self.catalog.provider_of(Endpoint("", base_url))

    @property
    def url(self) -> str:
        host = self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def close(self) -> None:
        """Stop the scheduler, the onboarding worker, the suite's worker and the seat workers, then commit what is
        queued and close the database."""
        for name, stop in (("the scheduler", self.scheduler.stop), ("the onboarding queue", self.onboard_queue.close),
                           ("the suite's worker", self.suite.close), ("the panel's seat workers", self.panel.close)):
            try:
                stop()
            except Exception:   # shutting down: a part failing to stop must not keep the database open
                log.exception("stopping %s failed", name)
        self.db.close()
