"""bench settings scheduler [on|off|jobs]: the scheduler's switch, and which jobs it runs when (under `bench settings`)."""
from __future__ import annotations

from ..servicelink import CommandError
from .output import json_asked, note, say, table, when
from .parsers import command

EXAMPLES = (
    "bench settings scheduler                      show it: on or off, each job's switch, time, next and last run",
    "bench settings scheduler on                   start running the jobs at their times",
    "bench settings scheduler off",
    "bench settings scheduler jobs --off perf       the scheduler leaves the speed test out",
    "bench settings scheduler jobs --on catalog     the daily catalog refresh too (off until you switch it on)",
    'bench settings scheduler jobs --on perf --at "perf=sun 05:30" --at probe=04:10')


def add_parser(verbs, parent) -> None:
    """`scheduler` under `bench settings`."""
    s = command(verbs, parent, "scheduler", "switch the scheduler on or off, choose its jobs", run_scheduler,
                example=EXAMPLES,
                description="The scheduler runs the daily probe, the daily suite job (it plays the suite runs the "
                            "bench owes, e.g. after quick onboarding), the daily catalog refresh and the weekly speed "
                            "test inside the service, at times of day in your local time; each call waits for your own "
                            "asks on its endpoint. It is off on a new install: nothing calls a model or fetches a "
                            "catalog on its own until you switch it on, and the catalog refresh then waits to be "
                            "switched on alone. Each job can be switched on or off alone (`jobs --on/--off`) and given "
                            "its time (`jobs --at`); `bench jobs run JOB` runs one now.")
    s.add_argument("action", nargs="?", choices=("on", "off", "jobs", "run"),
                   help="on, off, or jobs (with --on/--off/--at: which jobs it runs, and when; `run` is its old name)")
    s.add_argument("--on", action="append", default=[], metavar="JOB", help="with jobs: run JOB at its time")
    s.add_argument("--off", action="append", default=[], metavar="JOB", help="with jobs: leave JOB out")
    s.add_argument("--at", action="append", default=[], metavar="JOB=TIME",
                   help="with jobs: JOB's time, 'HH:MM' daily or 'DAY HH:MM' weekly, your local time")


def changes(args) -> dict:
    """The POST body the action and options ask for; usage errors exit 2."""
    picked = args.on or args.off or args.at
    jobs_verb = args.action in ("jobs", "run")     # run: the verb's old name, still understood
    if not jobs_verb and picked:
        raise CommandError("--on, --off and --at go with `jobs`: bench settings scheduler jobs --off perf", 2)
    if args.action in ("on", "off"):
        return {"enabled": args.action == "on"}
    if not jobs_verb:
        return {}
    if not picked:
        raise CommandError("Say what to change: jobs --on JOB, --off JOB or --at JOB=TIME.", 2)
    both = set(args.on) & set(args.off)
    if both:
        raise CommandError(f"{', '.join(sorted(both))}: both --on and --off; pick one.", 2)
    jobs: dict[str, dict] = {}
    for name in args.on:
        jobs.setdefault(name, {})["on"] = True
    for name in args.off:
        jobs.setdefault(name, {})["on"] = False
    for item in args.at:
        name, sep, at = item.partition("=")
        if not sep or not name.strip() or not at.strip():
            raise CommandError(f"--at takes JOB=TIME, e.g. --at probe=04:10, not {item!r}.", 2)
        jobs.setdefault(name.strip(), {})["at"] = at.strip()
    return {"jobs": jobs}


def run_scheduler(args, client) -> int:
    body = changes(args)
    d = client.post("/bench/scheduler", body) if body else client.get("/bench/scheduler")
    if json_asked(args, d):
        return 0
    show(d)
    return 0


def show(d: dict) -> None:
    state = "on" if d["enabled"] else "off (no job runs on its own: bench settings scheduler on)"
    say(f"Scheduler: {state}")
    say(f"Times are {d['timezone']}; {d['gap_seconds']:g} s between calls to one endpoint; a call waits up to "
        f"{d['yield_seconds']:g} s for your own asks on it.")
    rows = []
    for j in d["jobs"]:
        if not j["available"]:
            rows.append([j["name"], "-", f"not available: {j['why_not']}", "", ""])
            continue
        last = j.get("last_run")
        last_text = f"{last['status']} {when(last['started'])}: {last.get('outcome') or ''}".strip() if last else ""
        rows.append([j["name"], "on" if j["on"] else "off", f"{j['period']} {j['at']}", when(j.get("next")), last_text])
    table(["JOB", "ON", "WHEN", "NEXT", "LAST RUN"], rows)
    for problem in d.get("problems", []):
        note(f"Problem: {problem}")
