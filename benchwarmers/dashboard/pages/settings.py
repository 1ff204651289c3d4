"""Settings: the server and who may reach it, gateway keys (made, shown once, revoked), the scheduler (scheduler.py),
who makes member calls (the built-in client or llm), the settings file's values, the record's size and retention,
the switches for providers whose free models work only in their own app (appswitch.py), and the user's own sign-in
apps (ownapps.py).

The page is a list of sections (SECTIONS): each has a key in the page's dict, a function that reads its data
from the bench's parts and one that renders it. A new section is one more entry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from ...api.collection import collections_view
from ...api.keys import KeysParts, keys_view
from ...api.settings import SettingsParts, settings_view
from ...api.status import StatusParts, summary
from ...api.store import StoreParts, store_view
from ...errors import BadRequest
from ...roster.registry import Registry
from ...scheduler import Clock, Scheduler
from ...server.gatewaykeys import GatewayKeys, enforcement
from ...server.messages import Request
from ...signin.flows import Flows
from .. import appswitch, ownapps
from ..apicall import call, get, post
from ..contract import stays
from ..markup import Html, attrs, card, facts, html, join, options, table, trusted
from ..render import when
from ..web import Done, Form, Frame
from ..widgets import chip, confirm, csrf, post_button
from . import scheduler


class KeysSectionParts(KeysParts, Protocol):
    """The gateway keys, and the collections a new one may name."""
    registry: Registry


class SettingsPageParts(StatusParts, Protocol):
    """Every section's (SECTIONS)."""
    clock: Clock
    gateway_keys: GatewayKeys
    scheduler: Scheduler
    signins: Flows


@dataclass
class Section:
    key: str
    title: str
    read: Callable[[Request, SettingsPageParts], Any]   # the section's data, from the bench's parts
    show: Callable[[Any, Frame], Html]                  # that data, shown


def read_server(req: Request, bench: StatusParts) -> dict:
    s = summary(bench)
    return {k: s[k] for k in ("url", "bind", "data_folder", "admin_token_set", "gateway_keys", "role", "version",
                              "uptime_seconds")}


def show_server(s: dict, frame: Frame) -> Html:
    code = lambda text: html("<code>$t</code>", t=text)   # noqa: E731
    return facts([("Dashboard", code(s["url"])), ("Gateway base URL", code(s["url"] + "/v1")),
                  ("Listening on", s["bind"]), ("Data folder", code(s["data_folder"])),
                  ("Admin token", join([chip("active", "set"), "the dashboard needs a login and apps a gateway key"],
                                       " ") if s["admin_token_set"] else
                   join([chip("queued", "not set"), "only this machine can reach it"], " ")),
                  ("Gateway keys", chip("active", "enforced") if s["gateway_keys"]["enforced"] else
                   join([chip("queued", "not enforced"), "a revoked or narrower key still works; see below"], " ")),
                  ("Running", f'{s["role"]}, version {s["version"]}')])


def not_enforced(frame: Frame) -> Html:
    """A loopback-only service without keys is a sound start, not a fault: a note, and one click to require them."""
    return html('<div class="flash flash-info" role="note">Gateway keys are not enforced: the service listens on this '
                "machine only, so any program here may call it, and a revoked or narrower key still works. $button "
                '<span class="muted">(from the next request; setting BENCHWARMERS_ADMIN_TOKEN and restarting '
                "requires them too, and a login for the dashboard)</span></div>",
                button=post_button(frame, "/settings/values", "Require keys", {"require_keys": "true"},
                                   back="/settings#gateway_keys"))


def read_keys(req: Request, bench: KeysSectionParts) -> dict:
    return {"keys": keys_view(bench)["keys"], "enforcement": enforcement(bench.admin_token, bench.settings()),
            "collections": [c["name"] for c in collections_view(bench)["collections"]]}


MAKE_KEY = """<form method="post" action="/settings/keys" class="stack narrow">$csrf
<h3 class="first">Make a key</h3>
<label for="k-name">Name <span class="muted">(the app it is for)</span></label>
<input id="k-name" name="name" required maxlength="64" value="$name">
<fieldset><legend>Reaches</legend><div class="choices">$boxes</div></fieldset>
<label for="k-rpm">Requests a minute <span class="muted">(empty: no limit)</span></label>
<input id="k-rpm" name="rpm" type="number" min="1" value="$rpm">
<div class="form-end"><button type="submit">Make key</button></div></form>"""
EVERY = trusted('<label class="choice"><input type="checkbox" name="collections" value="*"> every collection, and '
                "models asked directly</label>")


def show_keys(d: dict, frame: Frame) -> Html:
    shown = []
    if frame.secret:
        shown.append(html('<div class="secret" role="status"><p><strong>Your new key</strong>, shown once: copy it '
                          'now. Only its hash is kept.</p><pre id="new-key">$key</pre><button type="button" '
                          'class="secondary small" data-copy="#new-key">Copy</button></div>', key=frame.secret))
    rows = []
    for k in d["keys"]:
        state = chip("retired", "revoked " + when(k["revoked"])) if k["revoked"] else chip("active", "active")
        revoke = "" if k["revoked"] else confirm(frame, f"/settings/keys/{k['name']}/revoke", "Revoke",
                                                  f"Revoke {k['name']}? Apps using it are refused from now on.")
        rows.append([html("<strong>$n</strong>", n=k["name"]), html("<code>$p…</code>", p=k["prefix"]),
                     ", ".join(k["collections"]), k["rpm"] or "no limit", when(k["created"]), state, revoke])
    if not d["enforcement"]["enforced"]:   # a key made or revoked here changes nothing until keys are enforced
        shown.append(not_enforced(frame))
    listing = table(["Name", "Starts", "Reaches", "Requests a minute", "Made", "State", ""], rows,
                    "No gateway keys yet. Apps need one once keys are enforced.")
    boxes = [html('<label class="choice"><input type="checkbox" name="collections" value="$c"> $c</label>', c=c)
             for c in d["collections"]] + [EVERY]
    make = html(MAKE_KEY, csrf=csrf(frame), name=frame.typed("name"), boxes=boxes, rpm=frame.typed("rpm"))
    return html('$shown<div class="keys-layout"><div>$listing</div>$make</div>', shown=shown, listing=listing,
                make=make)


def read_client(req: Request, bench: SettingsParts) -> dict:
    return settings_view(bench)["client"]


def show_client(c: dict, frame: Frame) -> Html:
    problem = html('<div class="flash flash-error" role="alert">$p</div>', p=c["problem"]) if c["problem"] else ""
    made_by = ("the llm package" + (f' (llm {c["llm_version"]})' if c["llm_version"] else "")
               if c["in_use"] == "llm" else "the built-in client")
    here = f'llm {c["llm_version"]} is installed' if c["llm_version"] else "llm is not installed"
    return html('$problem$facts<p>Set <code>client</code> below to <code>llm</code> (or <code>BENCH_CLIENT=llm</code> '
                "in the service's environment, which wins) to call members through llm and its plugins. What the llm "
                'path does not cover:</p><ul class="llm-gaps">$gaps</ul>', problem=problem,
                facts=facts([("Member calls", made_by), ("Chosen by", c["chosen_by"]), ("llm", here)]),
                gaps=[html("<li>$l</li>", l=line) for line in c["llm_not_covered"]])


def read_values(req: Request, bench: SettingsParts) -> dict:
    return settings_view(bench)


def show_values(d: dict, frame: Frame) -> Html:
    problem = html('<div class="flash flash-error" role="alert">settings.json cannot be read, so the defaults serve: '
                   "$p</div>", p=d["problem"]) if d.get("problem") else ""
    rows = [[html('<label for="s-$n"><code>$n</code></label>', n=s["name"]), field(s, frame),
             "none" if s["default"] is None else json.dumps(s["default"]),
             s["help"]] for s in d["settings"]]   # a setting read at start-up says so in its help
    return html('$problem<form method="post" action="/settings/values">$csrf$table<p class="muted">Kept in '
                "<code>$file</code>. An empty value means the default.</p>"
                '<div class="form-end"><button type="submit">Save settings</button></div></form>', problem=problem,
                csrf=csrf(frame), table=table(["Setting", "Value", "Default", "What it does"], rows, cls="settings"),
                file=d["file"])


def as_text(s: dict) -> str:
    """A setting's value as its form field holds it (a yes/no setting as true or false)."""
    return "" if s["value"] is None else json.dumps(s["value"]) if s["type"] == "bool" else str(s["value"])


def field(s: dict, frame: Frame) -> Html:
    name, typed = s["name"], frame.typed(s["name"], as_text(s))
    if s["type"] == "bool":
        return html('<select id="s-$n" name="$n">$o</select>', n=name, o=options([(v, v) for v in ("true", "false")],
                                                                                 typed))
    return html('<input id="s-$n" name="$n" type="$kind"$step value="$v">', n=name, v=typed,
                kind="number" if s["type"] in ("int", "float") else "text",
                step=attrs(step="any" if s["type"] == "float" else None))


def read_store(req: Request, bench: StoreParts) -> dict:
    return store_view(bench)


def mb(n: int) -> str:
    return f"{n / 2 ** 20:,.1f} MB"


def show_store(d: dict, frame: Frame) -> Html:
    keep = (f"prompt and answer text kept {d['keep_days']} days: compacting now prunes "
            f"{d['would_prune_chars']:,} characters of it" if d["keep_days"] else
            trusted("prompt and answer text kept for ever (<code>record_keep_days</code> 0)"))
    button = confirm(frame, "/settings/store/compact", "Compact now",
                     "Prune the text older than record_keep_days and give free space back? Counts, verdicts, claims "
                     "and the ledger stay.")
    return html('$facts<p class="muted">The daily <code>compact</code> job (Scheduler, above) does the same; '
                "<code>bench store compact</code> and <code>bench store rebuild</code> from the command line.</p>"
                "$button", button=button, facts=facts([
                    ("Record", f'{mb(d["bytes"])}, of which {mb(d["free_bytes"])} free pages'),
                    ("Its WAL", mb(d["wal_bytes"])), ("Text kept", f'{d["text_chars"]:,} characters'),
                    ("Retention", keep), ("Free disk", room_words(d["room"]))]))


def room_words(r: dict) -> str:
    """What a compaction needs free, beside what the data folder's disk has."""
    short = "" if r["enough"] else ": too little, compaction is refused until space is freed"
    return f"{mb(r['free_bytes'])}; a compaction needs {mb(r['needed_bytes'])}{short}"


def compact_now(req: Request, bench: object, form: Form) -> Done:
    done = post(req, "/bench/store/compact", {})
    notes = "".join(f" Note: {n}." for n in done["notes"])
    return Done(f"Compacted: the text of {done['pruned_calls']:,} calls pruned, {mb(done['freed_bytes'])} given back."
                f"{notes}", "/settings#store", {"compaction": done})


SECTIONS = [Section("server", "Server and access", read_server, show_server),
            Section("gateway_keys", "Gateway keys", read_keys, show_keys),
            Section("scheduler", "Scheduler", scheduler.read, scheduler.show),
            Section("client", "Member calls", read_client, show_client),
            Section("settings", "Settings", read_values, show_values),
            Section("store", "The record", read_store, show_store),
            Section("app_only", "Free models only their own app can use", appswitch.read, appswitch.show),
            Section("apps", "Use your own app", ownapps.read, ownapps.show)]


def data(req: Request, bench: SettingsPageParts) -> dict:
    return {s.key: s.read(req, bench) for s in SECTIONS}


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    return "Settings", join(card(s.title, s.show(d[s.key], frame), anchor=s.key) for s in SECTIONS)


# ---- actions -----------------------------------------------------------------------------------

def make_key(req: Request, bench: object, form: Form) -> Done:
    rpm = form.get("rpm").strip()
    if rpm and not rpm.isdigit():
        raise BadRequest("Requests a minute must be a whole number (or empty for no limit).")
    made = post(req, "/bench/keys", {"name": form.get("name").strip(), "collections": form.getlist("collections"),
                                          "rpm": int(rpm) if rpm else None})
    unused = "" if made["enforced"] else " Keys are not enforced yet: see Gateway keys below."
    return Done(f"Made the key {made['name']}: copy it now, it is shown only once.{unused}",
                "/settings#gateway_keys", {"key": made}, secret=made["key"])


def revoke_key(req: Request, bench: object, form: Form) -> Done:
    call(req, "DELETE", f"/bench/keys/{req.params['name']}")
    refused = "are refused" if get(req, "/bench/status")["gateway_keys"]["enforced"] else \
        "are refused once keys are enforced"
    return Done(f"Revoked the key {req.params['name']}: apps using it {refused}.", "/settings#gateway_keys")


def save_values(req: Request, bench: object, form: Form) -> Done:
    """Only the values that changed are sent; an empty one takes the setting back to its default."""
    current = {s["name"]: s for s in get(req, "/bench/settings")["settings"]}
    changes = {}
    for name, s in current.items():
        if name not in form.fields:
            continue
        typed = form.get(name).strip()
        if typed != as_text(s):
            changes[name] = None if typed == "" else {"true": True, "false": False}.get(typed, typed) \
                if s["type"] == "bool" else typed
    if not changes:
        return Done("Nothing changed.", "/settings#settings")
    post(req, "/bench/settings", changes)
    return Done(f"Saved: {', '.join(sorted(changes))}.", "/settings#settings", {"changed": sorted(changes)})


ACTIONS = [("/settings/keys", make_key, "/settings"), ("/settings/keys/{name}/revoke", revoke_key, "/settings"),
           ("/settings/values", save_values, "/settings"), ("/settings/app-only", appswitch.save, "/settings"),
           ("/settings/store/compact", compact_now, "/settings"),
           ("/settings/apps/{provider}", ownapps.save, "/settings#apps")] + scheduler.ACTIONS


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
