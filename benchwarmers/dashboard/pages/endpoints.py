"""Endpoints: the list (where each key comes from, never the key), add one by pasting a key, test, remove.

The add area is a row of cards (ADD_CARDS): a local server found on this machine, and the paste form. Another
way to add an endpoint is one more card function here.
"""
from __future__ import annotations

import json

from ...providers import PROVIDERS
from ..apicall import call, get, post
from ..render import card, e, options, table, when
from ..web import Done
from ..widgets import chip, confirm, csrf, hidden, post_button

APIS = [("openai", "OpenAI-compatible"), ("anthropic", "Anthropic"), ("gemini", "Gemini"), ("ollama", "Ollama")]
KEY_SOURCES = {"environment": "environment variable", "keys.json": "keys.json", "none": "no key (local)",
               "missing": "missing"}


def data(req, bench) -> dict:
    return {"endpoints": get(req, "/bench/endpoints")["endpoints"],
            "local_servers": get(req, "/bench/local-servers")["servers"],
            "apis": [{"api": api, "label": label, "default_base": PROVIDERS[api].default_base} for api, label in APIS],
            "models": len(get(req, "/bench/models")["models"])}


def render(d: dict, frame) -> tuple[str, str]:
    parts = []
    if not d["endpoints"]:
        parts.append('<p class="lead">Start here: an endpoint is a base URL and a protocol, such as OpenRouter, '
                     "a provider's own API or a local Ollama. Add one below; its key is checked by listing its "
                     "models before anything is saved.</p>")
    elif not d["models"]:
        parts.append('<p class="lead callout">Next: <a href="/onboard">onboard models</a> from your endpoints.</p>')
    if d["endpoints"]:
        parts.append(card("Your endpoints", endpoint_table(d["endpoints"], frame)))
    parts.append('<div class="add-row">' + "".join(c(d, frame) for c in ADD_CARDS) + "</div>")
    return "Endpoints", "".join(p for p in parts if p)


def endpoint_table(endpoints: list[dict], frame) -> str:
    rows = []
    for x in endpoints:
        source = x["key_source"]
        key = chip("failed", "missing") + f' <span class="muted">set {e(x["key_env"])}</span>' \
            if source == "missing" else e(KEY_SOURCES.get(source, source))
        served = f'{x["served_count"]} <span class="muted">· {e(when(x["checked"]))}</span>' \
            if x.get("served_count") is not None else '<span class="muted">not checked</span>'
        actions = (post_button(frame, f"/endpoints/{x['name']}/test", "Test") +
                   confirm(frame, f"/endpoints/{x['name']}/remove", "Remove",
                           f"Remove endpoint {x['name']}?" + (f" Its {x['active_models']} active models are retired "
                                                               "(restorable once it is back)."
                                                               if x["active_models"] else "")))
        rows.append([f'<strong>{e(x["name"])}</strong>', e(dict(APIS).get(x["api"], x["api"])),
                     f'<code>{e(x["base_url"])}</code>', key, f'{x["models"]} on the bench', served,
                     f'<div class="actions">{actions}</div>'])
    return table(["Name", "API", "Base URL", "Key from", "Models", "Serves (checked)", ""], rows)


def local_card(d: dict, frame) -> str:
    found = [s for s in d["local_servers"] if s["answering"] and not s["endpoint"]]
    if not found:
        return ""
    s = found[0]
    taken = {x["name"] for x in d["endpoints"]}
    name = next(n for n in (s["name"], "local", "ollama-local", "ollama-2") if n not in taken)
    fields = "".join(hidden(k, v) for k, v in (("api", s["api"]), ("name", name), ("base_url", s["base_url"]),
                                               ("no_key", "1")))
    return card("Ollama on this machine",
                f'<p>Ollama answers at <code>{e(s["base_url"])}</code> with {s["models"]} models.</p>'
                f'<form method="post" action="/endpoints/add">{csrf(frame)}{fields}'
                f'<button type="submit">Add it as “{e(name)}”</button></form>', "add-card")


def paste_card(d: dict, frame) -> str:
    bases = {a["api"]: a["default_base"] for a in d["apis"]}
    chosen = frame.typed("api", "openai")
    hints = "".join(f'<li><strong>{e(a["label"])}</strong>: e.g. <code>{e(eg)}</code></li>'
                    for a, eg in ((a, "https://openrouter.ai/api/v1" if a["api"] == "openai" else a["default_base"])
                                  for a in d["apis"]))
    return card("Add an endpoint", f"""
<form method="post" action="/endpoints/add" class="stack" autocomplete="off">{csrf(frame)}
<label for="ep-api">API</label>
<select id="ep-api" name="api" data-bases="{e(json.dumps(bases))}">{options([(a, l) for a, l in APIS], chosen)}</select>
<label for="ep-name">Name <span class="muted">(what you will call it: letters, digits, . _ -)</span></label>
<input id="ep-name" name="name" type="text" autocomplete="off" required placeholder="openrouter"
 pattern="[A-Za-z0-9][A-Za-z0-9._\\-]{{0,63}}" value="{e(frame.typed("name"))}">
<label for="ep-base">Base URL</label>
<input id="ep-base" name="base_url" type="url" autocomplete="off" required placeholder="https://openrouter.ai/api/v1"
 value="{e(frame.typed("base_url"))}">
<label for="ep-key">Key
 <span class="muted">(checked by listing the models, kept in keys.json, never shown again)</span></label>
<input id="ep-key" name="key" type="password" autocomplete="new-password" spellcheck="false">
<label class="choice"><input type="checkbox" name="no_key" value="1"{" checked" if frame.typed("no_key") else ""}>
 No key: a local server</label>
<div class="form-end"><button type="submit">Add endpoint</button></div>
</form><details class="hint"><summary>Base URLs by API</summary><ul>{hints}</ul>
<p class="muted">The key goes to the llm CLI's keys.json (or set BENCHWARMERS_KEY_NAME in the service's
environment and leave it empty here); it never enters the data folder, a page or a log.</p></details>""",
                "add-card")


ADD_CARDS = [local_card, paste_card]


# ---- actions -----------------------------------------------------------------------------------

def add(req, bench, form) -> Done:
    body = {"name": form.get("name").strip(), "base_url": form.get("base_url").strip(), "api": form.get("api"),
            "no_key": form.flag("no_key")}
    if form.get("key").strip():
        body["key"] = form.get("key").strip()
    added = post(req, "/bench/endpoints", body)["endpoint"]
    key = {"keys.json": "its key is kept in keys.json", "environment": "its key comes from the environment",
           "none": "no key"}.get(added["key_source"], "")
    return Done(f"Added endpoint {added['name']}: it serves {added['served_count']} models; {key}.", "/endpoints",
                {"endpoint": added})


def test(req, bench, form) -> Done:
    d = post(req, f"/bench/endpoints/{req.params['name']}/test")["endpoint"]
    return Done(f"Endpoint {d['name']} answers: it serves {d['served_count']} models.", "/endpoints", {"endpoint": d})


def remove(req, bench, form) -> Done:
    d = call(req, "DELETE", f"/bench/endpoints/{req.params['name']}")
    retired = f" Retired: {', '.join(d['retired'])}." if d["retired"] else ""
    return Done(f"Removed endpoint {d['removed']}.{retired}" + (f" {d['note']}" if d.get("note") else ""),
                "/endpoints", d)


ACTIONS = [("/endpoints/add", add, "/endpoints"), ("/endpoints/{name}/test", test, "/endpoints"),
           ("/endpoints/{name}/remove", remove, "/endpoints")]
