"""Calls: every ask (panels and route turns), newest first, filtered by collection, model, status and verdict."""
from __future__ import annotations

from urllib.parse import urlencode

from ..apicall import get
from ..contract import stays
from ..render import card, e, link, options, table, when
from ..widgets import chip

STATUSES = [("", "any"), ("ok", "answered"), ("failed", "failed"), ("timeout", "timed out"), ("skipped", "skipped")]
VERDICTS = [("", "any"), ("missing", "answers not judged yet"), ("given", "judged")]
FILTERS = ("collection", "model", "status", "verdict")


def data(req, bench) -> dict:
    q = {k: req.query.get(k) or None for k in FILTERS}
    where = {k: req.query[k] for k in ("before", "after") if req.query.get(k)}
    d = get(req, "/bench/history", per_page=req.query.get("per_page") or 25, **q, **where)
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
    """Newer and older pages (cursors, not page numbers), and how many asks match, as far as it was counted."""
    def href(key: str, value: str) -> str:
        per_page = {"per_page": d["per_page"]} if d["per_page"] != 25 else {}
        return "/calls?" + urlencode({**d["filters"], **per_page, key: value})
    prev = link(href("after", d["newer"]), "← Newer") if d.get("newer") else ""
    nxt = link(href("before", d["next"]), "Older →") if d.get("next") else ""
    searched = f" (looked back to {when(d['searched_to'])}: older ones may match too)" if d.get("searched_to") else ""
    return f'<nav class="pager" aria-label="Pages">{prev}<span>{e(count_text(d))}{e(searched)}</span>{nxt}</nav>'


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
