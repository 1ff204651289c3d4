"""Start and stop the service: bind checks, a background thread for tests, signals and clean shutdown."""
from __future__ import annotations

import ipaddress
import logging
import signal
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Callable

from .. import home as home_mod
from ..bench import Bench
from ..scheduler import Clock
from ..server.guard import is_loopback
from ..server.handler import Server
from ..server.tokenrule import MAKE_ONE, MIN_TOKEN, token_problem
from .app import App

log = logging.getLogger("benchwarmers")
POLL = 0.05   # seconds between the serving loop's checks for a stop


class BindRefused(Exception):
    """A non-loopback bind without an admin token: the message says what to set."""


class DataFolderUnusable(Exception):
    """The data folder cannot be created, seeded or opened: the message names it and what to do."""


def open_bench(home: Path | None, **kw) -> Bench:
    """The Bench of a data folder; a folder this user cannot create or write is reported as itself, not as a port
    the service cannot listen on."""
    folder = Path(home) if home else home_mod.resolve()
    try:
        return Bench.open(folder, **kw)
    except (OSError, sqlite3.Error) as e:
        raise unusable(folder, e) from None


def unusable(folder: Path, err: Exception) -> DataFolderUnusable:
    reason = getattr(err, "strerror", None) or str(err)
    return DataFolderUnusable(f"Cannot use the data folder {folder}: {reason}. The service creates and writes its "
                              "files there: make it writable by this user, or choose another folder with "
                              "BENCHWARMERS_HOME.")


def check_bind(host: str, token: str | None) -> None:
    """A token that cannot guard the service refuses a bind beyond loopback; on loopback, where no token is needed,
    a weak one is let be, with a warning (it still guards the admin routes from the machine's other users)."""
    problem = token_problem(token) if token or not is_loopback(host) else None
    if problem is None:
        return
    if is_loopback(host):
        log.warning("%s. Set BENCHWARMERS_ADMIN_TOKEN to a generated one, for example: %s", problem.capitalize(),
                    MAKE_ONE)
        return
    raise BindRefused(
        f"Refusing to listen on {host}: anyone who can reach it could use your keys, and {problem}.\n"
        f"Set BENCHWARMERS_ADMIN_TOKEN to a generated secret of {MIN_TOKEN}+ characters (for example: {MAKE_ONE}), "
        "or listen on 127.0.0.1.")


def _family(host: str) -> int:
    try:
        return socket.AF_INET6 if ipaddress.ip_address(host.strip("[]")).version == 6 else socket.AF_INET
    except ValueError:
        return socket.AF_INET


class Service:
    """The running service: tests start it on port 0 in a thread; serve.py runs it in the foreground."""

    def __init__(self, home: Path | None = None, host: str = "127.0.0.1", port: int = 0, role: str = "dashboard",
                 admin_token: str | None = None, public_hosts: tuple | None = None, clock: Clock | None = None):
        self.bench = open_bench(home, host=host, role=role, admin_token=admin_token, public_hosts=public_hosts,
                                clock=clock)
        try:
            check_bind(host, self.bench.admin_token)
            self.app = App(self.bench)
            self.httpd = Server((host.strip("[]"), port), self.app, _family(host))
        except BaseException:
            self.bench.close()         # a refused start must not leave the database writer running
            raise
        self.bench.port = self.httpd.server_address[1]
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def url(self) -> str:
        return self.bench.url

    def start(self) -> "Service":
        self.bench.onboard_queue.start()   # resumes what a previous run left on the queue
        # stop() waits for the serving loop's next poll: a short one makes every stop quick (a test's, a Ctrl-C's)
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": POLL},
                                        name="bench-http", daemon=True)
        self._thread.start()
        self.bench.scheduler.start()   # its thread starts and stops with the service, either role
        return self

    def serve_forever(self, ready: Callable[[], None] | None = None) -> None:
        """Foreground: Ctrl-C and SIGTERM stop it cleanly. `ready` runs once the signals are ours, so whoever
        it tells the URL to (a launcher waiting for it) can stop us at once without killing us mid-start."""
        stop = threading.Event()

        def on_signal(signum, frame):
            stop.set()

        for sig in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGBREAK", None)):
            if sig is not None:
                signal.signal(sig, on_signal)
        self.start()
        if ready:
            ready()
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        log.info("stopping: letting in-flight requests finish")
        self.stop()

    def stop(self, grace: float = 10.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.httpd.shutdown()          # no new requests
        self.httpd.server_close()
        self.bench.scheduler.stop()    # no new job runs; a running one stops at its next call
        self.bench.onboard_queue.stop()   # the item running goes back on the queue; requests waiting on it return
        self.bench.suite.stop_asking()   # a suite run asks no further item once its seat is hung up (next line)
        self.bench.panel.stopping()    # seats still out are hung up: their panels answer now with what they have
        if not self.app.wait_idle(grace):
            log.warning("some requests were still running after %.0f s; they are cut", grace)
        self.bench.close()             # queued records are committed, connections closed
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
