"""What a running job is given: the models it may call, the paced dialer, the suite, and a tally that becomes its
record."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from ..roster import healthrecord
from . import runs

ENDPOINTS_AT_ONCE = 4        # endpoints served side by side; each one sees one scheduled call at a time


class JobFailed(Exception):
    """The run failed for a reason it can say (recorded as its outcome); what it tallied so far is kept."""


class JobRun:
    def __init__(self, health, pacer, clock, name: str, run_id: int, stop: threading.Event, suite=None,
                 only: str | None = None):
        self.health, self.pacer, self.clock = health, pacer, clock
        self.db, self.registry, self.resting = health.db, health.registry, health.resting
        self.catalog, self.suite = health.catalog, suite       # suite: the bench's SuiteService
        self.settings = pacer.settings                         # () -> the effective settings
        self.name, self.id, self.stop = name, run_id, stop
        self.only = only                                       # one model's alias: the run calls it alone
        self.calls = 0
        self.touched: set[str] = set()
        self.detail: dict[str, list] = {"ok": [], "failed": [], "retired": [], "skipped": [], "endpoints": []}
        self._lock = threading.Lock()

    # ---- calls: the same two methods as the bench's Dialer, paced and counted -----------------
    def complete(self, model, ask, *, timeouts, kind: str):
        return self.pacer.complete(model, ask, timeouts, sent=lambda: self.count_call(model.alias), kind=kind)

    def list_models(self, endpoint) -> list[dict]:
        return self.pacer.list_models(endpoint, sent=self.count_call)

    def count_call(self, alias: str | None = None) -> None:
        """One call made (to `alias`'s model, when it is one): counted, and the run's lease renewed."""
        with self._lock:
            self.calls += 1
            if alias:
                self.touched.add(alias)
            models, calls = len(self.touched), self.calls
        runs.beat(self.db, self.name, self.id, self.clock.now(), models, calls)

    # ---- what it may call -----------------------------------------------------------------------
    def each_endpoint(self, work) -> None:
        """work(endpoint name, its models) for every endpoint, a few side by side: the active models the bench
        may call on its own (never an ad hoc one; a held one is skipped, with its hold as the reason)."""
        models, held = self.health.unprompted()
        if self.only is not None:
            models = [m for m in models if m.alias == self.only]
            held = {a: h for a, h in held.items() if a == self.only}
        for alias, hold in held.items():
            self.add("skipped", {"model": alias, "why": f"held: {hold['reason']}"})
        groups: dict[str, list] = {}
        for model in models:
            groups.setdefault(model.endpoint, []).append(model)
        if not groups:
            return
        with ThreadPoolExecutor(min(ENDPOINTS_AT_ONCE, len(groups)), thread_name_prefix=f"job-{self.name}") as pool:
            for future in [pool.submit(work, name, models) for name, models in sorted(groups.items())]:
                future.result()

    # ---- the tally ------------------------------------------------------------------------------
    def add(self, key: str, entry) -> None:
        with self._lock:
            self.detail[key].append(entry)

    def endpoint_words(self, name: str) -> str:
        """Why the rest of an endpoint's models are skipped: how the endpoint stands (key refused, resting)."""
        return "its endpoint: " + healthrecord.endpoint_state(self.db, self.resting, name)["state"]

    def skip(self, models, why: str) -> None:
        for model in models:
            self.add("skipped", {"model": model.alias, "why": why})
