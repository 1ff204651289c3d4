"""bench jobs [run JOB | show ID]: the scheduler's recent runs, one run, or a job run now."""
from __future__ import annotations

import time
from urllib.parse import urlencode

from ..servicelink import CommandError, q
from ..words import plural
from .output import emit_json, json_asked, note, say, table, when
from .parsers import command, verbs

POLL_SECONDS = 1.0


def register(sub, parent) -> None:
    p = command(sub, parent, "jobs", "recent job runs; run a job now", run_list,
                description="Recent runs of the scheduler's jobs (onboardings: bench onboard): when, what started it "
                            "(schedule, catch-up, now), models touched, calls made and the outcome.",
                example=("bench jobs", "bench jobs --name probe --limit 5", "bench jobs run probe --wait",
                         "bench jobs show 12 --json"))
    p.add_argument("--name", help="only runs of this job")
    p.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    under = verbs(p, refuse=False)
    r = command(under, parent, "run", "run a job now (whether or not the scheduler is on)", run_now,
                description="Start a job now. It runs paced, like a scheduled run; without --wait the command returns "
                            "at once with the run's id.",
                example=("bench jobs run probe", "bench jobs run perf --wait"))
    r.add_argument("job", help="probe, perf, suite or catalog")
    r.add_argument("--wait", action="store_true", help="wait until it is done and print its outcome")
    command(under, parent, "show", "one run with its details", run_show,
            example="bench jobs show 12").add_argument("id", type=int)


def took(run: dict) -> str:
    if not run.get("finished"):
        return "running" if run["status"] == "running" else ""
    return f"{run['finished'] - run['started']:.0f}s"


def run_list(args, client) -> int:
    query = {"limit": args.limit, **({"name": args.name} if args.name else {})}
    d = client.get("/bench/jobs?" + urlencode(query))
    if json_asked(args, d):
        return 0
    if not d["runs"]:
        note("No job runs yet. The scheduler is off on a new install: bench settings scheduler")
        return 0
    table(["ID", "JOB", "TRIGGER", "STATUS", "STARTED", "TOOK", "MODELS", "CALLS", "OUTCOME"],
          [[r["id"], r["name"], r["trigger"] or "", r["status"], when(r["started"]), took(r), r["models"],
            r["calls"], r["outcome"] or ""] for r in d["runs"]])
    return 0


def run_now(args, client) -> int:
    run = client.post(f"/bench/jobs/{q(args.job)}/run", {})["run"]
    if not args.wait:
        if args.json:
            emit_json({"run": run})
        else:
            say(f"Started {run['name']} (run {run['id']}). Follow it: bench jobs show {run['id']}")
        return 0
    note(f"Running {run['name']} (run {run['id']})...")
    deadline = time.monotonic() + client.timeout
    while run["status"] == "running":
        if time.monotonic() > deadline:
            raise CommandError(f"Run {run['id']} was still running after {client.timeout:.0f} s "
                               f"(BENCHWARMERS_TIMEOUT); it goes on in the service: bench jobs show {run['id']}")
        time.sleep(POLL_SECONDS)
        run = client.get(f"/bench/jobs/{run['id']}")["run"]
    return _print(args, run)


def run_show(args, client) -> int:
    return _print(args, client.get(f"/bench/jobs/{args.id}")["run"])


def _print(args, run: dict) -> int:
    if args.json:
        emit_json({"run": run})
    else:
        say(f"Run {run['id']}: {run['name']} ({run['trigger'] or 'asked'}), {run['status']}, started "
            f"{when(run['started'])}" + (f", took {took(run)}" if run.get("finished") else ""))
        counted = f"{plural(run['models'] or 0, 'model')}, {plural(run['calls'] or 0, 'call')}"
        say(f"{counted}: {run['outcome'] or ''}".rstrip(": "))
        detail = run.get("detail") or {}
        for key in ("retired", "failed", "skipped", "endpoints"):
            for item in detail.get(key) or []:
                say(f"  {key}: " + (", ".join(f"{k} {v}" for k, v in item.items()) if isinstance(item, dict) else item))
    return 0 if run["status"] in ("done", "running", "skipped") else 1
