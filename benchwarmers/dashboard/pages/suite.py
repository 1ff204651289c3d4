"""Suite: start a run for a model or a collection, follow the open runs, the recent runs and each model's scores,
the real-bug tasks (and the offer to fetch them), and the draft claim tasks mined from verdicts, to accept or reject.

Read through GET /bench/suite, /bench/suite/runs, /bench/suite/tasks and /bench/suite/fetch; changed through POST
/bench/suite/runs, /bench/suite/runs/{id}/cancel, /bench/suite/fetch, /bench/suite/mine,
/bench/suite/tasks/{id}/accept and DELETE /bench/suite/tasks/{id}, as `bench suite` does. suite.js follows the open
runs and a running fetch by polling this page's JSON (a reload shows the same).
"""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ...api.collection import collections_view
from ...api.models import ModelListParts, models_view
from ...api.suite import overview_view, tasks_view
from ...core.collection import Collections
from ...errors import BadRequest
from ...server.messages import Request
from ...suite import tasks as tasks_mod
from ...words import plural
from ..apicall import call, post
from ..contract import stays
from ..markup import Html, attrs, card, flag, html, link, table, trusted
from ..render import when
from ..web import Done, Form, Frame, safe_local
from ..widgets import chip, confirm, csrf, muted, post_button
from .modelcards import score
from .realbugs import fetch_bugs, real_card, real_data


class SuitePageParts(ModelListParts, Protocol):
    """The suite's tasks, runs and fetches, with the collections and models a run may ask."""
    collections: Collections
    home: Path


OPEN = ("queued", "running", "owed", "interrupted")
ACTIVE = ("queued", "running")            # open runs that move on their own: suite.js follows these
SCRIPTS = ("suite.js",)
DRAFTS_SHOWN = 50


def data(req: Request, bench: SuitePageParts) -> dict:
    overview = overview_view(bench)
    runs = bench.suite.store.runs(None, None, 50)
    listed = tasks_view(bench)["tasks"]
    drafts = [t for t in listed if t["status"] == "draft"][:DRAFTS_SHOWN]
    return {"tasks": overview["tasks"], "problems": overview["problems"],
            "open": [r for r in runs if r["status"] in OPEN],
            "recent": [r for r in runs if r["status"] not in OPEN][:20],
            "scores": overview["scores"],
            "drafts": [tasks_mod.get(bench.home, t["id"]).to_dict() for t in drafts],
            "models": [m["alias"] for m in models_view(bench)["models"] if m["status"] == "active"],
            "collections": [c["name"] for c in collections_view(bench)["collections"]],
            "chosen": req.query.get("model") or None, "real": real_data(bench, listed)}


INTRO = trusted('<p class="lead">The suite asks a model questions with known answers: planted bugs beside their clean '
                "controls, and true or false claims about real code. It calls one model at a time, paced; each score "
                "sits beside your own verdicts on the model's page, never mixed with them.</p>")


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    problems = [html('<div class="flash flash-error" role="alert">$p</div>', p=p) for p in d["problems"]]
    moving = any(r["status"] in ACTIVE for r in d["open"])
    follow = trusted('<p class="muted" data-follow="/suite.json">Queued and running runs follow along as they go; '
                     "without script, reload the page.</p>") if moving else ""
    return "Suite", html("$problems$intro$cards", problems=problems, intro=INTRO, cards=[
        card("Start a run", start_form(d, frame), anchor="start"),
        real_card(d["real"], frame),
        card("Open runs", html("$f$runs", f=follow, runs=open_runs(d["open"], frame)), anchor="open"),
        card("Scores", scores_table(d["scores"]), anchor="scores"),
        card("Recent runs", recent_runs(d["recent"]), anchor="recent"),
        card("Draft claim tasks", drafts(d["drafts"], frame), anchor="drafts")])


START = """<form method="post" action="/suite/runs" class="start-run">$csrf\
<div><label for="suite-target">For</label><select id="suite-target" name="target" required>$groups</select></div>\
<div><label for="suite-tasks">Tasks <span class="muted">(globs of task ids, comma-separated; empty: all $ready ready \
tasks)</span></label><input id="suite-tasks" name="tasks" placeholder="e.g. claim-*" value="$tasks"></div>\
<div><button type="submit">Start the run</button></div></form>"""


def start_form(d: dict, frame: Frame) -> Html:
    if not d["models"]:
        return trusted('<p class="empty">No active model yet: <a href="/onboard">onboard one</a> first.</p>')
    chosen = f"model:{d['chosen']}" if d["chosen"] else ""
    models = [html('<option value="model:$m"$on>$m</option>', m=m, on=flag("selected", f"model:{m}" == chosen))
              for m in d["models"]]
    groups = [html('<optgroup label="Models">$o</optgroup>', o=models)]
    if d["collections"]:
        groups.append(html('<optgroup label="Collections (their active members)">$o</optgroup>', o=[
            html('<option value="collection:$c">$c</option>', c=c) for c in d["collections"]]))
    ready = sum(n for k, n in d["tasks"].items() if k.endswith("_ready"))
    return html(START, csrf=csrf(frame), groups=groups, ready=ready, tasks=frame.typed("tasks"))


def progress(r: dict) -> Html:
    if not r["total"]:
        return muted("not started")
    failed = f', {r["failed"]} failed' if r["failed"] else ""
    return html('<progress max="$total" value="$done"></progress> <span class="progress-text">$done of $total$failed'
                '</span>', total=r["total"], done=r["done"], failed=failed)


def open_runs(runs: list[dict], frame: Frame) -> Html:
    rows = []
    for r in runs:
        buttons = [post_button(frame, f"/suite/runs/{r['id']}/cancel", "Cancel", cls="ghost small")]
        if r["status"] in ("owed", "interrupted"):
            fields = {"target": f"model:{r['model']}", "tasks": r["tasks"] or ""}
            buttons.insert(0, post_button(frame, "/suite/runs", "Run now", fields, cls="secondary small"))
        rows.append([link(f"/suite/runs/{r['id']}", f"#{r['id']}"), link(f"/models/{r['model']}", r["model"]),
                     r["tasks"] or "all", html('<span data-cell="status">$c</span>', c=chip(r["status"])),
                     html('<span data-cell="progress">$p</span>', p=progress(r)),
                     html('<span class="reason">$r$e</span>', r=r["reason"], e=": " + r["error"] if r["error"] else ""),
                     html('<div class="actions tight">$b</div>', b=buttons)])
    return table(["Run", "Model", "Tasks", "Status", "Progress", "Why", ""], rows,
                 "No run is open. Start one here; runs owed by quick onboarding wait here for the scheduler.",
                 row_attrs=[attrs(data_run=r["id"], data_status=r["status"]) for r in runs])   # for suite.js


def scores_table(scores: dict) -> Html:
    rows = []
    none = trusted('<span class="muted">none</span>')
    for model, s in sorted(scores.items()):
        review, claims = s.get("review"), s.get("claims")
        rows.append([link(f"/models/{model}", model), score(review) if review else none,
                     f'{review["hits"]} of {review["bugs"]} found, {review["false_alarms"]} of {review["controls"]} '
                     "false alarms" if review else "",
                     score(claims) if claims else none, f'{claims["right"]} of {claims["claims"]}' if claims else "",
                     s.get("confidently_wrong") or 0, when(s.get("updated"))])
    return table(["Model", "Review", "Bugs", "Claims", "Claims right", "Sure and wrong", "Updated"], rows,
                 "No scores yet: start a run.")


def took(r: dict) -> str:
    if r.get("finished") and r.get("started"):
        minutes, seconds = divmod(int(r["finished"] - r["started"]), 60)
        return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
    return ""


def recent_runs(runs: list[dict]) -> Html:
    rows = [[link(f"/suite/runs/{r['id']}", f"#{r['id']}"), link(f"/models/{r['model']}", r["model"]),
             r["tasks"] or "all", chip(r["status"]), f'{r["done"]} of {r["total"]}'
             + (f', {r["failed"]} failed' if r["failed"] else ""), r["reason"], when(r["finished"]), took(r),
             html('<span class="reason">$e</span>', e=r["error"] or "")] for r in runs]
    return table(["Run", "Model", "Tasks", "Status", "Items", "Why", "Finished", "Took", "Error"], rows,
                 "No run has finished yet.")


DRAFTS = trusted("<p>The real and false claims you record in verdicts become draft claim tasks, with the code they "
                 "were about. Accept a draft to add it to the suite; reject it to drop it for good.</p>")


def drafts(tasks: list[dict], frame: Frame) -> Html:
    rows = []
    for t in tasks:
        a = t["answer"]
        truth = chip("ok", "true") if a.get("truth") else chip("failed", "false")
        call = (t.get("source") or {}).get("call")
        rows.append([html("<code>$id</code>", id=t["id"]), html('<span class="prompt">$c</span>', c=a.get("claim")),
                     truth, html('<span class="reason">$e</span>', e=a.get("evidence") or ""),
                     link(f"/calls/{call}", "the call") if call else "",
                     html('<div class="actions tight">$accept$reject</div>',
                          accept=post_button(frame, f"/suite/tasks/{t['id']}/accept", "Accept", cls="small"),
                          reject=confirm(frame, f"/suite/tasks/{t['id']}/reject", "Reject",
                                         f"Reject {t['id']}? Its folder is removed and the claim is not drafted "
                                         "again."))])
    return html('$intro$table<div class="actions">$mine</div>', intro=DRAFTS,
                table=table(["Task", "Claim", "Truth", "Evidence", "From", ""], rows, "No drafts waiting."),
                mine=post_button(frame, "/suite/mine", "Draft claims from my verdicts", cls="secondary"))


# ---- actions -----------------------------------------------------------------------------------

def start(req: Request, bench: object, form: Form) -> Done:
    """target is model:ALIAS or collection:NAME (the model page's button sends model=ALIAS)."""
    kind, _, name = (form.get("target") or ("model:" + form.get("model"))).partition(":")
    if kind not in ("model", "collection") or not name:
        raise BadRequest("Choose a model or a collection to run the suite for.")
    body = {kind: name}
    if form.get("tasks").strip():
        body["tasks"] = form.get("tasks").strip()
    runs = post(req, "/bench/suite/runs", body)["runs"]
    names = ", ".join(f"{r['model']} (run {r['id']})" for r in runs)
    back = safe_local(form.get("back"))
    where = "the Suite page follows its progress" if back else "its progress shows under Open runs"
    return Done(f"Started the suite for {names}: {where}.", back or "/suite#open", {"runs": runs})


def cancel(req: Request, bench: object, form: Form) -> Done:
    run = post(req, f"/bench/suite/runs/{req.params['id']}/cancel")["run"]
    return Done(f"Cancelling run {run['id']} ({run['model']}): it stops after the call in flight.", "/suite#open",
                {"run": run})


def mine(req: Request, bench: object, form: Form) -> Done:
    d = post(req, "/bench/suite/mine")
    skipped = f"; {plural(d['without_code'], 'claim')} had no code to freeze" if d["without_code"] else ""
    return Done(f"Drafted {plural(len(d['drafted']), 'claim task')} from your "
                f"verdicts{skipped}.", "/suite#drafts", d)


def accept(req: Request, bench: object, form: Form) -> Done:
    task = post(req, f"/bench/suite/tasks/{req.params['id']}/accept")["task"]
    return Done(f"Accepted {task['id']}: it joins the suite's next runs.", "/suite#drafts", {"task": task})


def reject(req: Request, bench: object, form: Form) -> Done:
    call(req, "DELETE", f"/bench/suite/tasks/{req.params['id']}")
    return Done(f"Rejected {req.params['id']}: its folder is removed.", "/suite#drafts")


ACTIONS = [("/suite/runs", start, "/suite"), ("/suite/runs/{id}/cancel", cancel, "/suite"),
           ("/suite/fetch", fetch_bugs, "/suite"), ("/suite/mine", mine, "/suite"),
           ("/suite/tasks/{id}/accept", accept, "/suite"), ("/suite/tasks/{id}/reject", reject, "/suite")]


redirect = stays                 # always shows itself
