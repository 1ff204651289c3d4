"""One collection, made or changed: description, purpose, members, explore and shadow seats, merge model; the count of
calls one ask makes; what the members share, suggestions and how to ask it; delete."""
from __future__ import annotations

from ...catalog.roles import PURPOSES, unfit
from ...names import DESCRIPTION_MOST
from ...words import plural
from ..apicall import call, get, post
from ..contract import stays
from ..render import card, e, options, table
from ..web import Done
from ..widgets import chip, confirm, csrf, hidden, post_button, record_cell
from .collections import seat_count, suggestions, together_line, usage

NEW = "_new"      # no collection name starts with "_"


def data(req, bench) -> dict:
    name = req.params["name"]
    models = get(req, "/bench/models")["models"]
    status = get(req, "/bench/status")
    d = {"new": name == NEW, "models": [dict({k: m[k] for k in ("alias", "status", "ad_hoc", "endpoint")},
                                              roles=m["catalog"]["roles"]) for m in models],
         "url": status["url"], "keys_enforced": status["gateway_keys"]["enforced"], "collection": None, "record": {}}
    if name != NEW:
        d["collection"] = get(req, f"/bench/collections/{name}/overview")
        d["record"] = get(req, "/bench/record", collection=name)["models"]
    return d


def render(d: dict, frame) -> tuple[str, str]:
    c = d["collection"]
    if not d["models"]:
        return "New collection", ('<p class="empty">A collection seats models from the bench, and the bench is '
                                  'empty: <a href="/onboard">onboard models</a> first.</p>')
    side = []
    if c:
        side.append(card("Seen whole", together_line(c["together"]) + (suggestions(c) or
                                                                         '<p class="muted">No suggestions from the '
                                                                         "record yet.</p>")
                         + promote_buttons(c, frame)))
        side.append(card("Ask it", usage(c, d["url"], d["keys_enforced"], opened=True)))
        side.append(card("Score it", "<p>The suite asks each active member its questions with known answers, one "
                                     "model at a time; the Suite page follows the runs.</p>"
                         + post_button(frame, "/suite/runs", "Run the suite for its members",
                                       {"target": f"collection:{c['name']}"}, back=f"/collections/{c['name']}")))
        side.append(card("Delete", confirm(frame, f"/collections/{c['name']}/delete", "Delete collection",
                                           f"Delete {c['name']}? Its calls and verdicts stay in the record.")))
    else:
        side.append(card("How seats work", '<p>Members answer every ask. Explore seats go, in turn, to the other '
                                           "active models (never ad hoc or held ones, and with a purpose only those "
                                           "whose roles fit it), so new and rarely used models get playing time; "
                                           "your verdicts on them show who earns a member's seat.</p>"
                                           "<p>Shadow seats are for route mode: other members answer the same turn "
                                           "off the agent's path, to be judged.</p>"))
    body = f'<div class="side-layout"><div>{card("", editor(d, frame))}</div><div>{"".join(side)}</div></div>'
    return (c["name"] if c else "New collection"), body


def editor(d: dict, frame) -> str:
    c = d["collection"] or {"name": "", "description": "", "members": [], "explore": 1, "shadow": 0,
                            "merge_model": None, "purpose": ""}
    members = set(frame.typed_all("members") or c["members"])
    purpose = c.get("purpose") or ""
    name_field = (f'<label for="c-name">Name <span class="muted">(letters, digits, . _ -; asked as '
                  f'<code>bench/NAME</code>)</span></label><input id="c-name" name="name" required '
                  f'pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{{0,63}}" value="{e(frame.typed("name"))}">'
                  if d["new"] else hidden("name", c["name"]))
    rows = []
    for m in d["models"]:
        on = m["alias"] in members
        box = (f'<input type="checkbox" name="members" value="{e(m["alias"])}"{" checked" if on else ""} '
               f'data-active="{1 if m["status"] == "active" else 0}" '
               f'data-explorer="{1 if explorer(m, purpose) else 0}" '
               f'aria-label="Member: {e(m["alias"])}">')
        rows.append([box, e(m["alias"]), chip(m["status"]) + (" " + chip("adhoc", "ad hoc") if m["ad_hoc"] else ""),
                     e(m["endpoint"]), record_cell(d["record"].get(m["alias"]))])
    merge_choices = [("", "the default")] + [(m["alias"], m["alias"]) for m in d["models"]]
    purposes = [("", "any: every model that answers in text")] + [(p, p) for p in PURPOSES]
    count = seat_count(d["collection"]["seats"]) if d["collection"] else ""
    back = hidden("back", "/collections/" + (c["name"] or NEW))
    return f"""<form method="post" action="/collections/save" class="stack" data-seats>{csrf(frame)}{back}
{name_field}
<label for="c-desc">Description <span class="muted">(what it is for, in your words)</span></label>
<textarea id="c-desc" name="description" rows="2" maxlength="{DESCRIPTION_MOST}">{
e(frame.typed("description", c["description"]))}</textarea>
<label for="c-purpose">Purpose <span class="muted">(explore seats go only to models whose roles fit it)</span></label>
<select id="c-purpose" name="purpose">{options(purposes, frame.typed("purpose", c.get("purpose") or ""))}</select>
<fieldset><legend>Members <span class="muted">(always seated)</span></legend>
{table(["", "Model", "Status", "Endpoint", "Useful here"], rows, cls="pick")}</fieldset>
<div class="row">
<div><label for="c-explore">Explore seats <span class="muted">(other models, taking turns)</span></label>
<input id="c-explore" name="explore" type="number" min="0" max="16"
 value="{e(frame.typed("explore", c["explore"]))}"></div>
<div><label for="c-shadow">Shadow seats <span class="muted">(route mode: also answer, off the path)</span></label>
<input id="c-shadow" name="shadow" type="number" min="0" max="16" value="{e(frame.typed("shadow", c["shadow"]))}"></div>
<div><label for="c-merge">Merge model <span class="muted">(writes <code>:merged</code> answers)</span></label>
<select id="c-merge" name="merge_model">
{options(merge_choices, frame.typed("merge_model", c["merge_model"] or ""))}</select></div>
</div>
<output class="live-count" data-explorers="{sum(1 for m in d["models"] if explorer(m, purpose))}"
 aria-live="polite">{count}</output>
<div class="form-end"><button type="submit">Save collection</button></div></form>"""


def explorer(m: dict, purpose: str) -> bool:
    """Whether seating may give it an explore seat (the saved purpose; held models are not active)."""
    return m["status"] == "active" and not m["ad_hoc"] and not unfit(m["roles"], purpose)


def promote_buttons(c: dict, frame) -> str:
    out = []
    for s in c["suggestions"]:
        if s["kind"] == "promote":
            out.append(f'<form method="post" action="/collections/{e(c["name"])}/add" class="inline">{csrf(frame)}'
                       f'{hidden("model", s["model"])}<button type="submit" class="secondary">Make {e(s["model"])} '
                       "a member</button></form>")
    return f'<div class="actions">{"".join(out)}</div>' if out else ""


# ---- actions -----------------------------------------------------------------------------------

def whole(form, name: str) -> int | str:
    value = form.get(name).strip()
    return int(value) if value.isdigit() else value     # the API says what is wrong with anything else


def save(req, bench, form) -> Done:
    name = form.get("name").strip()
    body = {"members": form.getlist("members"), "description": form.get("description").strip(),
            "purpose": form.get("purpose"),
            "explore": whole(form, "explore"), "shadow": whole(form, "shadow"),
            "merge_model": form.get("merge_model") or None}
    saved = call(req, "PUT", f"/bench/collections/{name}", body)
    seats = get(req, f"/bench/collections/{name}/overview")["seats"]
    return Done(f"Saved collection {saved['name']}: one ask makes {plural(seats['calls'], 'call')}.",
                f"/collections/{name}", {"collection": saved})


def delete(req, bench, form) -> Done:
    name = req.params["name"]
    call(req, "DELETE", f"/bench/collections/{name}")
    return Done(f"Deleted collection {name}.", "/collections")


def add_member(req, bench, form) -> Done:
    name = req.params["name"]
    post(req, f"/bench/collections/{name}", {"add": [form.get("model")]})
    return Done(f"{form.get('model')} is now a member of {name}.", f"/collections/{name}")


ACTIONS = [("/collections/save", save, "/collections/_new"),
           ("/collections/{name}/delete", delete, "/collections/{name}"),
           ("/collections/{name}/add", add_member, "/collections/{name}")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
