"""Ask: pick a collection (or models), write a prompt, attach files; answers come back side by side, one column a
seat, each with its verdict form. With script the columns stream in (dashboard/askstream.py); without, the form
posts and the answers open on the ask's own page."""
from __future__ import annotations

import base64
from typing import Any, Protocol

from ...api.collection import collections_view
from ...api.models import ModelListParts, models_view
from ...core.collection import Collections
from ...errors import BadRequest
from ...server.messages import Request
from ...words import plural
from ..apicall import post
from ..contract import stays
from ..markup import Html, card, flag, html, options, trusted
from ..web import Done, Form, Frame
from ..widgets import csrf, post_button, verdict_form


class AskPageParts(ModelListParts, Protocol):
    """The collections and models to pick from."""
    collections: Collections


SCRIPTS = ("ask.js", "askturns.js", "points.js")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def data(req: Request, bench: AskPageParts) -> dict:
    return {"collections": [{k: c[k] for k in ("name", "description", "members", "explore")}
                            for c in collections_view(bench)["collections"]],
            "models": [m["alias"] for m in models_view(bench)["models"] if m["status"] != "retired"],
            "chosen": req.query.get("collection") or None}


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    if not d["collections"] and not d["models"]:
        return "Ask", trusted('<p class="empty">Nothing to ask yet: <a href="/onboard">onboard models</a>, then '
                              '<a href="/collections/_new">make a collection</a>.</p>')
    return "Ask", html("$form$results", form=card("", form(d, frame)), results=results(frame))


FORM = """<form method="post" action="/ask" enctype="multipart/form-data" class="stack" id="ask-form"
 data-stream="/ask/stream" data-estimate="/ask/estimate">$csrf
<label for="ask-collection">Ask</label>
<select id="ask-collection" name="collection">$collections</select>
<details class="hint"$open><summary>Also ask these models</summary>
<div class="choices">$boxes</div></details>
<label for="ask-prompt">Prompt</label>
<textarea id="ask-prompt" name="prompt" rows="7" required>$prompt</textarea>
<label for="ask-files">Attach files <span class="muted">(text files go in the prompt; images go to models that
 see them)</span></label>
<input id="ask-files" name="files" type="file" multiple>
<details class="hint"><summary>System prompt</summary>
<label for="ask-system" class="sr-only">System prompt</label>
<textarea id="ask-system" name="system" rows="3">$system</textarea></details>
<label class="choice"><input type="checkbox" name="merged" value="1"$merged>
 Also one merged answer: a model writes where the seats agree and differ (<code>:merged</code>)</label>
<label class="choice"><input type="checkbox" name="blind" value="1"$blind>
 Blind: the seats as Seat 1..N in a random order, no model named until you judge them</label>
<p class="estimate muted" data-estimate-out aria-live="polite" hidden></p>
<div class="form-end"><button type="submit">Ask</button><span class="status-text" data-status role="status"></span>
</div></form>"""


def form(d: dict, frame: Frame) -> Html:
    chosen = frame.typed("collection", d["chosen"] or (d["collections"][0]["name"] if d["collections"] else ""))
    cols = [(c["name"], f'{c["name"]} — {c["description"]}' if c["description"] else c["name"])
            for c in d["collections"]] + [("", "no collection: only the models ticked below")]
    ticked = set(frame.typed_all("with"))
    boxes = [html('<label class="choice"><input type="checkbox" name="with" value="$m"$on> $m</label>', m=m,
                  on=flag("checked", m in ticked)) for m in d["models"]]
    return html(FORM, csrf=csrf(frame), collections=options(cols, chosen), open=flag("open", ticked),
                boxes=boxes or trusted('<span class="muted">No models on the bench.</span>'),
                prompt=frame.typed("prompt"), system=frame.typed("system"),
                merged=flag("checked", frame.typed("merged")), blind=flag("checked", frame.typed("blind")))


RESULTS = """<section id="turns" aria-label="Earlier turns"></section>\
<section id="answers" class="answers-area" aria-live="polite" hidden><div class="answers-head">\
<h2>Answers</h2><a class="panel-link" hidden>Open this ask on its own page</a></div>\
<div class="card merged" hidden></div><div class="seats"></div></section>\
<template id="seat-template"><article class="seat"><header class="seat-head"><h3></h3>\
<p class="seat-meta"></p><div class="seat-tools"><button type="button" class="small ghost" data-stop>Stop</button>\
<button type="button" class="small ghost" data-retry hidden>Retry</button>\
<button type="button" class="small ghost" data-copy="" hidden>Copy</button>\
<button type="button" class="small ghost" data-only hidden>Continue with this seat only</button>\
<span class="status-text" data-seat-status role="status"></span></div></header>\
<div class="answer"><p class="muted">waiting…</p></div><pre class="seat-source" hidden></pre>\
<div class="best-pick" hidden>$best</div>$verdict</article></template>"""


FOLLOW = """<template id="follow-template"><form method="post" action="/ask" class="stack card follow"
 id="follow-form" data-stream="/ask/stream">$csrf<input type="hidden" name="continue"><input type="hidden" name="seat">
<input type="hidden" name="collection"><input type="hidden" name="with" disabled>
<input type="hidden" name="merged" value="1" disabled>
<label for="follow-prompt">Follow up: each seat goes on with its own thread</label>
<p class="muted" data-only-note hidden><span></span>
 <button type="button" class="small ghost" data-every>Ask every seat</button></p>
<textarea id="follow-prompt" name="prompt" rows="3" required></textarea>
<div class="form-end"><button type="submit">Ask the same seats</button><span class="status-text" data-status
 role="status"></span></div></form></template>"""


def results(frame: Frame) -> Html:
    """Where the streamed columns go (earlier turns of the conversation above them), and the shapes of one column
    and of the follow-up box (under the answers once they are in) for the script to fill."""
    return html(RESULTS + FOLLOW, verdict=verdict_form(frame, "CALL", None, "/ask"), csrf=csrf(frame),
                best=post_button(frame, "/calls/best", "Best answer", {"panel": "", "seat": ""}, back="/ask"))


# ---- the ask, as a chat request ----------------------------------------------------------------

def chat_body(form: Form) -> dict:
    """The form as an OpenAI chat request: the target, the prompt with text files, images, system, extra seats."""
    prompt = form.get("prompt").strip()
    extra = form.getlist("with")
    collection = form.get("collection").strip()
    if not collection and not extra:
        raise BadRequest("Choose a collection or tick models to ask.")
    images = []
    for f in form.files:
        if f.type in IMAGE_TYPES:
            images.append({"type": "image_url", "image_url": {
                "url": f"data:{f.type};base64,{base64.b64encode(f.data).decode()}"}})
        else:
            prompt += f'\n\n<file name="{f.filename}">\n{f.data.decode("utf-8", "replace").rstrip()}\n</file>'
    if not prompt.strip():
        raise BadRequest("Nothing to ask: write a prompt or attach a file.")
    content: str | list[dict] = [{"type": "text", "text": prompt}, *images] if images else prompt
    messages: list[dict] = ([{"role": "system", "content": form.get("system")}] if form.get("system").strip() else [])
    messages.append({"role": "user", "content": content})
    if collection:
        model = f"bench/{collection}" + (":merged" if form.flag("merged") else "")
    else:
        model, extra = extra[0], extra[1:]
    body: dict[str, Any] = {"model": model, "messages": messages}
    if extra:
        body["bench"] = {"with": extra}
    if form.flag("blind"):
        body.setdefault("bench", {})["blind"] = True
    return followed(form, body)


def followed(form, body: dict) -> dict:
    """A follow-up (the page's follow-up box): the panel it continues, and the one seat it asks when only one is."""
    panel, seat = form.get("continue").strip(), form.get("seat").strip()
    if not panel:
        return body
    if seat and not seat.isdigit():
        raise BadRequest("Name the seat to continue with by its number (seat=2), or leave it out for every seat.")
    body.setdefault("bench", {}).update({"continue": panel, **({"seat": int(seat)} if seat else {})})
    return body


def ask(req: Request, bench: object, form: Form) -> Done:
    """Without script: ask through the gateway, then open the ask's own page with every seat and verdict form."""
    reply = post(req, "/v1/chat/completions", chat_body(form))
    meta = reply.get("bench") or {}
    seats = meta.get("seats") or []
    answered = sum(s.get("status") == "ok" for s in seats)
    return Done(f"Asked {meta.get('collection')}: {answered} of {plural(len(seats), 'seat')} answered.",
                f"/calls/{meta.get('panel')}", {"bench": meta})


ACTIONS = [("/ask", ask, "/ask")]


redirect = stays                 # always shows itself
