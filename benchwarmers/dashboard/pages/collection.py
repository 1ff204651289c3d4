"""One collection, made or changed: description, purpose, members, explore and shadow seats, merge model, its points
and referee; the count of calls one ask makes (the referee's included); who referees it now, and any referee passed
over with the fix; what the members share, suggestions and how to ask it; delete."""
from __future__ import annotations

from typing import Any, Protocol

from ...api.collection import overview_view
from ...api.models import ModelListParts, models_view
from ...catalog.roles import PURPOSES, unfit
from ...core.collection import Collections
from ...core.points import MODES as POINT_MODES
from ...core.rankings import served
from ...core.refereepick import Picker
from ...names import DESCRIPTION_MOST
from ...numberchecks import typed_seconds
from ...server.gatewaykeys import enforcement
from ...server.messages import Request
from ...words import plural
from ..apicall import call, get, post
from ..contract import stays
from ..markup import Html, attrs, card, flag, html, options, table, trusted
from ..web import Done, Form, Frame
from ..widgets import chip, confirm, csrf, hidden, post_button, record_cell
from .collectionlist import seat_count, suggestions, together_line, usage


class CollectionPageParts(ModelListParts, Protocol):
    """A collection's overview and record, the models it may seat, and where the service is."""
    admin_token: str | None
    collections: Collections
    referees: Picker

    def settings(self) -> dict: ...

    @property
    def url(self) -> str: ...


NEW = "_new"      # no collection name starts with "_"


def data(req: Request, bench: CollectionPageParts) -> dict:
    name = req.params["name"]
    d = {"new": name == NEW, "models": [dict({k: m[k] for k in ("alias", "status", "ad_hoc", "endpoint")},
                                              roles=m["catalog"]["roles"]) for m in models_view(bench)["models"]],
         "url": bench.url, "keys_enforced": enforcement(bench.admin_token, bench.settings())["enforced"],
         "collection": None, "record": {}}
    if name != NEW:
        d["collection"] = overview_view(bench, name)
        d["record"] = served(bench.rankings.models(name))
    return d


HOW_SEATS_WORK = trusted(
    "<p>Members answer every ask. Explore seats go, in turn, to the other active models (never ad hoc or held ones, "
    "and with a purpose only those whose roles fit it), so new and rarely used models get playing time; your verdicts "
    "on them show who earns a member's seat.</p><p>Shadow seats are for route mode: other members answer the same "
    "turn off the agent's path, to be judged.</p>")


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    c = d["collection"]
    if not d["models"]:
        return "New collection", trusted('<p class="empty">A collection seats models from the bench, and the bench is '
                                         'empty: <a href="/onboard">onboard models</a> first.</p>')
    side = [card("How seats work", HOW_SEATS_WORK)] if not c else [
        card("Seen whole", html("$together$suggestions$promote", together=together_line(c["together"]),
                                suggestions=suggestions(c) or trusted('<p class="muted">No suggestions from the record '
                                                                      "yet.</p>"),
                                promote=promote_buttons(c, frame))),
        card("Referee", referee_now(c["referee_now"], c["name"]), anchor="referee"),
        card("Ask it", usage(c, d["url"], d["keys_enforced"], opened=True)),
        card("Score it", html("<p>The suite asks each active member its questions with known answers, one model at a "
                              "time; the Suite page follows the runs.</p>$button", button=post_button(
                                  frame, "/suite/runs", "Run the suite for its members",
                                  {"target": f"collection:{c['name']}"}, back=f"/collections/{c['name']}"))),
        card("Delete", confirm(frame, f"/collections/{c['name']}/delete", "Delete collection",
                               f"Delete {c['name']}? Its calls and verdicts stay in the record."))]
    body = html('<div class="side-layout"><div>$editor</div><div>$side</div></div>', editor=card("", editor(d, frame)),
                side=side)
    return (c["name"] if c else "New collection"), body


EDITOR = """<form method="post" action="/collections/save" class="stack" data-seats>$csrf$back
$name_field
<label for="c-desc">Description <span class="muted">(what it is for, in your words)</span></label>
<textarea id="c-desc" name="description" rows="2" maxlength="$most">$description</textarea>
<label for="c-purpose">Purpose <span class="muted">(explore seats go only to models whose roles fit it)</span></label>
<select id="c-purpose" name="purpose">$purposes</select>
<fieldset><legend>Members <span class="muted">(always seated)</span></legend>
$members</fieldset>
<div class="row">
<div><label for="c-explore">Explore seats <span class="muted">(other models, taking turns)</span></label>
<input id="c-explore" name="explore" type="number" min="0" max="16"
 value="$explore"></div>
<div><label for="c-shadow">Shadow seats <span class="muted">(route mode: also answer, off the path)</span></label>
<input id="c-shadow" name="shadow" type="number" min="0" max="16" value="$shadow"></div>
<div><label for="c-merge">Merge model <span class="muted">(writes <code>:merged</code> answers)</span></label>
<select id="c-merge" name="merge_model">
$merge</select></div>
</div>
<div class="row">
<div><label for="c-points">Points <span class="muted">(where the seats disagree, found after the reply)</span></label>
<select id="c-points" name="points">$points</select></div>
<div><label for="c-referee">Referee <span class="muted">(never one of the panel's seats)</span></label>
<select id="c-referee" name="referee">
$referee</select></div>
<div><label for="c-wait">Points wait, seconds <span class="muted">(a stream waits this long for them; empty:
the setting)</span></label>
<input id="c-wait" name="points_wait" type="number" min="0" max="600" step="any" value="$wait"></div>
</div>
<output class="live-count" data-explorers="$explorers"
 aria-live="polite">$count</output>
<div class="form-end"><button type="submit">Save collection</button></div></form>"""
NAME_FIELD = """<label for="c-name">Name <span class="muted">(letters, digits, . _ -; asked as \
<code>bench/NAME</code>)</span></label><input id="c-name" name="name" required \
pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{0,63}" value="$name">"""


def editor(d: dict, frame: Frame) -> Html:
    c = d["collection"] or {"name": "", "description": "", "members": [], "explore": 1, "shadow": 0,
                            "merge_model": None, "purpose": "", "points": "contested", "referee": None}
    members = set(frame.typed_all("members") or c["members"])
    purpose = c.get("purpose") or ""
    rows = []
    for m in d["models"]:
        box = html('<input type="checkbox" name="members" value="$alias"$on$data aria-label="Member: $alias">',
                   alias=m["alias"], on=flag("checked", m["alias"] in members),
                   data=attrs(data_active=int(m["status"] == "active"), data_explorer=int(explorer(m, purpose))))
        rows.append([box, m["alias"], html("$chip$adhoc", chip=chip(m["status"]),
                                           adhoc=[" ", chip("adhoc", "ad hoc")] if m["ad_hoc"] else ""),
                     m["endpoint"], record_cell(d["record"].get(m["alias"]))])
    merge_choices = [("", "the default")] + [(m["alias"], m["alias"]) for m in d["models"]]
    referee_choices = [("", "the default: the best-recorded model outside the panel")] + \
        [(m["alias"], m["alias"]) for m in d["models"]]
    wait = c.get("points_wait")
    purposes = [("", "any: every model that answers in text")] + [(p, p) for p in PURPOSES]
    return html(EDITOR, csrf=csrf(frame), back=hidden("back", "/collections/" + (c["name"] or NEW)),
                name_field=html(NAME_FIELD, name=frame.typed("name")) if d["new"] else hidden("name", c["name"]),
                most=DESCRIPTION_MOST, description=frame.typed("description", c["description"]),
                purposes=options(purposes, frame.typed("purpose", c.get("purpose") or "")),
                members=table(["", "Model", "Status", "Endpoint", "Useful here"], rows, cls="pick"),
                explore=frame.typed("explore", c["explore"]), shadow=frame.typed("shadow", c["shadow"]),
                merge=options(merge_choices, frame.typed("merge_model", c["merge_model"] or "")),
                points=options([(m, POINT_WORDS[m]) for m in POINT_MODES], frame.typed("points", c["points"])),
                referee=options(referee_choices, frame.typed("referee", c.get("referee") or "")),
                wait=frame.typed("points_wait", "" if wait is None else f"{wait:g}"),
                explorers=sum(1 for m in d["models"] if explorer(m, purpose)),
                count=seat_count(d["collection"]["seats"]) if d["collection"] else "")


POINT_WORDS = {"off": "off: no referee", "contested": "contested: those some seat contradicts",
               "all": "all: every point"}


def referee_now(r: dict, name: str) -> Html:
    """Who referees this collection's panels now, the named referees it cannot have (a member, passed over for
    giving no valid points) and why, with the fix."""
    if r["points"] == "off":
        return trusted('<p class="muted">Points are off: no referee is asked.</p>')
    who = (html("<p><strong>$m</strong> referees its panels now$how.</p>", m=r["model"],
                how=" (named here)" if r["model"] == r["named"] else " (the referee_model setting)"
                if r["model"] == r["setting"] else ": the best-recorded model outside the panel")
           if r["model"] else html('<p class="seat-error">No referee: $why</p>', why=r["why"]))
    notes = [html("<li>$m: $why</li>", m=n["model"], why=n["reason"]) for n in r["passed_over"]]
    resting = [html("<li>$m: $why</li>", m=n["model"], why=n["reason"]) for n in r["resting"]
               if n["model"] not in {x["model"] for x in r["passed_over"]}]
    lists = html('<p>Passed over:</p><ul class="plain-list">$items</ul>', items=notes + resting) \
        if notes or resting else ""
    return html("$who$lists", who=who, lists=lists)


def explorer(m: dict, purpose: str) -> bool:
    """Whether seating may give it an explore seat (the saved purpose; held models are not active)."""
    return m["status"] == "active" and not m["ad_hoc"] and not unfit(m["roles"], purpose)


def promote_buttons(c: dict, frame: Frame) -> Html:
    out = [html('<form method="post" action="/collections/$name/add" class="inline">$csrf$model<button type="submit" '
                'class="secondary">Make $alias a member</button></form>', name=c["name"], csrf=csrf(frame),
                model=hidden("model", s["model"]), alias=s["model"])
           for s in c["suggestions"] if s["kind"] == "promote"]
    return html('<div class="actions">$out</div>', out=out) if out else Html("")


# ---- actions -----------------------------------------------------------------------------------

def whole(form: Form, name: str) -> int | str:
    value = form.get(name).strip()
    return int(value) if value.isdigit() else value     # the API says what is wrong with anything else


def save(req: Request, bench: object, form: Form) -> Done:
    name = form.get("name").strip()
    body: dict[str, Any] = {"members": form.getlist("members"), "description": form.get("description").strip(),
            "purpose": form.get("purpose"),
            "explore": whole(form, "explore"), "shadow": whole(form, "shadow"),
            "merge_model": form.get("merge_model") or None}
    if "points" in form.fields:       # the editor's points, referee and wait (a form without them keeps them)
        body.update(points=form.get("points"), referee=form.get("referee") or None,
                    points_wait=typed_seconds(form.get("points_wait")))
    saved = call(req, "PUT", f"/bench/collections/{name}", body)
    seats = get(req, f"/bench/collections/{name}/overview")["seats"]
    return Done(f"Saved collection {saved['name']}: one ask makes {plural(seats['calls'], 'call')}.",
                f"/collections/{name}", {"collection": saved})


def delete(req: Request, bench: object, form: Form) -> Done:
    name = req.params["name"]
    call(req, "DELETE", f"/bench/collections/{name}")
    return Done(f"Deleted collection {name}.", "/collections")


def add_member(req: Request, bench: object, form: Form) -> Done:
    name = req.params["name"]
    post(req, f"/bench/collections/{name}", {"add": [form.get("model")]})
    return Done(f"{form.get('model')} is now a member of {name}.", f"/collections/{name}")


ACTIONS = [("/collections/save", save, "/collections/_new"),
           ("/collections/{name}/delete", delete, "/collections/{name}"),
           ("/collections/{name}/add", add_member, "/collections/{name}")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
