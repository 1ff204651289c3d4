"""/bench/scheduler and /bench/jobs: the scheduler's switches and times, job runs, and running a job now."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..errors import BadRequest, NotFound
from ..numberchecks import row_id
from ..roster.registry import Registry
from ..scheduler import Scheduler, config, runs
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Config, Database
from .parts import EffectiveSettings, Records

if TYPE_CHECKING:
    from ..bench import Bench


class SchedulerParts(EffectiveSettings, Protocol):
    config: Config
    db: Database
    registry: Registry
    scheduler: Scheduler


def describe(bench: SchedulerParts) -> dict:
    """The scheduler as the CLI and the dashboard show it: on or off, each job's switch, time, next and last run."""
    sched = bench.scheduler
    s = sched.settings()
    now = sched.clock.now()
    out = []
    for job in sched.jobs.values():
        entry = {"name": job.name, "available": job.available, "period": job.period, "what": job.what}
        if not job.available:
            entry["why_not"] = job.why_not
        else:
            js = s.jobs[job.name]
            last = runs.recent(bench.db, 1, job.name)
            entry.update(on=js.on, at=js.at.text(), next=js.at.after(sched.clock, now) if s.enabled and js.on else None,
                         last_run=last[0] if last else None)
        out.append(entry)
    settings = bench.settings()
    return {"enabled": s.enabled, "timezone": sched.clock.zone(), "now": now, "jobs": out,
            "gap_seconds": settings["scheduler_gap_seconds"], "yield_seconds": settings["scheduler_yield_seconds"],
            "problems": s.problems}


def get_scheduler(req: Request, bench: SchedulerParts) -> Response:
    return Response.json(describe(bench))


def set_scheduler(req: Request, bench: SchedulerParts) -> Response:
    sched = bench.scheduler
    body = req.json()
    config.update(bench.config, sched.jobs, body)
    for name, change in (body.get("jobs") or {}).items():
        if "at" in change:        # a new time counts from now: moving it earlier must not start a catch-up
            runs.stop_counting(bench.db, name)
    sched.tick()                  # a job switched on starts counting its windows now; one switched off stops
    return Response.json(describe(bench))


def _number(req: Request, name: str, default: int, top: int) -> int:
    try:
        value = int(req.query.get(name, default))
    except ValueError:
        raise BadRequest(f"{name} must be a whole number.") from None
    if not 1 <= value <= top:
        raise BadRequest(f"{name} must be from 1 to {top}.")
    return value


def list_runs(req: Request, bench: Records) -> Response:
    name = req.query.get("name") or None
    return Response.json({"runs": runs.recent(bench.db, _number(req, "limit", 20, 500), name), "name": name})


def run_view(bench: Records, ident: str) -> dict:
    """One job run with its detail; 404 for an id that is no run."""
    number = row_id(ident)
    if number is None:
        raise NotFound(f"No job run {ident[:40]!r}: run ids are numbers.", "`bench jobs` lists them.")
    run = runs.get(bench.db, number)
    if run is None:
        raise NotFound(f"No job run {ident}.", "`bench jobs` lists the recent ones.")
    return {"run": run}


def get_run(req: Request, bench: Records) -> Response:
    return Response.json(run_view(bench, req.params["id"]))


def run_job(req: Request, bench: SchedulerParts) -> Response:
    only = req.query.get("model") or None
    if only is not None:
        bench.registry.model(only)        # a 404 naming close aliases for one not on the bench
    return Response.json({"run": bench.scheduler.run_now(req.params["name"], only)}, 202)


SCHEDULER = obj(("enabled", "jobs"), enabled={"type": "boolean"}, jobs={"type": "array"})
RUN = obj(("run",), run={"type": "object"})
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/scheduler", get_scheduler, "bench", ADMIN, doc=op(
        "The scheduler: on or off, each job's switch, time, next and last run.", ok=SCHEDULER)),
    Route("POST", "/bench/scheduler", set_scheduler, "bench", ADMIN, doc=op(
        "Switch the scheduler or its jobs on or off, or move a job's time.",
        body=obj(enabled={"type": "boolean"}, jobs={"type": "object"}), ok=SCHEDULER)),
    Route("GET", "/bench/jobs", list_runs, "bench", ADMIN, doc=op(
        "Recent job runs, newest first.", query={"name": STRING, "limit": {"type": "integer"}},
        ok=obj(("runs",), runs={"type": "array"}))),
    Route("GET", "/bench/jobs/{id}", get_run, "bench", ADMIN, doc=op("One job run.", ok=RUN)),
    Route("POST", "/bench/jobs/{name}/run", run_job, "bench", ADMIN, doc=op(
        "Run a job now, in the background (202 at once); probe and perf take ?model= for one model alone.",
        query={"model": STRING}, status=202, ok=RUN)),
]
