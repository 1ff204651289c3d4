"""One suite run: its model, tasks and progress (followed live while open), and every item's outcome with its call."""
from __future__ import annotations

from ..apicall import get
from ..contract import stays
from ..render import card, e, facts, link, secs, table, when
from ..widgets import chip, post_button
from .suite import ACTIVE, OPEN, progress, took

SCRIPTS = ("suite.js",)


def data(req, bench) -> dict:
    d = get(req, f"/bench/suite/runs/{req.params['id']}")
    d["open"] = [d["run"]] if d["run"]["status"] in OPEN else []      # what suite.js follows
    return d


def render(d: dict, frame) -> tuple[str, str]:
    r = d["run"]
    cancel = post_button(frame, f"/suite/runs/{r['id']}/cancel", "Cancel", cls="ghost") if d["open"] else ""
    follow = (f'<p class="muted" data-follow="/suite/runs/{r["id"]}.json">This run follows along as it goes; '
              "without script, reload the page.</p>" if r["status"] in ACTIVE else "")
    about = facts([("Model", link(f"/models/{r['model']}", r["model"])), ("Tasks", e(r["tasks"] or "all ready tasks")),
                   ("Status", f'<span data-cell="status">{chip(r["status"])}</span>'),
                   ("Progress", f'<span data-cell="progress">{progress(r)}</span>'),
                   ("Why", e(r["reason"])), ("Started", e(when(r["started"])) or '<span class="muted">not yet</span>'),
                   ("Finished", e(when(r["finished"]))), ("Took", e(took(r)))]
                  + ([("Error", f'<span class="reason">{e(r["error"])}</span>')] if r["error"] else []), "cols-2")
    body = (card("", follow + f'<div data-run="{r["id"]}" data-status="{e(r["status"])}">{about}</div>'
                 + (f'<div class="actions">{cancel}</div>' if cancel else ""))
            + card("Answers", results(d["results"])) + f'<p>{link("/suite", "Back to the suite")}</p>')
    return f"Suite run {r['id']}: {r['model']}", body


def results(items: list[dict]) -> str:
    rows = [[f'<code>{e(i["task"])}</code>', e(i["variant"]), e(i["purpose"]), chip(outcome_state(i), i["outcome"]),
             e(f'{i["confidence"]:.0%}' if i["confidence"] is not None else ""), e(i["parse"] or ""),
             e(", ".join(lines(f) for f in i["flagged"])), e(secs(i["seconds"])),
             link(f"/calls/{i['call']}", "call") if i["call"] else f'<span class="reason">{e(i["error"] or "")}</span>']
            for i in items]
    return table(["Task", "Variant", "Purpose", "Outcome", "Confidence", "Read as", "Lines flagged", "Seconds",
                  "Call"], rows, "No answer yet.")


def outcome_state(item: dict) -> str:
    """The chip's colour: right answers green, wrong ones red, unanswered and failed calls grey or red."""
    if item["outcome"] == "failed":
        return "failed"
    return {True: "ok", False: "wrong"}.get(item["correct"], "skipped")


def lines(flag: list) -> str:
    name, first, last = flag
    where = f"{name}:" if name else ""
    return f"{where}{first}" if first == last else f"{where}{first}-{last}"


redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
