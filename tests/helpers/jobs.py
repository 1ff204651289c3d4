"""Job helpers: run a scheduler job now on a started service and wait for its record."""
from __future__ import annotations

from tests.helpers.http import Http


def run_job(svc, name: str) -> dict:
    """POST /bench/jobs/{name}/run, wait for every run of the service to finish, and return this run."""
    http = Http(svc.url)
    status, _, d = http("POST", f"/bench/jobs/{name}/run")
    assert status == 202, d
    svc.bench.scheduler.settle()
    return http("GET", f"/bench/jobs/{d['run']['id']}")[2]["run"]
