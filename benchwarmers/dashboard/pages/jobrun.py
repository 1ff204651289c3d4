"""One scheduler job run: when and why it ran, what it touched and sent, its outcome, and its detail by outcome."""
from __future__ import annotations

import json

from ..apicall import get
from ..contract import stays
from ..render import card, e, facts, link, table, when
from ..widgets import chip
from .scheduler import took

# the detail's lists, in the order a reader wants them (a job's own keys follow)
ORDER = ("retired", "failed", "runs", "ok", "skipped", "endpoints", "held")
TITLES = {"failed": "Failed", "retired": "Retired", "skipped": "Skipped", "endpoints": "Endpoints flagged",
          "held": "Held after it", "runs": "Suite runs played"}
OK_TITLES = {"probe": "Answered", "perf": "Measured", "catalog": "Fetched"}
COLUMNS = {"model": "Model", "ttft": "First token (s)", "tokens_per_second": "Tokens/s", "why": "Why",
           "error": "Error", "reason": "Reason", "source": "Source", "models": "Models", "kept": "Copy kept",
           "prompt": "Prompt", "endpoint": "Endpoint", "state": "State", "id": "Run", "status": "Status",
           "done": "Done", "total": "Items", "failed": "Failed"}


def data(req, bench) -> dict:
    return get(req, f"/bench/jobs/{req.params['id']}")


def render(d: dict, frame) -> tuple[str, str]:
    r = d["run"]
    about = facts([("Job", e(r["name"])), ("Status", chip(r["status"])),
                   ("Trigger", e(r["trigger"] or "")), ("Window", e(when(r["due"])) or "none: run when asked"),
                   ("Started", e(when(r["started"], seconds=True))),
                   ("Finished", e(when(r["finished"], seconds=True)) or '<span class="muted">still running: reload '
                                                                        "to follow it</span>"),
                   ("Took", e(took(r))), ("Models touched", str(r["models"])), ("Calls sent", str(r["calls"]))],
                  "cols-2")
    outcome = f'<p class="outcome">{e(r["outcome"] or "")}</p>' if r["outcome"] else ""
    back = f'<p>{link("/settings#scheduler", "Back to the scheduler")}</p>'
    return f"{r['name']} run {r['id']}", card("", about + outcome) + detail(r["name"], r.get("detail") or {}) + back


def detail(job: str, d: dict) -> str:
    keys = [k for k in ORDER if d.get(k)] + sorted(k for k in d if k not in ORDER and d[k])
    if not keys:
        return card("Detail", '<p class="empty">Nothing to list: the outcome above says it all.</p>')
    titles = {**TITLES, "ok": OK_TITLES.get(job, "Done")}
    return "".join(card(titles.get(k, k), entries(d[k])) for k in keys)


def entries(values) -> str:
    """A list of names, or of records (a column per field); anything else as text."""
    if not isinstance(values, list):
        return f"<p>{e(values)}</p>"
    if all(not isinstance(v, dict) for v in values):
        return '<ul class="plain-list">' + "".join(f"<li>{e(v)}</li>" for v in values) + "</ul>"
    columns = list(dict.fromkeys(k for v in values if isinstance(v, dict) for k in v))
    rows = [[cell(v.get(c)) if isinstance(v, dict) else (e(v) if c == columns[0] else "") for c in columns]
            for v in values]
    return table([COLUMNS.get(c, c) for c in columns], rows)


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return f'<span class="reason">{e(json.dumps(value))}</span>'
    if isinstance(value, float):
        return e(f"{value:,.3f}".rstrip("0").rstrip("."))
    return f'<span class="reason">{e(value)}</span>' if isinstance(value, str) and len(value) > 40 else e(value)


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
