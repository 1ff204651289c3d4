"""Calls: every ask (panels and route turns), newest first, filtered by collection, model, status and verdict."""
from __future__ import annotations

from typing import Protocol
from urllib.parse import urlencode

from ...api.collection import collections_view
from ...api.history import history_page
from ...api.models import ModelListParts, models_view
from ...core.collection import Collections
from ...server.messages import Request
from ..contract import stays
from ..markup import Html, card, html, join, link, options, table, trusted
from ..render import when
from ..web import Frame
from ..widgets import chip


class CallsPageParts(ModelListParts, Protocol):
    """The asks, newest first, with the collections and models to filter them by."""
    collections: Collections


STATUSES = [("", "any"), ("ok", "answered"), ("failed", "failed"), ("timeout", "timed out"), ("skipped", "skipped")]
VERDICTS = [("", "any"), ("missing", "answers not judged yet"), ("given", "judged")]
FILTERS = ("collection", "model", "status", "verdict")


def data(req: Request, bench: CallsPageParts) -> dict:
    q = {k: req.query[k] for k in (*FILTERS, "before", "after", "per_page") if req.query.get(k)}
    d = history_page(bench, {"per_page": "25", **q})
    d["collections"] = [c["name"] for c in collections_view(bench)["collections"]]
    d["models"] = [m["alias"] for m in models_view(bench)["models"]]
    return d


FILTER_FORM = """<form method="get" action="/calls" class="search filters" role="search">\
<label for="f-collection">Collection</label><select id="f-collection" name="collection">$collection</select>\
<label for="f-model">Model</label><select id="f-model" name="model">$model</select>\
<label for="f-status">A seat</label><select id="f-status" name="status">$status</select>\
<label for="f-verdict">Verdicts</label><select id="f-verdict" name="verdict">$verdict</select>\
<button type="submit" class="secondary">Filter</button></form>"""


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    f = d["filters"]
    pick = lambda name, choices: options(choices, f.get(name) or "")   # noqa: E731
    form = html(FILTER_FORM, collection=pick("collection", [("", "any")] + [(c, c) for c in d["collections"]]),
                model=pick("model", [("", "any")] + [(m, m) for m in d["models"]]),
                status=pick("status", STATUSES), verdict=pick("verdict", VERDICTS))
    if not d["items"]:
        empty = "Nothing matches these filters." if f else trusted('Nothing asked yet. <a href="/ask">Ask a '
                                                                   "collection</a>.")
        return "Calls", html('$form<p class="empty">$empty</p>', form=form, empty=empty)
    rows = [[link(f"/calls/{i['id']}", when(i["created"])),
             chip(i["kind"], "panel" if i["kind"] == "panel" else "route turn"),
             i["collection"], html('<span class="prompt">$p</span>', p=i["prompt"]), seats(i["seats"]),
             f'{i["judged"]} of {i["answered"]}'] for i in d["items"]]
    return "Calls", html("$form$card", form=form, card=card("", join(
        [table(["When", "Kind", "Collection", "Prompt", "Seats", "Judged"], rows), pager(d)])))


def seats(items: list[dict]) -> Html:
    marks = {True: " ✓ useful", False: " ✗ not useful", None: ""}
    return html('<ul class="seat-chips">$items</ul>', items=[
        html("<li>$chip</li>", chip=chip(s["status"], s["model"] + marks[s["useful"]], s["status"])) for s in items])


def pager(d: dict) -> Html:
    """Newer and older pages (cursors, not page numbers), and how many asks match, as far as it was counted."""
    def href(key: str, value: str) -> str:
        per_page = {"per_page": d["per_page"]} if d["per_page"] != 25 else {}
        return "/calls?" + urlencode({**d["filters"], **per_page, key: value})
    prev = link(href("after", d["newer"]), "← Newer") if d.get("newer") else ""
    nxt = link(href("before", d["next"]), "Older →") if d.get("next") else ""
    searched = f" (looked back to {when(d['searched_to'])}: older ones may match too)" if d.get("searched_to") else ""
    return html('<nav class="pager" aria-label="Pages">$prev<span>$count$searched</span>$next</nav>', prev=prev,
                count=count_text(d), searched=searched, next=nxt)


def count_text(d: dict) -> str:
    """'10,000+ asks', '3 asks', '12 of the latest 1,000 asks'."""
    n = f"{d['total']:,}{'+' if d.get('total_capped') else ''}"
    word = "ask" if d["total"] == 1 and not d.get("total_capped") else "asks"
    if d.get("counted_in"):
        return f"{n} of the latest {d['counted_in']:,} asks"
    return f"{n} {word}"


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
