"""Admin API for real bugs on request: what the picks of real fixes would fetch, and the job that fetches them into
the data folder's suite/tasks (`bench suite fetch`; the Suite page's offer)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..errors import BadRequest, NotFound
from ..numberchecks import row_id
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..suite import fetch
from ..suite.service import SuiteService

if TYPE_CHECKING:
    from ..bench import Bench


class FetchParts(Protocol):
    suite: SuiteService


def fetch_view(bench: FetchParts) -> dict:
    """The shipped picks' plan (how many fixes, from how many repositories, how many are there already), where
    they are downloaded from, and the fetch jobs since the service started."""
    fetching = bench.suite.fetching
    return {"plan": fetching.plan(), "source": fetch.forge(), "jobs": fetching.recent()}


def start_fetch(req: Request, bench: FetchParts) -> Response:
    body = req.json() if req.body.strip() else {}
    extra = sorted(set(body) - {"picks", "source", "dry_run"})
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "A fetch takes picks, source and dry_run.")
    picks, source, dry = body.get("picks"), body.get("source"), body.get("dry_run", False)
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise BadRequest("source must be a URL or a folder, as text.")
    if not isinstance(dry, bool):
        raise BadRequest("dry_run must be true or false.")
    given = None if picks is None else {"picks": picks}
    fetching = bench.suite.fetching
    if dry:
        return Response.json({"plan": fetching.plan(given)})
    return Response.json({"job": fetching.start(given, source and source.strip())}, 202)


def fetch_jobs(req: Request, bench: FetchParts) -> Response:
    return Response.json(fetch_view(bench))


def fetch_job(req: Request, bench: FetchParts) -> Response:
    number = row_id(req.params["id"])
    if number is None:
        raise NotFound(f"No fetching job {req.params['id'][:40]!r}.", "Job ids are whole numbers.")
    return Response.json({"job": bench.suite.fetching.get(number)})


PLAN = {"type": "object"}
ROUTES: list[Route[Bench]] = [
    Route("POST", "/bench/suite/fetch", start_fetch, "bench", ADMIN, doc=op(
        "Fetch the real-bug tasks of the picks (the shipped ones, or those sent) into the data folder's suite "
        "tasks, as a job (202 at once; 409 while another fetch runs). Each fix's two file versions are "
        "downloaded from the forge's raw files or `source`, checked against the pick's sha256. With dry_run, "
        "what it would fetch (200).", status=202, body_required=False,
        body=obj((), False, picks={"type": "array"}, source=STRING, dry_run={"type": "boolean"}),
        ok=obj(("job",), job={"type": "object"}), also={200: obj(("plan",), plan=PLAN)})),
    Route("GET", "/bench/suite/fetch", fetch_jobs, "bench", ADMIN, doc=op(
        "What the shipped picks would fetch (fixes, repositories, how many are there already) and the fetching "
        "jobs since the service started, newest first.", ok=obj(("plan", "source", "jobs"), plan=PLAN,
                                                                  source=STRING, jobs={"type": "array"}))),
    Route("GET", "/bench/suite/fetch/{id}", fetch_job, "bench", ADMIN, doc=op(
        "One fetching job: running, done, stopped or failed, with its progress, and at the end each fix written, "
        "there already or skipped and why.", ok=obj(("job",), job={"type": "object"}))),
]
