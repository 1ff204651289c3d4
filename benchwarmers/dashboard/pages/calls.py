"""Calls: every ask (panels and route turns), newest first, filtered by collection, model, status and verdict."""
from __future__ import annotations

from urllib.parse import urlencode

from ..apicall import get
from ..render import card, e, link, options, table, when
from ..widgets import chip

STATUSES = [("", "any"), ("ok", "answered"), ("failed", "failed"), ("timeout", "timed out"), ("skipped", "skipped")]
VERDICTS = [("", "any"), ("missing", "answers not judged yet"), ("given", "judged")]
FILTERS = ("collection", "model", "status", "verdict")


def data(req, bench) -> dict:
    q = {k: req.query.get(k) or None for k in FILTERS}
    page = req.query.get("page") or 1
    d = get(req, "/bench/history", page=page, per_page=25, **q)
    d["collections"] = [c["name"] for c in get(req, "/bench/collections")["collections"]]
    d["models"] = [m["alias"] for m in get(req, "/bench/models")["models"]]
    return d


def render(d: dict, frame) -> tuple[str, str]:
    f = d["filters"]
    pick = lambda name, choices: options(choices, f.get(name) or "")   # noqa: E731
    form = (f'<form method="get" action="/calls" class="search filters" role="search">'
            f'<label for="f-collection">Collection</label><select id="f-collection" name="collection">'
            f'{pick("collection", [("", "any")] + [(c, c) for c in d["collections"]])}</select>'
            f'<label for="f-model">Model</label><select id="f-model" name="model">'
            f'{pick("model", [("", "any")] + [(m, m) for m in d["models"]])}</select>'
            f'<label for="f-status">A seat</label><select id="f-status" name="status">'
            f'{pick("status", STATUSES)}</select>'
            f'<label for="f-verdict">Verdicts</label><select id="f-verdict" name="verdict">'
            f'{pick("verdict", VERDICTS)}</select><button type="submit" class="secondary">Filter</button></form>')
    if not d["items"]:
        empty = "Nothing matches these filters." if f else 'Nothing asked yet. <a href="/ask">Ask a collection</a>.'
        return "Calls", form + f'<p class="empty">{empty}</p>'
    rows = [[link(f"/calls/{i['id']}", when(i["created"])), chip(i["kind"], "panel" if i["kind"] == "panel" else
                                                                 "route turn"),
             e(i["collection"]), f'<span class="prompt">{e(i["prompt"])}</span>', seats(i["seats"]),
             f'{i["judged"]} of {i["answered"]}'] for i in d["items"]]
    return "Calls", form + card("", table(["When", "Kind", "Collection", "Prompt", "Seats", "Judged"], rows)
                                + pager(d))


def seats(items: list[dict]) -> str:
    marks = {True: " ✓ useful", False: " ✗ not useful", None: ""}
    return '<ul class="seat-chips">' + "".join(
        f'<li>{chip(s["status"], s["model"] + marks[s["useful"]], s["status"])}</li>' for s in items) + "</ul>"


def pager(d: dict) -> str:
    if d["pages"] <= 1:
        return ""
    def href(page: int) -> str:
        return "/calls?" + urlencode({**d["filters"], "page": page})
    prev = link(href(d["page"] - 1), "← Newer") if d["page"] > 1 else ""
    nxt = link(href(d["page"] + 1), "Older →") if d["page"] < d["pages"] else ""
    return f'<nav class="pager" aria-label="Pages">{prev}<span>Page {d["page"]} of {d["pages"]}</span>{nxt}</nav>'
