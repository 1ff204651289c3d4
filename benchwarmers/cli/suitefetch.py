"""bench suite fetch: the picks of real fixes built into the data folder's suite tasks by the service, each fix's
two file versions downloaded on this machine and checked against the pick's sha256; --dry-run lists them."""
from __future__ import annotations

import time
from pathlib import Path

from ..servicelink import CommandError
from ..suite import fetch
from ..words import plural
from .output import emit_json, note, say, table

POLL = 1.0


def add_arguments(v) -> None:
    v.add_argument("--picks", type=Path, metavar="FILE",
                   help="a picks file of your own (default: the picks shipped with Benchwarmers)")
    v.add_argument("--source", metavar="URL",
                   help="a mirror laid out as OWNER/NAME/COMMIT/PATH (default: GitHub's raw files), or a folder of "
                        "the service's machine holding such files or clones at OWNER/NAME")
    v.add_argument("--dry-run", action="store_true",
                   help="list each fix (repository, commit, licence, size) and fetch nothing")
    v.add_argument("--no-wait", action="store_true", help="start the job and return its id (it goes on in the service)")


def body_of(args) -> dict:
    body: dict = {}
    if args.picks is not None:
        try:
            body["picks"] = fetch.read_picks(args.picks)
        except ValueError as e:
            raise CommandError(f"--picks: {e}", 2) from None
    if args.source:
        body["source"] = args.source
    return body


def fetch_bugs(args, client) -> int:
    body = body_of(args)
    if args.dry_run:
        return show_plan(client.post("/bench/suite/fetch", dict(body, dry_run=True))["plan"], args)
    job = client.post("/bench/suite/fetch", body)["job"]
    note(f"Fetching job {job['id']}: {plural(job['missing'], 'real bug')} to fetch of {job['total']} picked, from "
         f"{job['source']}; each file is checked against its pick's sha256.")
    if args.no_wait:
        emit_json({"job": job}) if args.json else say(str(job["id"]))
        return 0
    job = follow_job(client, "/bench/suite/fetch", job, "done", lambda j: note(
        f"  {j['done']}/{j['total']}: {j['written']} written, {j['present']} already there, {j['skipped']} skipped"))
    if args.json:
        emit_json({"job": job})
    elif job["result"]:
        for line in fetch.report_lines(job["result"]):
            say(line)
        note(job["outcome"])
    if job["status"] != "done":
        note(f"Fetching {job['status']}: {job['error']}")
    return 0 if job["status"] == "done" else 1


def follow_job(client, route: str, job: dict, moving: str, said) -> dict:
    """Poll a suite job (seeding, fetching) until it stops running; said(job) each time its `moving` count moves."""
    seen = job[moving]
    while job["status"] == "running":
        time.sleep(POLL)
        job = client.get(f"{route}/{job['id']}")["job"]
        if job[moving] != seen:
            seen = job[moving]
            said(job)
    return job


def show_plan(plan: dict, args) -> int:
    if args.json:
        emit_json({"plan": plan})
        return 0
    table(["REPOSITORY", "COMMIT", "LICENCE", "SIZE", "PATH", "THERE"],
          [[f["repo"], f["commit"][:10], f["license"], kib(f["bytes"]), f["path"], "yes" if f["present"] else ""]
           for f in plan["fixes"]])
    note(f"{plural(plan['total'], 'fix', 'fixes')} from {plural(plan['repositories'], 'repository', 'repositories')}"
         f"; {plan['missing']} to fetch ({kib(plan['bytes'])} in all), {plan['present']} already there. Nothing "
         "was fetched (--dry-run).")
    return 0


def kib(count: int | None) -> str:
    return "?" if count is None else f"{count / 1024:,.1f} KiB"
