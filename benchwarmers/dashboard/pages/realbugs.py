"""The Suite page's "Real bugs" card: the real-bug tasks there are (each with its project, fix and licence), and,
while picks are missing, the offer to fetch them, saying what leaves the machine; a fetch's progress and outcome.

Read through GET /bench/suite/fetch; changed through POST /bench/suite/fetch, as `bench suite fetch` does. suite.js
follows a running fetch by polling the page's JSON and reloads when it ends."""
from __future__ import annotations

from ...api.suitefetch import FetchParts, fetch_view
from ...server.messages import Request
from ...suite import fetch
from ...words import plural
from ..apicall import post
from ..markup import Html, card, html, table, trusted
from ..web import Done, Form, Frame
from ..widgets import chip, external, muted, post_button

SHOWN = 100


def real_data(bench: FetchParts, tasks: list[dict]) -> dict:
    """The plan of the shipped picks, the newest fetch job, and the real-bug tasks of the listing given."""
    view = fetch_view(bench)
    plan = {k: v for k, v in view["plan"].items() if k != "fixes"}
    job = bench.suite.fetching.get(view["jobs"][0]["id"]) if view["jobs"] else None
    return {"plan": plan, "source": view["source"], "job": job,
            "tasks": [t for t in tasks if t["source"] == "rebench"][:SHOWN]}


def real_card(d: dict, frame: Frame) -> Html:
    job = d["job"]
    running = job is not None and job["status"] == "running"
    parts = [listing(d["tasks"]), last_job(job) if job else ""]
    if not running and d["plan"]["missing"]:
        parts.append(offer(d["plan"], d["source"], frame))
    return card("Real bugs", html("$parts", parts=parts), anchor="real")


def listing(tasks: list[dict]) -> Html:
    if not tasks:
        return trusted('<p class="empty">No real-bug task yet: without one, a model\'s review score rests on bugs '
                       "planted in your own repositories (<code>bench suite seed</code>).</p>")
    rows = [[html("<code>$id</code>", id=t["id"]), external(f"https://github.com/{t['repo']}", t["repo"]),
             external(f"https://github.com/{t['repo']}/commit/{t['commit']}", t["commit"][:10]), t["path"],
             t["license"]] for t in tasks]
    return html("<p>Each is a small fix from a public project's history: the model reviews the file as it was before "
                "the fix, the fixed file is its control. The code stays under its project's licence (the data "
                "folder's <code>suite/tasks/NOTICE</code> lists them).</p>$t",
                t=table(["Task", "Project", "Fix", "File", "Licence"], rows))


def offer(plan: dict, source: str, frame: Frame) -> Html:
    label = (f"Fetch {plural(plan['missing'], 'real bug')} from {plan['missing_repositories']} public "
             f"{'repository' if plan['missing_repositories'] == 1 else 'repositories'}")
    kib = f"{plan['bytes'] / 1024:,.0f} KiB" if plan["bytes"] else "a few hundred KiB"
    where = trusted("GitHub's raw files (<code>raw.githubusercontent.com</code>)") if source == fetch.FORGE else \
        html("<code>$s</code>", s=source)
    return html('<div class="fetch-offer"><p><strong>What leaves this machine:</strong> $files requests to '
                "$where, each naming a public repository, commit and file, from this machine's address (about "
                "$kib in all). Nothing of yours is sent: no "
                "prompt, key or record. Each file is checked against the sha256 recorded when it was picked, and "
                "the tasks go into the data folder. Behind a proxy or offline, <code>bench suite fetch --source</code> "
                "reads a mirror or clones instead.</p><div class=\"actions\">$button</div></div>",
                files=plan["missing"] * 2, where=where, kib=kib,
                button=post_button(frame, "/suite/fetch", label, cls="primary"))


def last_job(job: dict) -> Html:
    if job["status"] == "running":
        return html('<p data-fetch-job="$id" data-follow-fetch="/suite.json">$c <progress max="$total" value="$done">'
                    '</progress> <span class="progress-text">$done of $total picks</span><span class="reason" '
                    'data-counts>: $written written, $present already there, $skipped skipped</span></p>',
                    id=job["id"], c=chip("running", "fetching"),
                    total=job["total"], done=job["done"], written=job["written"], present=job["present"],
                    skipped=job["skipped"])
    result = job.get("result") or {}
    skipped = [[f"{s['repo']}@{s['commit'][:10]}", html('<span class="reason">$w</span>', w=s["why"])]
               for s in result.get("skipped", [])]
    error = html('<div class="flash flash-error" role="alert">$e</div>', e=job["error"]) if job["error"] else ""
    return html('<p>Last fetch: $c $o</p>$e$s', c=chip("ok" if job["status"] == "done" else job["status"],
                                                       job["status"]),
                o=job.get("outcome") or muted(""), e=error,
                s=table(["Skipped fix", "Why"], skipped) if skipped else "")


def fetch_bugs(req: Request, bench: object, form: Form) -> Done:
    job = post(req, "/bench/suite/fetch")["job"]
    return Done(f"Fetching {plural(job['missing'], 'real bug')} from {job['source']}: the progress shows under Real "
                "bugs.", "/suite#real", {"job": job})
