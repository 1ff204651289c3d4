"""The Settings page's Scheduler section: the scheduler on or off, each job on or off at its time, run now, last runs.

Read from the scheduler and its runs (as GET /bench/scheduler and GET /bench/jobs serve them), changed through POST /bench/scheduler and POST
/bench/jobs/{name}/run, as `bench settings scheduler` and `bench jobs` do. A run's page is jobrun.py.
"""
from __future__ import annotations

from ...errors import BadRequest
from ...api.scheduler import describe as scheduler_view
from ...scheduler import runs
from ..apicall import get, post
from ..render import e, link, options, secs, table, when
from ..web import Done
from ..widgets import chip, csrf, hidden

DAYS = [("mon", "Monday"), ("tue", "Tuesday"), ("wed", "Wednesday"), ("thu", "Thursday"), ("fri", "Friday"),
        ("sat", "Saturday"), ("sun", "Sunday")]
BACK = "/settings#scheduler"
RUNS_SHOWN = 10


def read(req, bench) -> dict:
    d = scheduler_view(bench)
    d.pop("now")                  # the service's clock: the page shows each job's next run instead
    return {**d, "runs": runs.recent(bench.db, RUNS_SHOWN, None)}


def show(d: dict, frame) -> str:
    problems = "".join(f'<div class="flash flash-error" role="alert">{e(p)}</div>' for p in d["problems"])
    return problems + switch(d, frame) + jobs_form(d, frame) + "<h3>Last runs</h3>" + runs_table(d["runs"])


def switch(d: dict, frame) -> str:
    if d["enabled"]:
        state = (f'{chip("active", "on")} Jobs run at their times, in the service\'s local time '
                 f'({e(d["timezone"])}); a window missed while the service was down runs once when it is back.')
        button = ("off", "Switch the scheduler off", "secondary")
    else:
        state = (f'{chip("queued", "off")} Nothing calls a model or fetches a catalog on its own; '
                 '"Run now" still runs a job when you ask.')
        button = ("on", "Switch the scheduler on", "")
    return (f'<form method="post" action="/settings/scheduler" class="switch-line">{csrf(frame)}'
            f'{hidden("enabled", button[0])}<p>{state}</p>'
            f'<button type="submit" class="{button[2]}">{e(button[1])}</button></form>')


def jobs_form(d: dict, frame) -> str:
    jobs = [j for j in d["jobs"] if j["available"]]
    rows = [[f'<strong>{e(j["name"])}</strong> <span class="muted">{e(j["period"])}</span>'
             f'<br><span class="reason">{e(j["what"])}</span>',
             f'<label class="choice"><input type="checkbox" name="on" value="{e(j["name"])}"'
             f'{" checked" if j["on"] else ""}> <span class="sr-only">{e(j["name"])}</span> on</label>',
             time_fields(j, frame), e(when(j["next"])) or '<span class="muted">not while off</span>',
             last_cell(j.get("last_run")),
             f'<button type="submit" form="run-{e(j["name"])}" class="secondary small">Run now</button>']
            for j in jobs]
    listing = table(["Job", "Switch", "When", "Next run", "Last run", ""], rows, cls="jobs")
    shown = "".join(hidden("shown", j["name"]) for j in jobs)
    runs = "".join(f'<form method="post" action="/settings/jobs/{e(j["name"])}/run" id="run-{e(j["name"])}" '
                   f'class="inline">{csrf(frame)}</form>' for j in jobs)
    gaps = (f'Probe and speed calls go one at a time per endpoint, {d["gap_seconds"]:g} s apart, and wait for your '
            f'own asks (up to {d["yield_seconds"]:g} s); the suite keeps its own pace (suite_gap_seconds).')
    return (f'<form method="post" action="/settings/scheduler/jobs" id="jobs-form">{csrf(frame)}{shown}'
            f'{listing}<p class="muted">{e(gaps)}</p>'
            '<div class="form-end"><button type="submit">Save the jobs</button></div></form>' + runs)


def time_fields(job: dict, frame) -> str:
    name = job["name"]
    day, _, clock = job["at"].rpartition(" ")
    field = (f'<input id="at-{e(name)}" name="at-{e(name)}" type="time" required '
             f'value="{e(frame.typed("at-" + name, clock))}" aria-label="{e(name)}: time of day">')
    if job["period"] != "weekly":
        return field
    return (f'<span class="when-pair"><select name="day-{e(name)}" aria-label="{e(name)}: day of the week">'
            f'{options(DAYS, frame.typed("day-" + name, day))}</select>{field}</span>')


def last_cell(run: dict | None) -> str:
    if not run:
        return '<span class="muted">never</span>'
    return f'{chip(run["status"])} ' + link(f"/settings/jobs/{run['id']}", when(run["started"]))


def took(run: dict) -> str:
    return secs(run["finished"] - run["started"]) if run.get("finished") and run.get("started") else ""


def runs_table(runs: list[dict]) -> str:
    rows = [[link(f"/settings/jobs/{r['id']}", f"#{r['id']}"), e(r["name"]), e(r["trigger"] or ""), chip(r["status"]),
             e(when(r["started"])), e(took(r)), str(r["models"]), str(r["calls"]),
             f'<span class="reason">{e(r["outcome"] or "")}</span>'] for r in runs]
    return table(["Run", "Job", "Trigger", "Status", "Started", "Took", "Models", "Calls", "Outcome"], rows,
                 "No job has run yet: switch the scheduler on, or run a job now.")


# ---- actions -----------------------------------------------------------------------------------

def set_enabled(req, bench, form) -> Done:
    want = form.get("enabled")
    if want not in ("on", "off"):
        raise BadRequest("Say on or off.")
    post(req, "/bench/scheduler", {"enabled": want == "on"})
    text = ("The scheduler is on: its jobs run at their times." if want == "on" else
            "The scheduler is off: nothing runs on its own.")
    return Done(text, BACK)


def save_jobs(req, bench, form) -> Done:
    """Only what changed is sent: a time sent again would start its windows afresh."""
    current = {j["name"]: j for j in get(req, "/bench/scheduler")["jobs"] if j["available"]}
    switched_on = set(form.getlist("on"))
    changes = {}
    for name in form.getlist("shown"):
        job = current.get(name)
        if job is None:
            continue
        change = {}
        if (name in switched_on) != job["on"]:
            change["on"] = name in switched_on
        at = form.get("at-" + name).strip()[:5]          # a browser may send seconds: HH:MM:SS
        if job["period"] == "weekly":
            at = f'{form.get("day-" + name)} {at}'
        if at.strip() and at != job["at"]:
            change["at"] = at
        if change:
            changes[name] = change
    if not changes:
        return Done("Nothing changed.", BACK)
    post(req, "/bench/scheduler", {"jobs": changes})
    return Done(f"Saved: {', '.join(describe(n, c) for n, c in sorted(changes.items()))}.", BACK,
                {"changed": changes})


def describe(name: str, change: dict) -> str:
    words = [("on" if change["on"] else "off")] if "on" in change else []
    words += [f"at {change['at']}"] if "at" in change else []
    return f"{name} {' '.join(words)}"


def run_now(req, bench, form) -> Done:
    run = post(req, f"/bench/jobs/{req.params['name']}/run")["run"]
    return Done(f"Started {run['name']} (run {run['id']}): the last runs below show how it went.", BACK,
                {"run": run})


ACTIONS = [("/settings/scheduler", set_enabled, "/settings"), ("/settings/scheduler/jobs", save_jobs, "/settings"),
           ("/settings/jobs/{name}/run", run_now, "/settings")]
