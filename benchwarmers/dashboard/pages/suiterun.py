"""One suite run: its model, tasks and progress (followed live while open), and every item's outcome with its call."""
from __future__ import annotations

from ...api.suite import SuiteViewParts, run_view
from ...server.messages import Request
from ..contract import stays
from ..markup import Html, card, facts, html, link, table
from ..render import secs, when
from ..web import Frame
from ..widgets import chip, muted, post_button
from .suite import ACTIVE, OPEN, progress, took

SCRIPTS = ("suite.js",)


def data(req: Request, bench: SuiteViewParts) -> dict:
    d = run_view(bench, req.params["id"])
    d["open"] = [d["run"]] if d["run"]["status"] in OPEN else []      # what suite.js follows
    return d


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    r = d["run"]
    cancel = post_button(frame, f"/suite/runs/{r['id']}/cancel", "Cancel", cls="ghost") if d["open"] else ""
    follow = html('<p class="muted" data-follow="/suite/runs/$id.json">This run follows along as it goes; without '
                  "script, reload the page.</p>", id=r["id"]) if r["status"] in ACTIVE else ""
    about = facts([("Model", link(f"/models/{r['model']}", r["model"])), ("Tasks", r["tasks"] or "all ready tasks"),
                   ("Status", html('<span data-cell="status">$chip</span>', chip=chip(r["status"]))),
                   ("Progress", html('<span data-cell="progress">$p</span>', p=progress(r))),
                   ("Why", r["reason"]), ("Started", when(r["started"]) or muted("not yet")),
                   ("Finished", when(r["finished"])), ("Took", took(r))]
                  + ([("Error", html('<span class="reason">$error</span>', error=r["error"]))] if r["error"] else []),
                  "cols-2")
    actions = html('<div class="actions">$cancel</div>', cancel=cancel) if cancel else ""
    body = html('$head$answers<p>$back</p>',
                head=card("", html('$follow<div data-run="$id" data-status="$status">$about</div>$actions',
                                   follow=follow, id=r["id"], status=r["status"], about=about, actions=actions)),
                answers=card("Answers", results(d["results"])), back=link("/suite", "Back to the suite"))
    return f"Suite run {r['id']}: {r['model']}", body


def results(items: list[dict]) -> Html:
    rows = [[html("<code>$t</code>", t=i["task"]), i["variant"], i["purpose"], chip(outcome_state(i), i["outcome"]),
             f'{i["confidence"]:.0%}' if i["confidence"] is not None else "", i["parse"] or "",
             ", ".join(lines(f) for f in i["flagged"]), secs(i["seconds"]),
             link(f"/calls/{i['call']}", "call") if i["call"] else html('<span class="reason">$e</span>',
                                                                        e=i["error"] or "")]
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
