"""The Settings page's Scheduler section: the scheduler on or off, each job on or off at its time, run now, last runs.

Read from the scheduler and its runs (as GET /bench/scheduler and GET /bench/jobs serve them), changed through
POST /bench/scheduler and POST /bench/jobs/{name}/run, as `bench settings scheduler` and `bench jobs` do. A run's
page is jobrun.py.
"""
from __future__ import annotations

from ...api.scheduler import SchedulerParts, describe as scheduler_view
from ...errors import BadRequest
from ...scheduler import runs
from ...server.messages import Request
from ..apicall import get, post
from ..markup import Html, flag, html, link, options, table
from ..render import secs, when
from ..web import Done, Form, Frame
from ..widgets import chip, csrf, hidden, muted

DAYS = [("mon", "Monday"), ("tue", "Tuesday"), ("wed", "Wednesday"), ("thu", "Thursday"), ("fri", "Friday"),
        ("sat", "Saturday"), ("sun", "Sunday")]
BACK = "/settings#scheduler"
RUNS_SHOWN = 10


def read(req: Request, bench: SchedulerParts) -> dict:
    d = scheduler_view(bench)
    d.pop("now")                  # the service's clock: the page shows each job's next run instead
    return {**d, "runs": runs.recent(bench.db, RUNS_SHOWN, None)}


def show(d: dict, frame: Frame) -> Html:
    problems = [html('<div class="flash flash-error" role="alert">$p</div>', p=p) for p in d["problems"]]
    return html("$problems$switch$jobs<h3>Last runs</h3>$runs", problems=problems, switch=switch(d, frame),
                jobs=jobs_form(d, frame), runs=runs_table(d["runs"]))


def switch(d: dict, frame: Frame) -> Html:
    if d["enabled"]:
        state = html("$chip Jobs run at their times, in the service's local time ($tz); a window missed while the "
                     "service was down runs once when it is back.", chip=chip("active", "on"), tz=d["timezone"])
        want, label, cls = "off", "Switch the scheduler off", "secondary"
    else:
        state = html('$chip Nothing calls a model or fetches a catalog on its own; "Run now" still runs a job when you '
                     "ask.", chip=chip("queued", "off"))
        want, label, cls = "on", "Switch the scheduler on", ""
    return html('<form method="post" action="/settings/scheduler" class="switch-line">$csrf$enabled<p>$state</p>'
                '<button type="submit" class="$cls">$label</button></form>', csrf=csrf(frame),
                enabled=hidden("enabled", want), state=state, cls=cls, label=label)


def jobs_form(d: dict, frame: Frame) -> Html:
    jobs = [j for j in d["jobs"] if j["available"]]
    rows = [[html('<strong>$name</strong> <span class="muted">$period</span><br><span class="reason">$what</span>',
                  name=j["name"], period=j["period"], what=j["what"]),
             html('<label class="choice"><input type="checkbox" name="on" value="$name"$on> <span class="sr-only">$name'
                  "</span> on</label>", name=j["name"], on=flag("checked", j["on"])),
             time_fields(j, frame), when(j["next"]) or muted("not while off"), last_cell(j.get("last_run")),
             html('<button type="submit" form="run-$name" class="secondary small">Run now</button>', name=j["name"])]
            for j in jobs]
    runs = [html('<form method="post" action="/settings/jobs/$name/run" id="run-$name" class="inline">$csrf</form>',
                 name=j["name"], csrf=csrf(frame)) for j in jobs]
    gaps = (f'Probe and speed calls go one at a time per endpoint, {d["gap_seconds"]:g} s apart, and wait for your '
            f'own asks (up to {d["yield_seconds"]:g} s); the suite keeps its own pace (suite_gap_seconds).')
    return html('<form method="post" action="/settings/scheduler/jobs" id="jobs-form">$csrf$shown$listing'
                '<p class="muted">$gaps</p><div class="form-end"><button type="submit">Save the jobs</button></div>'
                "</form>$runs", csrf=csrf(frame), shown=[hidden("shown", j["name"]) for j in jobs],
                listing=table(["Job", "Switch", "When", "Next run", "Last run", ""], rows, cls="jobs"), gaps=gaps,
                runs=runs)


def time_fields(job: dict, frame: Frame) -> Html:
    name = job["name"]
    day, _, clock = job["at"].rpartition(" ")
    field = html('<input id="at-$name" name="at-$name" type="time" required value="$clock" aria-label="$name: time of '
                 'day">', name=name, clock=frame.typed("at-" + name, clock))
    if job["period"] != "weekly":
        return field
    return html('<span class="when-pair"><select name="day-$name" aria-label="$name: day of the week">$days</select>'
                "$field</span>", name=name, days=options(DAYS, frame.typed("day-" + name, day)), field=field)


def last_cell(run: dict | None) -> Html:
    if not run:
        return muted("never")
    return html("$chip $link", chip=chip(run["status"]), link=link(f"/settings/jobs/{run['id']}", when(run["started"])))


def took(run: dict) -> str:
    return secs(run["finished"] - run["started"]) if run.get("finished") and run.get("started") else ""


def runs_table(runs: list[dict]) -> Html:
    rows = [[link(f"/settings/jobs/{r['id']}", f"#{r['id']}"), r["name"], r["trigger"] or "", chip(r["status"]),
             when(r["started"]), took(r), r["models"], r["calls"],
             html('<span class="reason">$o</span>', o=r["outcome"] or "")] for r in runs]
    return table(["Run", "Job", "Trigger", "Status", "Started", "Took", "Models", "Calls", "Outcome"], rows,
                 "No job has run yet: switch the scheduler on, or run a job now.")


# ---- actions -----------------------------------------------------------------------------------

def set_enabled(req: Request, bench: object, form: Form) -> Done:
    want = form.get("enabled")
    if want not in ("on", "off"):
        raise BadRequest("Say on or off.")
    post(req, "/bench/scheduler", {"enabled": want == "on"})
    text = ("The scheduler is on: its jobs run at their times." if want == "on" else
            "The scheduler is off: nothing runs on its own.")
    return Done(text, BACK)


def save_jobs(req: Request, bench: object, form: Form) -> Done:
    """Only what changed is sent: a time sent again would start its windows afresh."""
    current = {j["name"]: j for j in get(req, "/bench/scheduler")["jobs"] if j["available"]}
    switched_on = set(form.getlist("on"))
    changes = {}
    for name in form.getlist("shown"):
        job = current.get(name)
        if job is None:
            continue
        change: dict[str, bool | str] = {}
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


def run_now(req: Request, bench: object, form: Form) -> Done:
    run = post(req, f"/bench/jobs/{req.params['name']}/run")["run"]
    return Done(f"Started {run['name']} (run {run['id']}): the last runs below show how it went.", BACK,
                {"run": run})


ACTIONS = [("/settings/scheduler", set_enabled, "/settings"), ("/settings/scheduler/jobs", save_jobs, "/settings"),
           ("/settings/jobs/{name}/run", run_now, "/settings")]
