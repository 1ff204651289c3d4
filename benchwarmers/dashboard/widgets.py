"""Dashboard pieces shared by pages: status chips, small POST forms, confirm steps, the record, suite, probe and
speed cells, verdict forms, seat columns."""
from __future__ import annotations

from ..names import NOTE_MOST
from .markup import Html, attrs, flag, html, join, trusted
from .render import pct, secs, token, when
from .rendered import answer_html
from .web import Frame

CHIP_WORDS = {"ok": "answered", "skipped": "skipped", "timeout": "timed out", "failed": "failed",
              "running": "still running", "cancelled": "cancelled", "stopped": "stopped"}


def chip(state: str, text: str | None = None, title: str | None = None) -> Html:
    """A status as a coloured chip that also says it in words."""
    return html('<span class="chip chip-$state"$tip>$text</span>', state=token(state), tip=attrs(title=title or None),
                text=text or CHIP_WORDS.get(state, state))


def hidden(name: str, value) -> Html:
    return html('<input type="hidden" name="$name" value="$value">', name=name, value=value)


def csrf(frame: Frame) -> Html:
    return hidden("csrf", frame.csrf)


def post_button(frame: Frame, action: str, label: str, fields: dict | None = None, cls: str = "secondary",
                back: str | None = None) -> Html:
    extra = [hidden(k, v) for k, v in (fields or {}).items()] + ([hidden("back", back)] if back else [])
    return html('<form method="post" action="$action" class="inline">$csrf$extra'
                '<button type="submit" class="$cls">$label</button></form>',
                action=action, csrf=csrf(frame), extra=extra, cls=cls, label=label)


def confirm(frame: Frame, action: str, label: str, question: str, inner: Html | str = "",
            fields: dict | None = None) -> Html:
    """A destructive action behind a second step that works without script: open, read, confirm."""
    return html('<details class="confirm"><summary class="button danger-outline">$label…</summary>'
                '<form method="post" action="$action" class="confirm-body">$csrf$extra'
                '<p>$question</p>$inner<button type="submit" class="danger">$label</button></form></details>',
                label=label, action=action, csrf=csrf(frame), extra=[hidden(k, v) for k, v in (fields or {}).items()],
                question=question, inner=inner)


def record_cell(rec: dict | None) -> Html:
    """A model's useful rate with its interval and how many answers were judged, or a dash."""
    if not rec or not rec.get("judged"):
        return muted("not judged yet")
    lo, hi = rec.get("useful_interval") or (None, None)
    span = html(' <span class="muted">($lo–$hi)</span>', lo=pct(lo), hi=pct(hi)) if lo is not None else ""
    flagged = [" ", chip("wrong", "confidently wrong")] if rec.get("confidently_wrong") else ""
    return html('$rate$span <span class="muted">of $judged</span>$flag', rate=pct(rec["useful_rate"]), span=span,
                judged=rec["judged"], flag=flagged)


def tool_cell(rec: dict | None) -> Html:
    """A model's route turns whose tool calls failed, of those checked, with the kinds of fault; a dash for none."""
    if not rec or not rec.get("tool_turns"):
        return muted("no tool calls")
    kinds = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in (rec.get("tool_error_kinds") or {}).items() if n)
    return html('$errors <span class="muted">of $turns$kinds</span>', errors=rec["tool_errors"],
                turns=rec["tool_turns"], kinds=f" ({kinds})" if kinds else "")


def external(href: str, text) -> Html:
    """A link to another site, opened apart and told nothing of this one."""
    return html('<a href="$href" target="_blank" rel="noopener noreferrer">$text</a>', href=href, text=text)


def muted(text) -> Html:
    """Text in grey: what is missing or beside the point."""
    return html('<span class="muted">$text</span>', text=text)


PURPOSES = ("review", "claims")


def suite_cell(scores: dict | None) -> Html:
    """The suite's score per purpose with how many items it rests on (never the user's verdicts), or a dash."""
    parts = []
    for purpose in PURPOSES:
        s = (scores or {}).get(purpose)
        if s and s.get("score") is not None:
            items = s["bugs"] + s["controls"] if purpose == "review" else s["claims"]
            parts.append(html('$purpose $score <span class="muted">of $items</span>', purpose=purpose,
                              score=pct(s["score"]), items=items))
    return join(parts, " · ") or muted("not run")


def speed_cell(perf: dict | None) -> Html:
    """The latest speed test: time to first token, output tokens per second, the day measured."""
    if not perf:
        return muted("not measured")
    parts = [f'{secs(perf["ttft"])} to first token'] if perf.get("ttft") is not None else []
    tps = perf.get("tokens_per_second")
    if tps:
        parts.append(f"{tps:,.0f} tokens/s" if tps >= 100 else f"{tps:.1f} tokens/s")
    said = " · ".join(parts) or "no figure: the test failed"
    return html('$said <span class="muted">($day)</span>', said=said, day=when(perf["measured"])[:10])


def probe_cell(probe: dict | None) -> Html:
    """The latest probe: its outcome, the seconds it took, and when (the model's page lists every probe)."""
    if not probe:
        return muted("never probed")
    took = f" {secs(probe['seconds'])}" if probe.get("seconds") is not None else ""
    return html('$chip$took <span class="muted">($at)</span>', chip=chip(probe["status"]), took=took,
                at=when(probe.get("created")))


def lines(values: list | None) -> str:
    return "\n".join(values or [])


VERDICT = """<form method="post" action="/calls/verdict" class="verdict" data-fetch>$csrf$call$back\
<fieldset><legend>Your verdict</legend>$yes$no</fieldset>\
<label for="real-$id">Claims that were real <span class="muted">(one a line)</span></label>\
<textarea id="real-$id" name="real" rows="2">$real</textarea>\
<label for="false-$id">Claims that were false <span class="muted">(one a line)</span></label>\
<textarea id="false-$id" name="false" rows="2">$false</textarea>\
<label for="note-$id">Note</label>\
<input id="note-$id" name="note" type="text" maxlength="$most" value="$note">\
<div class="form-end"><button type="submit">$button</button>\
<span class="status-text" data-status role="status"></span></div></form>"""


def verdict_form(frame: Frame, call: str, verdict: dict | None = None, back: str = "/calls") -> Html:
    """Useful or not, the claims that were real and false, a note; saved in place by script, or posted."""
    v = verdict or {}
    useful = v.get("useful")

    def radio(value: str, label: str, on: bool) -> Html:
        return html('<label class="choice"><input type="radio" name="useful" value="$value"$on required> $label'
                    '</label>', value=value, on=flag("checked", on), label=label)
    return html(VERDICT, csrf=csrf(frame), call=hidden("call", call), back=hidden("back", back),
                yes=radio("yes", "Useful", useful is True), no=radio("no", "Not useful", useful is False), id=call,
                real=lines(v.get("real")), false=lines(v.get("false")), most=NOTE_MOST, note=v.get("note") or "",
                button="Change verdict" if verdict else "Save verdict")


def seat_column(frame: Frame, seat: dict, back: str, quotes: tuple | list = (), proposal: Html = Html(""),
                best: Html = Html("")) -> Html:
    """One seat's answer: model, seat kind, status and seconds, the answer (Markdown made safe, its words the points
    quote marked), its "best" button, its verdict form and what its judged points (or the best pick) propose."""
    head = html('<header class="seat-head"><h3>$model</h3><p class="seat-meta">seat $seat · $kind · $chip · '
                "$secs$late</p></header>", model=seat["model"], seat=seat.get("seat") or "", kind=seat["kind"],
                chip=outcome_chip(seat), secs=secs(seat.get("seconds")), late=late_note(seat))
    if seat["status"] == "ok":
        answer = answer_html(seat.get("answer") or "", quotes)
        body = html('<div class="answer" data-fold>$answer</div>', answer=answer)
    else:
        body = html('<p class="seat-error">$error</p>', error=seat.get("error") or seat["status"])
    form = verdict_form(frame, seat["call"], seat.get("verdict"), back) if seat["status"] == "ok" else ""
    return html('<article class="seat" data-call="$call">$head$body$best$proposal$form</article>', call=seat["call"],
                head=head, body=body, best=best, proposal=proposal, form=form)


def outcome_chip(seat: dict) -> Html:
    """The seat's status chip; an answer cut at its output cap says so rather than a plain "answered"."""
    if seat["status"] == "ok" and seat.get("finish_reason") == "length":
        cap = seat.get("max_tokens")
        return chip("cut", f"cut at {cap:,} tokens" if cap else "cut at its output limit",
                    "The answer reached the output cap it was asked for: raise max_tokens for the whole answer.")
    return chip(seat["status"])


def late_note(seat: dict) -> Html:
    return trusted(' · <span class="muted">answered after the panel replied</span>') if seat.get("late") else Html("")
