"""Admin API for the suite: tasks (list, show, accept drafts, remove), runs (start, progress, cancel), scores,
seeding from the user's repos and mining drafts from verdicts."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..catalog import Catalog
from ..core.collection import Collections
from ..errors import BadRequest, Conflict, NotFound
from ..numberchecks import row_id
from ..roster import health
from ..roster.registry import Registry
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Database
from ..suite import mine, seed, tasks as tasks_mod
from ..suite.service import SuiteService

if TYPE_CHECKING:
    from ..bench import Bench


class SuiteViewParts(Protocol):
    """The suite's tasks (in the data folder) and its runs."""
    home: Path
    suite: SuiteService


class SuiteParts(SuiteViewParts, Protocol):
    catalog: Catalog
    collections: Collections
    db: Database
    registry: Registry


def whole_number(req: Request, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(req.query.get(name, default))
    except ValueError:
        raise BadRequest(f"{name} must be a whole number.") from None
    if not low <= value <= high:
        raise BadRequest(f"{name} must be from {low} to {high}.")
    return value


def overview_view(bench: SuiteViewParts) -> dict:
    """The tasks counted by kind and status, the problems of the ones that cannot be read, recent runs, scores."""
    found, problems = tasks_mod.load_all(bench.home)
    counts: dict = {}
    for t in found.values():
        counts.setdefault(f"{t.kind}_{t.status}", 0)
        counts[f"{t.kind}_{t.status}"] += 1
    s = bench.suite
    return {"tasks": counts, "problems": problems, "runs": s.store.runs(limit=10), "scores": s.store.scores()}


def overview(req: Request, bench: SuiteParts) -> Response:
    return Response.json(overview_view(bench))


def tasks_view(bench: SuiteViewParts, status: str = "all") -> dict:
    """The tasks (all, ready or draft), by id, with the problems of the ones that cannot be read."""
    if status not in ("all", *tasks_mod.STATUSES):
        raise BadRequest("status must be all, ready or draft.")
    found, problems = tasks_mod.load_all(bench.home)
    return {"tasks": [t.summary() for _, t in sorted(found.items()) if status in ("all", t.status)],
            "problems": problems}


def list_tasks(req: Request, bench: SuiteParts) -> Response:
    return Response.json(tasks_view(bench, req.query.get("status", "all")))


def show_task(req: Request, bench: SuiteParts) -> Response:
    return Response.json({"task": tasks_mod.get(bench.home, req.params["id"]).to_dict()})


def own_task(bench: SuiteParts, task_id: str):
    task = tasks_mod.get(bench.home, task_id)
    if task.origin != "data":
        raise BadRequest(f"{task_id!r} is a starter task, shipped with Benchwarmers; it cannot be changed here.",
                         "Copy its folder into the data folder's suite/tasks to make your own version.")
    return task


def accept_task(req: Request, bench: SuiteParts) -> Response:
    task = own_task(bench, req.params["id"])
    if task.status != "draft":
        raise Conflict(f"{task.id!r} is already {task.status}.")
    tasks_mod.set_status(task, "ready")
    return Response.json({"task": task.summary()})


def remove_task(req: Request, bench: SuiteParts) -> Response:
    task = own_task(bench, req.params["id"])
    shutil.rmtree(task.folder)
    return Response.json({"removed": task.id})


def models_for(bench: SuiteParts, body: dict) -> list[str]:
    """The model named, or the active members of the collection named; a held model is not called."""
    model, collection = body.get("model"), body.get("collection")
    if bool(model) == bool(collection):
        raise BadRequest("Name one model or one collection.", 'Send {"model": ALIAS} or {"collection": NAME}.')
    if model:
        if not isinstance(model, str):
            raise BadRequest("model must be a model alias.")
        found = bench.registry.model(model)
        if not found.active:
            raise BadRequest(f"{model!r} is retired.", f"Restore it first: bench model restore {model}.")
        health.refuse_held(bench.catalog, found.alias)
        return [found.alias]
    if not isinstance(collection, str):
        raise BadRequest("collection must be a collection name.")
    models = bench.registry.models()
    members = [m for m in bench.collections.get(collection).members
               if m in models and models[m].active and not bench.catalog.held(m)]
    if not members:
        raise BadRequest(f"The collection {collection!r} has no active members to run the suite for (held ones "
                         "wait for `bench model confirm`).")
    return members


def start_runs(req: Request, bench: SuiteParts) -> Response:
    body = req.json()
    extra = sorted(set(body) - {"model", "collection", "tasks"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "A run takes model or collection, and tasks.")
    globs = body.get("tasks")
    if globs is not None and (not isinstance(globs, str) or not globs.strip()):
        raise BadRequest("tasks must be glob patterns of task ids, comma-separated (e.g. claim-*).")
    runs = bench.suite.start(models_for(bench, body), globs, "asked")
    return Response.json({"runs": runs}, 202)


def list_runs(req: Request, bench: SuiteParts) -> Response:
    limit = whole_number(req, "limit", 50, 1, 1000)
    runs = bench.suite.store.runs(req.query.get("model"), req.query.get("status"), limit)
    return Response.json({"runs": runs})


def run_id(ident: str) -> int:
    number = row_id(ident)
    if number is None:
        raise NotFound(f"No suite run {ident[:40]!r}.", "Run ids are whole numbers.")
    return number


def run_view(bench: SuiteViewParts, ident: str) -> dict:
    """One suite run and every item's outcome; 404 for an id that is no run."""
    store = bench.suite.store
    run = store.run(run_id(ident))
    if run is None:
        raise NotFound(f"No suite run {ident}.", "`bench suite runs` lists them.")
    return {"run": run, "results": store.items(run["id"])}


def show_run(req: Request, bench: SuiteParts) -> Response:
    return Response.json(run_view(bench, req.params["id"]))


def cancel_run(req: Request, bench: SuiteParts) -> Response:
    return Response.json({"run": bench.suite.cancel(run_id(req.params["id"]))})


def scores(req: Request, bench: SuiteParts) -> Response:
    model = req.query.get("model") or None
    return Response.json({"scores": bench.suite.store.scores(model)})


def seed_repo(req: Request, bench: SuiteParts) -> Response:
    body = req.json()
    extra = sorted(set(body) - {"repo", "count", "seed", "deadline_seconds"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "Seeding takes repo, count, seed and "
                         "deadline_seconds.")
    repo = body.get("repo")
    if not isinstance(repo, str) or not repo:
        raise BadRequest("Say which repo: its name in config/repos.json.", 'Send {"repo": NAME}.')
    count, number = body.get("count", 20), body.get("seed", 0)
    deadline = body.get("deadline_seconds", seed.DEFAULT_DEADLINE)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (count, number, deadline)):
        raise BadRequest("count, seed and deadline_seconds must be whole numbers.")
    return Response.json({"job": bench.suite.seeding.start(repo, count, number, deadline)}, 202)


def seed_jobs(req: Request, bench: SuiteParts) -> Response:
    return Response.json({"jobs": bench.suite.seeding.recent()})


def seed_job(req: Request, bench: SuiteParts) -> Response:
    number = row_id(req.params["id"])
    if number is None:
        raise NotFound(f"No seeding job {req.params['id'][:40]!r}.", "Job ids are whole numbers.")
    return Response.json({"job": bench.suite.seeding.get(number)})


def mine_verdicts(req: Request, bench: SuiteParts) -> Response:
    return Response.json(mine.mine(bench.home, bench.db))


TASK = obj(("task",), task={"type": "object"})
RUN = obj(("run",), run={"type": "object"})
RUNS = obj(("runs",), runs={"type": "array"})
JOB = obj(("job",), job={"type": "object"})
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/suite", overview, "bench", ADMIN, doc=op(
        "The suite: task counts by kind and status, problems, the last runs and the scores.",
        ok=obj(("tasks", "runs", "scores"), tasks={"type": "object"}, runs={"type": "array"}))),
    Route("GET", "/bench/suite/tasks", list_tasks, "bench", ADMIN, doc=op(
        "The suite's tasks (all, ready or draft).", query={"status": STRING},
        ok=obj(("tasks", "problems"), tasks={"type": "array"}))),
    Route("GET", "/bench/suite/tasks/{id}", show_task, "bench", ADMIN, doc=op("One task whole.", ok=TASK)),
    Route("POST", "/bench/suite/tasks/{id}/accept", accept_task, "bench", ADMIN, doc=op(
        "A draft of the data folder joins the suite (409 when it is not a draft).", ok=TASK)),
    Route("DELETE", "/bench/suite/tasks/{id}", remove_task, "bench", ADMIN, doc=op(
        "Remove a task of the data folder (a starter task cannot be).", ok=obj(("removed",), removed=STRING))),
    Route("GET", "/bench/suite/runs", list_runs, "bench", ADMIN, doc=op(
        "Suite runs, newest first.", query={"model": STRING, "status": STRING, "limit": {"type": "integer"}},
        ok=RUNS)),
    Route("POST", "/bench/suite/runs", start_runs, "bench", ADMIN, doc=op(
        "Start suite runs for a model or a collection's active members, one run per model (202 at once).",
        status=202, body=obj((), False, model=STRING, collection=STRING, tasks=STRING), ok=RUNS)),
    Route("GET", "/bench/suite/runs/{id}", show_run, "bench", ADMIN, doc=op(
        "One run: its progress and results.", ok=obj(("run", "results"), run={"type": "object"},
                                                      results={"type": "array"}))),
    Route("POST", "/bench/suite/runs/{id}/cancel", cancel_run, "bench", ADMIN, doc=op(
        "Stop a run after the call in flight (409 when it is over).", ok=RUN)),
    Route("GET", "/bench/suite/scores", scores, "bench", ADMIN, doc=op(
        "Suite scores per model and purpose.", query={"model": STRING}, ok=obj(("scores",),
                                                                              scores={"type": "object"}))),
    Route("POST", "/bench/suite/seed", seed_repo, "bench", ADMIN, doc=op(
        "Start planting bugs in a repo of config/repos.json, as a job with a deadline (202 at once; 409 while "
        "another seeding runs). Each bug is kept only when shown to change behaviour.", status=202,
        body=obj(("repo",), False, repo=STRING, count={"type": "integer"}, seed={"type": "integer"},
                 deadline_seconds={"type": "integer"}), ok=JOB)),
    Route("GET", "/bench/suite/seed", seed_jobs, "bench", ADMIN, doc=op(
        "The seeding jobs since the service started, newest first.", ok=obj(("jobs",), jobs={"type": "array"}))),
    Route("GET", "/bench/suite/seed/{id}", seed_job, "bench", ADMIN, doc=op(
        "One seeding job: running, done, stopped or failed, with what it made, dropped and why.", ok=JOB)),
    Route("POST", "/bench/suite/mine", mine_verdicts, "bench", ADMIN, doc=op(
        "Draft claim tasks from the verdicts given on answers.", ok=obj(("drafted",), drafted={"type": "array"}))),
]
