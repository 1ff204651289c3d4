"""Onboard models: what the endpoints serve that is not on the bench, ticked and queued, with progress beside each."""
from __future__ import annotations

from typing import Protocol

from ...api.endpoints import CandidatesParts, candidates_view
from ...errors import BadRequest
from ...roster.onboardqueue import OnboardQueue
from ...server.messages import Request
from ...words import plural
from ..apicall import post
from ..contract import stays
from ..markup import Html, attrs, card, flag, html, join, link, table, trusted
from ..render import when
from ..web import Done, Form, Frame
from ..widgets import chip, csrf


class OnboardPageParts(CandidatesParts, Protocol):
    """What the endpoints serve that is not on the bench, and the onboarding queue."""
    onboard_queue: OnboardQueue


OPEN = ("queued", "probing", "suite")
WORDS = {"queued": "queued", "probing": "probing", "suite": "running the suite", "done": "done", "failed": "failed"}
MODES = [("quick", "Quick", "probe and time now; the suite is owed, and the scheduler's suite job plays it"),
         ("full", "Full", "probe and time now, then run the suite for it (one call per suite item; its progress "
                          "shows)"),
         ("adhoc", "Quick + ad hoc", "probe now; the bench never calls it unprompted (pay-per-use or trial keys)")]


def data(req: Request, bench: OnboardPageParts) -> dict:
    find = (req.query.get("find") or "").strip().lower()
    found = candidates_view(bench)
    items = bench.onboard_queue.items(200, None)
    latest = latest_items(items, found["candidates"], {a: m.endpoint for a, m in bench.registry.models().items()})
    rows = []
    for c in found["candidates"]:
        item = latest.get((c["endpoint"], c["served"]))
        if item is None and c["served"].endswith(":latest"):     # asked for without its tag (Ollama's llama3.2)
            item = latest.get((c["endpoint"], c["served"].removesuffix(":latest")))
        if c["on_bench"] and not item:
            continue                       # on the bench long ago: nothing to do here
        if find and find not in c["served"].lower() and find not in c["endpoint"].lower():
            continue
        rows.append({**c, "item": item})
    return {"candidates": rows, "errors": found["errors"], "find": find or None, "recent": items[:20],
            "endpoints": len(bench.registry.endpoints())}


def latest_items(items: list[dict], candidates: list[dict], models: dict[str, str]) -> dict:
    """(endpoint, served) -> the latest queue item for that model. An item queued without an endpoint names the
    one found from its probe on; before that (or in a record older than that) it goes where the queue will find
    it: the endpoint of the model it registered, else the one endpoint listing that name. An item no endpoint is
    sure for (several list the name: it fails saying so) shows under Recent onboarding alone, never on a row that
    is not its own."""
    serving: dict[str, set] = {}
    for c in candidates:
        serving.setdefault(c["served"], set()).add(c["endpoint"])
        if c["served"].endswith(":latest"):
            serving.setdefault(c["served"].removesuffix(":latest"), set()).add(c["endpoint"])
    latest: dict = {}
    for item in items:        # newest first: the first seen is the latest for that model
        endpoint = item["endpoint"] or models.get(item["model"] or "")
        if not endpoint and len(serving.get(item["served"], ())) == 1:
            endpoint = next(iter(serving[item["served"]]))
        if endpoint:
            latest.setdefault((endpoint, item["served"]), item)
    return latest


SEARCH = """<form method="get" action="/onboard" class="search" role="search"><label for="find">Find</label>\
<input id="find" name="find" type="search" value="$find" placeholder="name or endpoint" data-filter="#candidates">\
<button type="submit" class="secondary">Find</button></form>"""
INTRO = trusted('<p class="lead">Tick the models to put on the bench. Each one is probed with a one-word prompt and '
                "registered only if it answers (Full then runs the suite for it); they go one at a time, and the "
                "progress shows beside each (a reload shows the same).</p>")


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    if not d["endpoints"]:
        return "Onboard models", trusted('<p class="empty">No endpoints yet. <a href="/endpoints">Add an endpoint</a> '
                                         "first; its models then show here.</p>")
    errors = [html('<div class="flash flash-error" role="alert">$endpoint: $error</div>', endpoint=x["endpoint"],
                   error=x["error"]) for x in d["errors"]]
    return "Onboard models", html("$errors$intro$search$picker$recent", errors=errors, intro=INTRO,
                                  search=html(SEARCH, find=d["find"] or ""), picker=card("", picker(d, frame)),
                                  recent=card("Recent onboarding", recent(d["recent"])))


def state_cell(item: dict | None) -> Html:
    if not item:
        return trusted('<span class="muted">not on the bench</span>')
    detail = ""
    if item["state"] == "suite" and item.get("progress"):
        detail = html(' <span class="reason">$done of $total</span>', done=item["progress"]["done"],
                      total=item["progress"]["total"])
    elif item["state"] == "done":
        detail = html(" as $link", link=link("/models/" + item["model"], item["model"]))
    elif item["state"] == "failed":
        detail = html(' <span class="reason">$r</span>', r=item["reason"])
    return html("$chip$detail", chip=chip(item["state"], WORDS.get(item["state"])), detail=detail)


PICKER = """<form method="post" action="/onboard" id="onboard-form" data-onboard>$csrf\
<label class="choice"><input type="checkbox" data-select-all="pick"> Tick every model that can be onboarded</label>\
<div id="candidates">$table</div><fieldset class="modes"><legend>How</legend>$modes</fieldset>\
<div class="form-end"><button type="submit">Onboard the ticked models</button>\
<span class="status-text" data-status role="status"></span></div></form>"""


def picker(d: dict, frame: Frame) -> Html:
    if not d["candidates"]:
        what = "nothing matches" if d["find"] else "everything your endpoints serve is on the bench"
        return html('<p class="empty">Nothing to onboard: $what.</p>', what=what)
    rows = []
    for c in d["candidates"]:
        item, key = c["item"], f'{c["endpoint"]}|{c["served"]}'
        busy = flag("disabled", bool(item and item["state"] in OPEN) or bool(c["on_bench"]))
        box = html('<input type="checkbox" name="pick" value="$key" aria-label="Onboard $served"$busy>', key=key,
                   served=c["served"], busy=busy)
        alias = html('<input type="text" name="alias:$key" class="alias" placeholder="optional" '
                     'aria-label="Alias for $served"$busy>', key=key, served=c["served"], busy=busy)
        rows.append([box, html('<span class="served">$s</span>', s=c["served"]), c["endpoint"], alias, facts(c),
                     progress_cell(item, key)])
    modes = [html('<label class="choice"><input type="radio" name="mode" value="$m"$on> <strong>$label</strong> '
                  '<span class="muted">$hint</span></label>', m=m, on=flag("checked", i == 0), label=label, hint=hint)
             for i, (m, label, hint) in enumerate(MODES)]
    return html(PICKER, csrf=csrf(frame), modes=modes,
                table=table(["", "Model", "Endpoint", "Alias", "Facts", "Progress"], rows, cls="pick"))


def facts(c: dict) -> Html:
    """The facts the bench would use (every catalog merged, as `bench candidates` prints them), each group with
    its source; without a catalog entry, what the endpoint's list said."""
    sourced = (c.get("catalog") or {}).get("facts") or \
        {k: {"value": v, "source": "endpoint list"} for k, v in (c.get("facts") or {}).items()}
    value = {k: f["value"] for k, f in sourced.items()}
    said = []
    if value.get("context_window"):
        said.append((f"{value['context_window']:,} context", "context_window"))
    said += [(what, what) for what in ("tools", "vision") if value.get(what)]
    if value.get("price_in") == 0 and value.get("price_out") == 0:
        said.append(("free", "price_in"))
    elif value.get("price_in") is not None and value.get("price_out") is not None:
        said.append((f"${value['price_in']:g} in, ${value['price_out']:g} out per million tokens", "price_in"))
    groups: dict[str, list] = {}
    for words, key in said:
        groups.setdefault(sourced[key]["source"], []).append(words)
    return join([html('$words <span class="muted">($source)</span>', words=" · ".join(words), source=source)
                 for source, words in groups.items()], " · ")


def progress_cell(item: dict | None, key: str = "") -> Html:
    """An item's state, followed by the page's script (the table above and Recent onboarding alike)."""
    return html('<span class="progress"$data>$state</span>', state=state_cell(item), data=attrs(
        data_key=key, data_item=item["id"] if item else "", data_state=item["state"] if item else ""))


def recent(items: list[dict]) -> Html:
    rows = [[i["id"], html('<span class="served">$s</span>', s=i["served"]), i["endpoint"] or "", i["mode"],
             progress_cell(i), when(i["created"])] for i in items]
    return table(["#", "Model", "Endpoint", "Mode", "State", "Queued"], rows, "Nothing has been onboarded yet.")


def queue_models(req: Request, bench: object, form: Form) -> Done:
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
