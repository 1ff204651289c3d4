"""Onboard models: what the endpoints serve that is not on the bench, ticked and queued, with progress beside each."""
from __future__ import annotations

from ...errors import BadRequest
from ...words import plural
from ..apicall import get, post
from ..contract import stays
from ..render import card, e, link, table, when
from ..web import Done
from ..widgets import chip, csrf

OPEN = ("queued", "probing", "suite")
WORDS = {"queued": "queued", "probing": "probing", "suite": "running the suite", "done": "done", "failed": "failed"}
MODES = [("quick", "Quick", "probe now; the suite is owed, and the scheduler's suite job plays it"),
         ("full", "Full", "probe now, then run the suite for it (one call per suite item; its progress shows)"),
         ("adhoc", "Quick + ad hoc", "probe now; the bench never calls it unprompted (pay-per-use or trial keys)")]


def data(req, bench) -> dict:
    find = (req.query.get("find") or "").strip().lower()
    found = get(req, "/bench/candidates")
    items = get(req, "/bench/onboard", limit=200)["items"]
    latest = latest_items(items)
    rows = []
    for c in found["candidates"]:
        item = latest.get((c["endpoint"], c["served"])) or latest.get((None, c["served"]))   # None: any endpoint
        if c["on_bench"] and not item:
            continue                       # on the bench long ago: nothing to do here
        if find and find not in c["served"].lower() and find not in c["endpoint"].lower():
            continue
        rows.append({**c, "item": item})
    return {"candidates": rows, "errors": found["errors"], "find": find or None, "recent": items[:20],
            "endpoints": len(get(req, "/bench/endpoints")["endpoints"])}


def latest_items(items: list[dict]) -> dict:
    """(endpoint, served) -> the latest queue item for that model; an item queued without an endpoint (the queue
    found it) under (None, served). An item of one endpoint never shows on another's row of the same name."""
    latest: dict = {}
    for item in items:        # newest first: the first seen is the latest for that model
        latest.setdefault((item["endpoint"], item["served"]), item)
    return latest


def render(d: dict, frame) -> tuple[str, str]:
    if not d["endpoints"]:
        return "Onboard models", '<p class="empty">No endpoints yet. <a href="/endpoints">Add an endpoint</a> ' \
                                 "first; its models then show here.</p>"
    errors = "".join(f'<div class="flash flash-error" role="alert">{e(x["endpoint"])}: {e(x["error"])}</div>'
                     for x in d["errors"])
    intro = ('<p class="lead">Tick the models to put on the bench. Each one is probed with a one-word prompt and '
             "registered only if it answers (Full then runs the suite for it); they go one at a time, and the "
             "progress shows beside each (a reload shows the same).</p>")
    search = (f'<form method="get" action="/onboard" class="search" role="search">'
              f'<label for="find">Find</label><input id="find" name="find" type="search" value="{e(d["find"] or "")}"'
              f' placeholder="name or endpoint" data-filter="#candidates">'
              f'<button type="submit" class="secondary">Find</button></form>')
    return "Onboard models", errors + intro + search + card("", picker(d, frame)) + \
        card("Recent onboarding", recent(d["recent"]))


def state_cell(item: dict | None) -> str:
    if not item:
        return '<span class="muted">not on the bench</span>'
    detail = ""
    if item["state"] == "suite" and item.get("progress"):
        detail = f' <span class="reason">{item["progress"]["done"]} of {item["progress"]["total"]}</span>'
    elif item["state"] == "done":
        detail = f' as {link("/models/" + item["model"], item["model"])}'
    elif item["state"] == "failed":
        detail = f' <span class="reason">{e(item["reason"])}</span>'
    return f'{chip(item["state"], WORDS.get(item["state"]))}{detail}'


def picker(d: dict, frame) -> str:
    if not d["candidates"]:
        what = "nothing matches" if d["find"] else "everything your endpoints serve is on the bench"
        return f'<p class="empty">Nothing to onboard: {e(what)}.</p>'
    rows = []
    for c in d["candidates"]:
        item, key = c["item"], f'{c["endpoint"]}|{c["served"]}'
        busy = bool(item and item["state"] in OPEN) or bool(c["on_bench"])
        box = (f'<input type="checkbox" name="pick" value="{e(key)}" aria-label="Onboard {e(c["served"])}"'
               f'{" disabled" if busy else ""}>')
        alias = (f'<input type="text" name="alias:{e(key)}" class="alias" placeholder="optional" '
                 f'aria-label="Alias for {e(c["served"])}"{" disabled" if busy else ""}>')
        rows.append([box, f'<span class="served">{e(c["served"])}</span>', e(c["endpoint"]), alias, facts(c),
                     progress_cell(item, key)])
    modes = "".join(f'<label class="choice"><input type="radio" name="mode" value="{m}"{" checked" if i == 0 else ""}>'
                    f' <strong>{e(label)}</strong> <span class="muted">{e(hint)}</span></label>'
                    for i, (m, label, hint) in enumerate(MODES))
    every = ('<label class="choice"><input type="checkbox" data-select-all="pick"> Tick every model that can be '
             "onboarded</label>")
    return (f'<form method="post" action="/onboard" id="onboard-form" data-onboard>{csrf(frame)}{every}'
            f'<div id="candidates">{table(["", "Model", "Endpoint", "Alias", "Facts", "Progress"], rows, cls="pick")}'
            '</div>'
            f'<fieldset class="modes"><legend>How</legend>{modes}</fieldset>'
            f'<div class="form-end"><button type="submit">Onboard the ticked models</button>'
            f'<span class="status-text" data-status role="status"></span></div></form>')


def facts(c: dict) -> str:
    """The facts the bench would use (every catalog merged, as `bench candidates` prints them), each group with
    its source; without a catalog entry, what the endpoint's list said."""
    sourced = (c.get("catalog") or {}).get("facts") or \
        {k: {"value": v, "source": "endpoint list"} for k, v in (c.get("facts") or {}).items()}
    value = {k: f["value"] for k, f in sourced.items()}
    said = []
    if value.get("context_window"):
        said.append((f"{value['context_window']:,} context", "context_window"))
    said += [(flag, flag) for flag in ("tools", "vision") if value.get(flag)]
    if value.get("price_in") == 0 and value.get("price_out") == 0:
        said.append(("free", "price_in"))
    elif value.get("price_in") is not None and value.get("price_out") is not None:
        said.append((f"${value['price_in']:g} in, ${value['price_out']:g} out per million tokens", "price_in"))
    groups: dict[str, list] = {}
    for words, key in said:
        groups.setdefault(sourced[key]["source"], []).append(words)
    return " · ".join(f'{e(" · ".join(words))} <span class="muted">({e(source)})</span>'
                      for source, words in groups.items())


def progress_cell(item: dict | None, key: str = "") -> str:
    """An item's state, followed by the page's script (the table above and Recent onboarding alike)."""
    return (f'<span class="progress" data-key="{e(key)}" data-item="{e(item["id"]) if item else ""}" '
            f'data-state="{e(item["state"]) if item else ""}">{state_cell(item)}</span>')


def recent(items: list[dict]) -> str:
    rows = [[str(i["id"]), f'<span class="served">{e(i["served"])}</span>', e(i["endpoint"] or ""), e(i["mode"]),
             progress_cell(i), e(when(i["created"]))] for i in items]
    return table(["#", "Model", "Endpoint", "Mode", "State", "Queued"], rows, "Nothing has been onboarded yet.")


def queue_models(req, bench, form) -> Done:
    picks = form.getlist("pick")
    if not picks:
        raise BadRequest("No model ticked.", "Tick the models to onboard, then press the button.")
    models = []
    for pick in picks:
        if "|" not in pick:
            continue
        model = dict(zip(("endpoint", "served"), pick.split("|", 1)))
        alias = form.get("alias:" + pick).strip()
        if alias:
            model["alias"] = alias
        models.append(model)
    mode = form.get("mode") or "quick"
    items = post(req, "/bench/onboard", {"models": models, "mode": mode})["items"]
    names = ", ".join(i["served"] for i in items)
    return Done(f"Queued {plural(len(items), 'model')} ({names}): they onboard one at a "
                "time; the progress shows beside each.", "/onboard", {"items": items})


ACTIONS = [("/onboard", queue_models, "/onboard")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
