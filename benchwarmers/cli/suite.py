"""bench suite: tasks (list, show, accept, reject), runs (start with progress, list, cancel), scores, seed, fetch,
mine."""
from __future__ import annotations

import time
from functools import partial
from urllib.parse import urlencode

from ..servicelink import q
from ..suite.seed import DEFAULT_DEADLINE, report_lines
from ..words import plural
from . import suitefetch
from .output import delete_confirmed, emit_json, json_asked, note, say, shown, table
from .parsers import asks_first, command, verbs

FINISHED = ("done", "failed", "cancelled", "interrupted")
POLL = 1.0


def register(sub, parent) -> None:
    p = command(sub, parent, "suite", "code-review tasks that score models: run, scores, seed, fetch",
                description="The suite scores models on code review: find the lines that hold a planted or real bug "
                            "(each with a clean control), or say whether a claim about code is true. Runs call one "
                            "model at a time, each call a direct ask made inside the service.",
                example=("bench suite run --model deepseek", "bench suite run --collection core --tasks 'claim-*'",
                         "bench suite scores", "bench suite fetch --dry-run", "bench suite seed --repo myapp",
                         "bench suite mine && bench suite tasks --drafts"))
    verb = partial(suite_verb, verbs(p), parent)
    v = verb("run", "run the suite for a model or a collection's members, with progress",
             "bench suite run --model deepseek --tasks 'rebench-*,claim-*'", run_suite)
    v.add_argument("--model", help="the model alias")
    v.add_argument("--collection", help="every active member of this collection")
    v.add_argument("--tasks", metavar="GLOB", help="only tasks whose id matches (comma-separated globs)")
    v.add_argument("--no-wait", action="store_true", help="start the run and return (it goes on in the service)")
    v = verb("tasks", "list the tasks", "bench suite tasks --drafts", list_tasks)
    v.add_argument("--drafts", action="store_true", help="only drafts waiting for review")
    verb("show", "one task whole: question, code, answer key, source", "bench suite show claim-atomic-write",
         show_task).add_argument("id")
    verb("accept", "accept a draft task into the suite", "bench suite accept mined-3f2a9c01b7de",
         accept_task).add_argument("id")
    v = verb("reject", "remove one of your tasks (a draft, a seeded task)", "bench suite reject mined-3f2a9c01b7de "
             "--yes", reject_task)
    v.add_argument("id")
    asks_first(v)
    verb("runs", "recent runs and their progress", "bench suite runs --model deepseek",
         list_runs).add_argument("--model", help="only this model's runs")
    verb("cancel", "cancel an open run (after the call in flight)", "bench suite cancel 12",
         cancel_run).add_argument("run", type=int)
    verb("scores", "each model's suite scores per purpose (review, claims)", "bench suite scores --json",
         show_scores).add_argument("--model", help="only this model")
    register_seed(verb("seed", "plant bugs in a repo named in config/repos.json, keeping those its tests (or each "
                       "operator's check) show to change behaviour; tasks go to the data folder",
                       "bench suite seed --repo myapp --count 10", seed_repo))
    v = verb("fetch", "download the picked real bug fixes of public projects and build them into your suite tasks "
             "(the data folder), each file checked against its pick's sha256", "bench suite fetch --dry-run",
             suitefetch.fetch_bugs)
    suitefetch.add_arguments(v)
    verb("mine", "draft claim tasks from the real and false claims of your verdicts", "bench suite mine",
         mine_verdicts)


def suite_verb(under, parent, name: str, helptext: str, example: str, func):
    """A verb of `bench suite`: its help, as a sentence, is its description too."""
    return command(under, parent, name, helptext, func, example=example,
                   description=helptext[0].upper() + helptext[1:] + ".")


def register_seed(v) -> None:
    v.add_argument("--repo", required=True, help="the repo's name in the data folder's config/repos.json")
    v.add_argument("--count", type=int, default=20, help="how many tasks at most (default 20)")
    v.add_argument("--seed", type=int, default=0, help="picks other functions and bugs (default 0)")
    v.add_argument("--deadline", type=int, default=DEFAULT_DEADLINE, metavar="SECONDS",
                   help=f"stop after this long, keeping what was made (default {DEFAULT_DEADLINE})")
    v.add_argument("--no-wait", action="store_true", help="start the job and return its id (it goes on in the service)")


# ---- runs ------------------------------------------------------------------------------------------------

def run_suite(args, client) -> int:
    body = {k: v for k, v in (("model", args.model), ("collection", args.collection), ("tasks", args.tasks)) if v}
    d = client.post("/bench/suite/runs", body)
    runs = d["runs"]
    for r in runs:
        note(f"Suite run {r['id']} for {r['model']}: {r['status']}.")
    if args.no_wait:
        emit_json(d) if args.json else say(" ".join(str(r["id"]) for r in runs))
        return 0
    try:
        final = [follow(client, r["id"]) for r in runs]
    except KeyboardInterrupt:
        note("Stopped watching; the runs go on in the service (`bench suite runs` shows them).")
        return 130
    scores = client.get("/bench/suite/scores")["scores"]
    if args.json:
        emit_json({"runs": final, "scores": {r["model"]: scores.get(r["model"]) for r in final}})
    else:
        scores_table({r["model"]: scores.get(r["model"]) for r in final})
    for r in final:
        if r["status"] != "done":
            note(f"Run {r['id']} ({r['model']}) ended {r['status']}: {r.get('error') or ''}".rstrip(": "))
    return 0 if all(r["status"] == "done" for r in final) else 1


def follow(client, rid: int) -> dict:
    """Poll one run, printing each new answer to stderr, until it ends."""
    seen = 0
    while True:
        d = client.get(f"/bench/suite/runs/{rid}")
        run, items = d["run"], d["results"]
        for n, item in enumerate(items[seen:], seen + 1):
            note(f"  {run['model']} {n:>3}/{run['total'] or '?'}  {item['task']} ({item['variant']}): "
                 f"{item['outcome']}" + (f" [{item['parse']}]" if item.get("parse") else ""))
        seen = len(items)
        if run["status"] in FINISHED:
            return run
        time.sleep(POLL)


def list_runs(args, client) -> int:
    path = "/bench/suite/runs" + ("?" + urlencode({"model": args.model}) if args.model else "")
    d = client.get(path)
    if json_asked(args, d):
        return 0
    if not d["runs"]:
        note("No suite runs yet: bench suite run --model ALIAS")
        return 0
    table(["RUN", "MODEL", "STATUS", "DONE", "FAILED", "TASKS", "WHY", "ERROR"],
          [[r["id"], r["model"], r["status"], f"{r['done']}/{r['total']}", r["failed"], r["tasks"] or "*",
            r["reason"], r["error"] or ""] for r in d["runs"]])
    return 0


def cancel_run(args, client) -> int:
    return shown(args, client.post(f"/bench/suite/runs/{args.run}/cancel", {}),
                 lambda d: say(f"Run {args.run}: {d['run']['status']}."))


# ---- scores ----------------------------------------------------------------------------------------------

def pct(value) -> str:
    return "" if value is None else f"{value * 100:.0f}%"


def review_text(r: dict | None) -> str:
    if not r:
        return ""
    return (f"{pct(r['score'])} (hits {r['hits']}/{r['bugs']}, false alarms {r['false_alarms']}/{r['controls']}"
            + (f", unanswered {r['unanswered']}" if r["unanswered"] else "") + ")")


def claims_text(c: dict | None) -> str:
    if not c:
        return ""
    return f"{pct(c['score'])} ({c['right']}/{c['claims']} right" + (
        f", unanswered {c['unanswered']}" if c["unanswered"] else "") + ")"


def scores_table(scores: dict) -> None:
    rows = [[m, review_text(s and s["review"]), claims_text(s and s["claims"]),
             (s or {}).get("confidently_wrong", "")] for m, s in sorted(scores.items())]
    table(["MODEL", "REVIEW (bugs + controls)", "CLAIMS", "SURE BUT WRONG"], rows)


def show_scores(args, client) -> int:
    d = client.get("/bench/suite/scores" + ("?" + urlencode({"model": args.model}) if args.model else ""))
    if json_asked(args, d):
        return 0
    if not d["scores"]:
        note("No suite results yet: bench suite run --model ALIAS")
        return 0
    scores_table(d["scores"])
    return 0


# ---- tasks -----------------------------------------------------------------------------------------------

def list_tasks(args, client) -> int:
    d = client.get("/bench/suite/tasks" + ("?status=draft" if args.drafts else ""))
    if json_asked(args, d):
        return 0
    for problem in d.get("problems", []):
        note(f"skipped: {problem}")
    if not d["tasks"]:
        note("No drafts to review." if args.drafts else "No tasks.")
        return 0
    table(["ID", "KIND", "STATUS", "FROM", "FILES", "LICENCE"],
          [[t["id"], t["kind"], t["status"], came_from(t), ", ".join(t["files"]), t.get("license") or ""]
           for t in d["tasks"]])
    return 0


def came_from(t: dict) -> str:
    """seeded, or a project's repository and commit (a real fix)."""
    where = " ".join(x for x in (t.get("repo"), (t.get("commit") or "")[:10]) if x)
    return f"{t['source'] or t['origin']} {where}".strip()


def show_task(args, client) -> int:
    t = client.get(f"/bench/suite/tasks/{q(args.id)}")["task"]
    if json_asked(args, {"task": t}):
        return 0
    say(f"{t['id']} ({t['kind']}, {t['status']}, {t['origin']})\n\n{t['question']}")
    if t["kind"] == "claim":
        say(f"\nClaim: {t['answer']['claim']}\nTruth: {t['answer']['truth']}\nEvidence: "
            f"{t['answer'].get('evidence') or ''}")
    else:
        say(f"\nBuggy lines: {t['answer']['lines']}")
    for path, text in t["code"].items():
        say(f"\n--- {path}\n{text.rstrip()}")
    say(f"\nSource: {t['source']}")
    return 0


def accept_task(args, client) -> int:
    return shown(args, client.post(f"/bench/suite/tasks/{q(args.id)}/accept", {}),
                 lambda d: say(f"Accepted {args.id}: it joins the next runs."))


def reject_task(args, client) -> int:
    return delete_confirmed(args, client, f"Remove the task {args.id!r} from the data folder?",
                            f"/bench/suite/tasks/{q(args.id)}", f"Removed {args.id}.")


def seed_repo(args, client) -> int:
    body = {"repo": args.repo, "count": args.count, "seed": args.seed, "deadline_seconds": args.deadline}
    job = client.post("/bench/suite/seed", body)["job"]
    note(f"Seeding job {job['id']} for {args.repo}: planting up to {plural(args.count, 'bug')}, each kept only when "
         "shown to change behaviour.")
    if args.no_wait:
        emit_json({"job": job}) if args.json else say(str(job["id"]))
        return 0
    job = suitefetch.follow_job(client, "/bench/suite/seed", job, "made",
                                lambda j: note(f"  {plural(j['made'], 'task')} made so far"))
    if args.json:
        emit_json({"job": job})
    elif job["result"]:
        lines, summary = report_lines(job["result"])
        for line in lines:
            say(line)
        note(summary)
    if job["status"] == "failed":
        note(f"Seeding failed: {job['error']}")
        return 1
    if job["status"] == "stopped":
        note(f"Seeding stopped: {job['error']}")
    return 0


def mine_verdicts(args, client) -> int:
    d = client.post("/bench/suite/mine", {})
    if json_asked(args, d):
        return 0
    for t in d["drafted"]:
        say(f"{t['id']}: {'true' if t['truth'] else 'false'}: {t['claim']}")
    for t in d.get("skipped") or []:
        note(f"skipped the claim {t['claim'][:80]!r} of call {t['call']}: {t['why']}")
    note(f"{plural(len(d['drafted']), 'new draft')}; review them with `bench suite show ID`, then "
         "`bench suite accept ID` or `bench suite reject ID`.")
    return 0
