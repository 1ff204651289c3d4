"""The model page's form for your own facts and roles: they beat every catalog, saved in config/overrides.json
through PUT /bench/models/{alias}/facts and /roles, as `bench model set` and `bench model role` save them."""
from __future__ import annotations

from ...catalog.overrides import FLAGS, NUMBERS
from ...catalog.roles import ROLES
from ...server.messages import Request
from ..apicall import call, get
from ..markup import Html, flag, html, options, trusted
from ..web import Done, Form, Frame
from ..widgets import csrf, hidden
from .modelcards import FACT_WORDS, fact_value

ANSWERS = [("", "as the catalog says"), ("yes", "yes"), ("no", "no")]
UNITS = {"context_window": "tokens", "max_output": "tokens", "price_in": "$ per million tokens",
         "price_out": "$ per million tokens"}


def yours(catalog: dict) -> dict:
    """The facts you set: your overrides come first, so a fact from them carries their source."""
    return {k: f["value"] for k, f in catalog["facts"].items() if f["source"] == "override"}


def word(key: str) -> str:
    return FACT_WORDS.get(key, key).split(" (")[0]


def number_field(key: str, own: dict, facts: dict, frame: Frame) -> Html:
    said = facts.get(key)
    hint = f"catalog: {fact_value(key, said['value'])}" if said and key not in own else "empty: the catalog's"
    step = trusted('step="1" min="1"' if NUMBERS[key] is int else 'step="any" min="0"')
    return html('<div><label for="own-$key">$word <span class="muted">($unit)</span></label><input id="own-$key" '
                'name="$key" type="number" $step value="$value" placeholder="$hint"></div>', key=key, word=word(key),
                unit=UNITS[key], step=step, value=frame.typed(key, shown(own.get(key))), hint=hint)


def shown(value) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def flag_field(key: str, own: dict, frame: Frame) -> Html:
    current = ("yes" if own[key] else "no") if key in own else ""
    return html('<div><label for="own-$key">$word</label><select id="own-$key" name="$key">$o</select></div>', key=key,
                word=word(key), o=options(ANSWERS, frame.typed(key, current)))


FACTS_FORM = """<form method="post" action="$base/facts" class="stack" id="own-facts">$csrf$back\
<div class="row">$numbers</div><div class="row">$flags</div>\
<div class="form-end"><button type="submit">Save facts</button></div></form>"""
ROLES_FORM = """<form method="post" action="$base/roles" class="stack" id="own-roles">$csrf$back\
<fieldset><legend>Roles <span class="muted">(explore seats go only to models whose roles fit a collection's purpose)\
</span></legend>$boxes</fieldset><div class="form-end"><button type="submit">Save roles</button>$auto</div></form>"""
INTRO = trusted('<p class="muted">What you set here beats every catalog, for seating, route mode and Discover alike. '
                "Empty a field to go back to the catalog's.</p>")
AUTO = trusted('<button type="submit" name="auto" value="1" class="secondary">Use the roles its facts give</button>')


def form(m: dict, frame: Frame) -> Html:
    """Two forms: the facts (an empty field or "as the catalog says" gives the fact back to the catalogs), and
    the roles (ticked as they are now)."""
    c, base = m["catalog"], f"/models/{m['alias']}"
    own = yours(c)
    back = hidden("back", base + "#yours")
    ticked = set(frame.typed_all("roles") or c["roles"])
    boxes = [html('<label class="choice"><input type="checkbox" name="roles" value="$r"$on> $r</label>', r=r,
                  on=flag("checked", r in ticked)) for r in ROLES]
    return html("$intro$facts$roles", intro=INTRO,
                facts=html(FACTS_FORM, base=base, csrf=csrf(frame), back=back,
                           numbers=[number_field(k, own, c["facts"], frame) for k in NUMBERS],
                           flags=[flag_field(k, own, frame) for k in FLAGS]),
                roles=html(ROLES_FORM, base=base, csrf=csrf(frame), back=back, boxes=boxes,
                           auto=AUTO if c["roles_set_by"] == "user" else ""))


# ---- actions -----------------------------------------------------------------------------------

def wanted(key: str, typed: str):
    """The form's text as the API's value: None gives it back to the catalogs; text that is not a number or
    yes/no is passed on as it is, for the API to say what is wrong with it."""
    typed = typed.strip()
    if not typed:
        return None
    if key in FLAGS:
        return {"yes": True, "no": False}.get(typed, typed)
    for kind in (int, float):
        try:
            return kind(typed)
        except ValueError:
            pass
    return typed


def save_facts(req: Request, bench: object, form: Form) -> Done:
    """Only the facts that changed are sent; a field the form did not send is left as it is."""
    alias = req.params["alias"]
    own = yours(get(req, f"/bench/models/{alias}")["model"]["catalog"])
    typed = {k: wanted(k, form.get(k)) for k in (*NUMBERS, *FLAGS) if k in form.fields}
    changes = {k: v for k, v in typed.items() if v != own.get(k)}
    if not changes:
        return Done("Nothing changed.", f"/models/{alias}#yours")
    call(req, "PUT", f"/bench/models/{alias}/facts", changes)
    said = [f"{word(k).lower()} {fact_value(k, v)}" if v is not None else f"{word(k).lower()} from the catalog again"
            for k, v in changes.items()]
    return Done(f"Saved your facts for {alias}: " + ", ".join(said) + ".", f"/models/{alias}#yours",
                {"changed": changes})


def save_roles(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    roles = None if form.get("auto") else form.getlist("roles")
    c = call(req, "PUT", f"/bench/models/{alias}/roles", {"roles": roles})["model"]["catalog"]
    how = "from its facts" if roles is None else "set by you"
    return Done(f"Roles of {alias}: {', '.join(c['roles']) or 'none'} ({how}).", f"/models/{alias}#yours",
                {"roles": c["roles"], "roles_set_by": c["roles_set_by"]})


ACTIONS = [("/models/{alias}/facts", save_facts, "/models/{alias}"),
           ("/models/{alias}/roles", save_roles, "/models/{alias}")]
