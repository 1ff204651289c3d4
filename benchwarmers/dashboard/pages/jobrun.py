"""One scheduler job run: when and why it ran, what it touched and sent, its outcome, and its detail by outcome."""
from __future__ import annotations

import json

from ...api.parts import Records
from ...api.scheduler import run_view
from ...server.messages import Request
from ..contract import stays
from ..markup import Html, card, facts, html, link, table, trusted
from ..render import when
from ..web import Frame
from ..widgets import chip, muted
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


def data(req: Request, bench: Records) -> dict:
    return run_view(bench, req.params["id"])


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    r = d["run"]
    about = facts([("Job", r["name"]), ("Status", chip(r["status"])),
                   ("Trigger", r["trigger"] or ""), ("Window", when(r["due"]) or "none: run when asked"),
                   ("Started", when(r["started"], seconds=True)),
                   ("Finished", when(r["finished"], seconds=True) or muted("still running: reload to follow it")),
                   ("Took", took(r)), ("Models touched", r["models"]), ("Calls sent", r["calls"])], "cols-2")
    outcome = html('<p class="outcome">$o</p>', o=r["outcome"]) if r["outcome"] else ""
    back = html("<p>$a</p>", a=link("/settings#scheduler", "Back to the scheduler"))
    return f"{r['name']} run {r['id']}", html("$card$detail$back", card=card("", html("$a$o", a=about, o=outcome)),
                                             detail=detail(r["name"], r.get("detail") or {}), back=back)


def detail(job: str, d: dict) -> Html:
    keys = [k for k in ORDER if d.get(k)] + sorted(k for k in d if k not in ORDER and d[k])
    if not keys:
        return card("Detail", trusted('<p class="empty">Nothing to list: the outcome above says it all.</p>'))
    titles = {**TITLES, "ok": OK_TITLES.get(job, "Done")}
    return html("$cards", cards=[card(titles.get(k) or k, entries(d[k])) for k in keys])


def entries(values) -> Html:
    """A list of names, or of records (a column per field); anything else as text."""
    if not isinstance(values, list):
        return html("<p>$v</p>", v=values)
    if all(not isinstance(v, dict) for v in values):
        return html('<ul class="plain-list">$items</ul>', items=[html("<li>$v</li>", v=v) for v in values])
    columns = list(dict.fromkeys(k for v in values if isinstance(v, dict) for k in v))
    rows = [[cell(v.get(c)) if isinstance(v, dict) else (v if c == columns[0] else "") for c in columns]
            for v in values]
    return table([COLUMNS.get(c, c) for c in columns], rows)


def cell(value) -> Html | str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return html('<span class="reason">$v</span>', v=json.dumps(value))
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return html('<span class="reason">$v</span>', v=value) if isinstance(value, str) and len(value) > 40 else \
        str(value)


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
