"""One ask: what was asked, then every seat side by side with its verdict form, so judging later is as easy as now,
and the models passed over for an explore seat, with why."""
from __future__ import annotations

from typing import Protocol
from urllib.parse import quote

from ...api.history import history_item
from ...api.panels import conversation_of
from ...api.parts import Records
from ...core.bestpick import Best
from ...core.pointverdicts import PointVerdicts
from ...errors import BadRequest
from ...server.messages import Request
from ..apicall import post
from ..bestview import best_button, pick, pick_bar
from ..contract import stays
from ..markup import Html, attrs, card, html, link, table, trusted
from ..pointsview import judge, points_card, proposal_form, quotes_of
from ..render import when
from ..rendered import answer_html
from ..web import Done, Form, Frame, safe_local
from ..widgets import chip, post_button, seat_column


class CallPageParts(Records, Protocol):
    """The ask, from the record, and a panel's points and best pick."""
    points: PointVerdicts
    best: Best


def judge_card(j: dict, seats: list) -> Html:
    """A route turn's judge model and what it said of each answer, apart from your verdicts (they never mix)."""
    rows = [[s["model"], s["kind"], "useful" if j["verdicts"][s["call"]] else "not useful"]
            for s in seats if s["call"] in j["verdicts"]]
    said = table(["Model", "Seat", "The judge says"], rows) if rows else \
        html('<p class="seat-error">No verdict: $why</p>', why=j.get("error") or "its answer held none")
    return card(f"Judged by {j.get('model') or 'the judge'}, blind (apart from your verdicts)", said, "judge")


def data(req: Request, bench: CallPageParts) -> dict:
    """The ask (GET /bench/history/{id}) and, for a panel, its points (GET /bench/panels/{id}/points), its best
    pick (GET /bench/panels/{id}/best) and its conversation's turns (as GET /bench/panels/{id} gives them)."""
    d = history_item(bench, req.params["id"])
    if d["kind"] == "panel":
        d["points"] = bench.points.of_panel(d["id"])
        d["best"] = bench.best.of_panel(d["id"])
        d.update(conversation_of(bench, d["id"]) or {})
    return d


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    back = f"/calls/{d['id']}"
    kind = "Panel" if d["kind"] == "panel" else "Route turn"
    mode = f' · {d["mode"]}' if d["mode"] not in ("panel", "route") else ""
    parts = [html('<p class="meta">$chip <strong>$collection</strong>$mode · $when</p>',
                  chip=chip(d["kind"], kind.lower()), collection=d["collection"], mode=mode,
                  when=when(d["created"], seconds=True)),
             conversation(d), card("Asked", asked(d["request"]))]
    if d.get("blind"):
        parts.insert(1, html('<p class="blind-note muted">$said</p>', said=(
            "Blind: judged, so who sat where is shown." if d.get("revealed") else
            "Blind: the seats are Seat 1..N, no model named, until you judge them (best answer, a verdict or a "
            "point's verdict).")))
    if d.get("merge"):
        m = d["merge"]
        body = (answer_html(m["answer"] or "") if m["status"] == "ok" else
                html('<p class="seat-error">$e</p>', e=m["error"]))
        parts.append(card(f"Merged by {m['model']}", html('<div class="answer">$b</div>', b=body), "merged"))
    parts.append(points_card(frame, d.get("points"), d["seats"], back))
    parts.append(judging(frame, d, back))
    if d.get("judge"):
        parts.append(judge_card(d["judge"], d["seats"]))
    quotes = quotes_of(d.get("points"))
    proposals = {p["seat"]: p for p in (d.get("points") or {}).get("proposals") or []}
    best = d.get("best") or {}
    picked = {p["seat"]: p for p in best.get("proposals") or []}
    parts.append(html('<section class="seats" aria-label="Answers">$columns</section>',
                      columns=[seat_column(frame, s, back, quotes.get(s.get("seat"), ()),
                                           proposed(frame, proposals, picked, s, back),
                                           best_button(frame, d["id"], s, best.get("best"), back)
                                           if d["kind"] == "panel" else Html(""))
                               for s in d["seats"]]))
    if d.get("passed_over"):
        unseen = d.get("blind") and not d.get("revealed")     # "a model" until judged: no page to link
        rows = [[p["model"] if unseen else link(f"/models/{p['model']}", p["model"]),
                 html('<span class="reason">$r</span>', r=p["reason"])] for p in d["passed_over"]]
        parts.append(card("Passed over for an explore seat", table(["Model", "Why"], rows), anchor="passed-over"))
    return f"{kind}: {d['prompt'][:60] or d['id']}", html("$parts", parts=parts)


def proposed(frame: Frame, points: dict, picked: dict, seat: dict, back: str) -> Html:
    """What the seat's judged points propose, else what the best pick does; confirmed in one click."""
    if seat["status"] != "ok":
        return Html("")
    if seat.get("seat") in points:
        return proposal_form(frame, points[seat["seat"]], back)
    return proposal_form(frame, picked.get(seat.get("seat")), back, source="best")


def judging(frame: Frame, d: dict, back: str) -> Html:
    """Above the columns: "Save all verdicts" (with script), and setting a panel aside as only a test so its
    answers stop counting as waiting for a verdict (or bringing it back)."""
    answered = sum(s["status"] == "ok" for s in d["seats"])
    save = trusted('<button type="button" data-save-all hidden>Save all verdicts</button>') if answered > 1 else ""
    aside = ""
    if d["kind"] == "panel":
        if d.get("set_aside"):
            aside = html('<span class="muted">Set aside as only a test: its answers do not wait for a verdict.</span> '
                         "$button", button=post_button(frame, "/calls/aside", "Bring it back",
                                                       {"id": d["id"], "aside": "0"}, back=back))
        else:
            aside = post_button(frame, "/calls/aside", "Set aside: only a test", {"id": d["id"], "aside": "1"},
                                back=back)
    best = pick_bar(frame, d["id"], (d.get("best") or {}).get("best"), back) if d["kind"] == "panel" and answered \
        else ""
    if not save and not aside and not best:
        return Html("")
    return html('<div class="save-all" data-save-all-box>$save$best$aside<span class="status-text" data-status>'
                "</span></div>", save=save, best=best, aside=aside)


def set_aside(req: Request, bench: object, form: Form) -> Done:
    """Set the panel aside as only a test, or bring it back: POST /bench/history/{id}/aside."""
    panel = form.get("id").strip()
    if not panel:
        raise BadRequest("Say which ask to set aside.")
    aside = form.get("aside") != "0"
    post(req, f"/bench/history/{quote(panel, safe='')}/aside", {"aside": aside})
    said = ("Set aside: its answers no longer wait for a verdict." if aside else
            "Brought back: its answers wait for a verdict again.")
    return Done(said, safe_local(form.get("back")) or f"/calls/{quote(panel, safe='')}")


def conversation(d: dict) -> Html:
    """A follow-up's place in its conversation: every turn, oldest first, this one marked (nothing for one turn)."""
    turns = (d.get("conversation") or {}).get("turns") or []
    if len(turns) < 2:
        return Html("")
    items = [html('<li$cls>$link <span class="muted">$when</span></li>',
                  cls=attrs(class_="current" if t["panel"] == d["id"] else None),
                  link=link(f"/calls/{quote(t['panel'], safe='')}", t["prompt"][:120] or t["panel"]),
                  when=when(t["created"], seconds=True)) for t in turns]
    at = next((f"turn {i} of {len(turns)}" for i, t in enumerate(turns, 1) if t["panel"] == d["id"]),
              f"{len(turns)} turns")
    return card(f"Conversation: {at}", html('<ol id="conversation" class="turns">$items</ol>', items=items),
                "conversation")


def asked(request: dict | None) -> Html:
    if not request:
        return trusted('<p class="muted">The request was not recorded.</p>')
    system = html('<p class="muted">System: $s</p>', s=request["system"]) if request.get("system") else ""
    turns = [html('<div class="turn"><span class="role">$role</span><pre class="prompt-text">$content</pre></div>',
                  role=m["role"], content=m["content"]) for m in request.get("messages") or []]
    return html("$system$turns", system=system, turns=turns)


def verdict(req: Request, bench: object, form: Form) -> Done:
    """Useful or not, claims real and false (one a line), a note: through POST /bench/verdict."""
    if form.get("useful") not in ("yes", "no"):
        raise BadRequest("Choose Useful or Not useful first.")
    body = {"call": form.get("call"), "useful": form.get("useful") == "yes",
            "real": [x.strip() for x in form.get("real").splitlines() if x.strip()],
            "false": [x.strip() for x in form.get("false").splitlines() if x.strip()]}
    if form.get("note").strip():
        body["note"] = form.get("note").strip()
    if form.get("from_points") == "1":
        body["from_points"] = True     # confirmed as the seat's judged points proposed it
    saved = post(req, "/bench/verdict", body)
    revised = " (revised)" if saved.get("revisions", 1) > 1 else ""
    word = "useful" if saved["useful"] else "not useful"
    return Done(f"Verdict saved: {word}{revised}.", safe_local(form.get("back")) or "/calls", {"verdict": saved})


ACTIONS = [("/calls/verdict", verdict, "/calls"), ("/calls/aside", set_aside, "/calls"),
           ("/calls/point", judge, "/calls"), ("/calls/best", pick, "/calls")]


SCRIPTS = ("points.js",)
redirect = stays                 # always shows itself
