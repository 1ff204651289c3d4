"""A panel's points on the dashboard: the card above the seat columns (claim, who asserts, denies, is silent, and one
true / false / can't tell control each), each seat's quoted words marked in its answer, and the useful / not useful
its judged points propose, beside its verdict form, to confirm in one click."""
from __future__ import annotations

from urllib.parse import quote

from ..errors import BadRequest
from ..server.messages import Request
from ..words import plural
from .apicall import call, post
from .markup import Html, card, html, join, trusted
from .web import Done, Form, Frame, safe_local
from .widgets import csrf, hidden

CHOICES = (("true", "True", True), ("false", "False", False), ("cant", "Can't tell", None))
VERDICT_WORDS = {True: "true", False: "false", None: "can't tell"}


def names(seats: list[dict]) -> dict[int, str]:
    return {s["seat"]: s["model"] for s in seats if s.get("seat")}


def points_card(frame: Frame, pts: dict | None, seats: list[dict], back: str) -> Html:
    """Nothing when no referee was asked; that it is reading (points.js reads the page again until they are in);
    why, when its points are unavailable; else every point, most contested first (the API's order), each with its
    control. The named referees passed over, with why, under it."""
    pts = pts or {}
    info = pts.get("info")
    if not info:
        return Html("")
    if info.get("pending"):
        body = html('<p class="muted" data-points-pending>The referee $who is reading the answers: its points show '
                    "here when they are in.</p>", who=info.get("referee") or "-")
    elif info.get("unavailable"):
        body = html('<p class="muted" data-points-unavailable>points: unavailable, $why</p>', why=info["unavailable"])
    elif not pts["points"]:
        body = trusted('<p class="muted">No points: the referee found no claim the seats disagree on.</p>')
    else:
        seat_names = names(seats)
        shown = [p for p in pts["points"] if p.get("shown", True)]
        rest = [p for p in pts["points"] if not p.get("shown", True)]
        body = html('<ol class="points">$items</ol>$rest',
                    items=[point_item(frame, p, seat_names, back) for p in shown],
                    rest=html('<details class="hint"><summary>$n the reply did not show (no seat contradicts '
                              'them)</summary><ol class="points">$items</ol></details>',
                              n=plural(len(rest), "more point"),
                              items=[point_item(frame, p, seat_names, back) for p in rest]) if rest else "")
    return card("Where they disagree", html("$body$notes", body=body, notes=passed_over(info)), "points",
                anchor="points")


def passed_over(info: dict) -> Html:
    notes = info.get("passed_over") or []
    if not notes:
        return Html("")
    return html('<p class="muted referee-note">Referee: $who. Passed over: $notes.</p>', who=info.get("referee") or
                "none", notes=join([html("$m ($r)", m=n.get("model"), r=n.get("reason")) for n in notes], "; "))


def point_item(frame: Frame, p: dict, seat_names: dict, back: str) -> Html:
    sides = [side("asserts", p["assert"], p, seat_names), side("denies", p["deny"], p, seat_names),
             side("silent", p["silent"], p, seat_names)]
    return html('<li class="point" data-point="$id"><p class="claim">$claim</p><ul class="sides">$sides</ul>'
                "$form</li>", id=p["id"], claim=p["claim"], sides=sides, form=point_form(frame, p, back))


def side(label: str, seats: list, p: dict, seat_names: dict) -> Html:
    if not seats:
        return Html("")
    who = [html("Seat $n · $model$q", n=n, model=seat_names.get(n, "?"),
                q=html(": “$q”", q=p["quotes"][str(n)]) if str(n) in p["quotes"] else "") for n in seats]
    return html('<li class="side side-$label"><span class="side-label">$label:</span> $who</li>', label=label,
                who=join(who, "; "))


def point_form(frame: Frame, p: dict, back: str) -> Html:
    """One form, a button per verdict (the clicked one's value is sent), and withdraw once judged."""
    v = p.get("verdict")
    now = VERDICT_WORDS[v["true"]] if v else None
    buttons = [html('<button type="submit" name="verdict" value="$value" class="$cls">$label</button>', value=value,
                    label=label, cls="" if v and v["true"] is said else "secondary")
               for value, label, said in CHOICES]
    if v:
        buttons.append(trusted('<button type="submit" name="verdict" value="withdraw" class="secondary">'
                               "Withdraw</button>"))
    judged = html('<span class="point-judged">judged: <strong>$w</strong></span>', w=now) if now else ""
    return html('<form method="post" action="/calls/point" class="point-verdict inline">$csrf$point$back$buttons'
                '$judged<span class="status-text" data-status role="status"></span></form>', csrf=csrf(frame),
                point=hidden("point", p["id"]), back=hidden("back", back), buttons=buttons, judged=judged)


def quotes_of(pts: dict | None) -> dict[int, list[str]]:
    """seat number -> its own words quoted by the points the reply showed."""
    out: dict[int, list[str]] = {}
    for p in (pts or {}).get("points") or []:
        if not p.get("shown", True):
            continue
        for seat, words in p["quotes"].items():
            out.setdefault(int(seat), []).append(words)
    return out


def proposal_form(frame: Frame, prop: dict | None, back: str) -> Html:
    """"Its judged points propose: useful" and one button that gives that verdict (from_points)."""
    if not prop or not prop.get("call"):
        return Html("")
    word = "useful" if prop["useful"] else "not useful"
    return html('<form method="post" action="/calls/verdict" class="proposal" data-proposal>$csrf$call$back$useful'
                '$frompoints<p>Its judged points propose: <strong>$word</strong> <span class="muted">($why)</span></p>'
                '<button type="submit" class="secondary">Confirm: $word</button>'
                '<span class="status-text" data-status role="status"></span></form>', csrf=csrf(frame),
                call=hidden("call", prop["call"]), back=hidden("back", back),
                useful=hidden("useful", "yes" if prop["useful"] else "no"),
                frompoints=hidden("from_points", "1"), word=word, why=prop["why"])


def judge(req: Request, bench: object, form: Form) -> Done:
    """A point judged true, false or can't tell (POST /bench/points/{id}/verdict), or withdrawn (DELETE)."""
    point = form.get("point").strip()
    choice = form.get("verdict")
    if not point:
        raise BadRequest("Say which point to judge.")
    path = f"/bench/points/{quote(point, safe='')}/verdict"
    if choice == "withdraw":
        done = call(req, "DELETE", path)
        said = "Point verdict withdrawn: the claims it gave are gone."
    else:
        value = {v: said for v, _, said in CHOICES}
        if choice not in value:
            raise BadRequest("Choose True, False or Can't tell.")
        done = post(req, path, {"true": value[choice]})
        said = f"Point judged {VERDICT_WORDS[value[choice]]}."
    back = safe_local(form.get("back")) or f"/calls/{quote(done.get('panel') or '', safe='')}"
    return Done(said, back, {"point": done})
