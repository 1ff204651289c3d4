"""Dashboard pieces shared by pages: status chips, small POST forms, confirm steps, the record, suite, probe and
speed cells, verdict forms, seat columns."""
from __future__ import annotations

from ..names import NOTE_MOST
from . import markdown
from .render import e, pct, secs, token, when

CHIP_WORDS = {"ok": "answered", "skipped": "skipped", "timeout": "timed out", "failed": "failed",
              "running": "still running", "cancelled": "cancelled"}


def chip(state: str, text: str | None = None, title: str | None = None) -> str:
    """A status as a coloured chip that also says it in words."""
    tip = f' title="{e(title)}"' if title else ""
    return f'<span class="chip chip-{token(state)}"{tip}>{e(text or CHIP_WORDS.get(state, state))}</span>'


def hidden(name: str, value) -> str:
    return f'<input type="hidden" name="{e(name)}" value="{e(value)}">'


def csrf(frame) -> str:
    return hidden("csrf", frame.csrf)


def post_button(frame, action: str, label: str, fields: dict | None = None, cls: str = "secondary",
                back: str | None = None) -> str:
    extra = "".join(hidden(k, v) for k, v in (fields or {}).items())
    back_field = hidden("back", back) if back else ""
    return (f'<form method="post" action="{e(action)}" class="inline">{csrf(frame)}{extra}{back_field}'
            f'<button type="submit" class="{e(cls)}">{e(label)}</button></form>')


def confirm(frame, action: str, label: str, question: str, inner: str = "", fields: dict | None = None) -> str:
    """A destructive action behind a second step that works without script: open, read, confirm."""
    extra = "".join(hidden(k, v) for k, v in (fields or {}).items())
    return (f'<details class="confirm"><summary class="button danger-outline">{e(label)}…</summary>'
            f'<form method="post" action="{e(action)}" class="confirm-body">{csrf(frame)}{extra}'
            f'<p>{e(question)}</p>{inner}<button type="submit" class="danger">{e(label)}</button></form></details>')


def record_cell(rec: dict | None) -> str:
    """A model's useful rate with its interval and how many answers were judged, or a dash."""
    if not rec or not rec.get("judged"):
        return '<span class="muted">not judged yet</span>'
    lo, hi = rec.get("useful_interval") or (None, None)
    span = f' <span class="muted">({pct(lo)}–{pct(hi)})</span>' if lo is not None else ""
    flag = " " + chip("wrong", "confidently wrong") if rec.get("confidently_wrong") else ""
    return f'{pct(rec["useful_rate"])}{span} <span class="muted">of {rec["judged"]}</span>{flag}'


PURPOSES = ("review", "claims")


def suite_cell(scores: dict | None) -> str:
    """The suite's score per purpose with how many items it rests on (never the user's verdicts), or a dash."""
    parts = []
    for purpose in PURPOSES:
        s = (scores or {}).get(purpose)
        if s and s.get("score") is not None:
            items = s["bugs"] + s["controls"] if purpose == "review" else s["claims"]
            parts.append(f'{purpose} {pct(s["score"])} <span class="muted">of {items}</span>')
    return " · ".join(parts) or '<span class="muted">not run</span>'


def speed_cell(perf: dict | None) -> str:
    """The latest speed test: time to first token, output tokens per second, the day measured."""
    if not perf:
        return '<span class="muted">not measured</span>'
    parts = [f'{e(secs(perf["ttft"]))} to first token'] if perf.get("ttft") is not None else []
    tps = perf.get("tokens_per_second")
    if tps:
        parts.append(f"{tps:,.0f} tokens/s" if tps >= 100 else f"{tps:.1f} tokens/s")
    said = " · ".join(parts) or "no figure: the test failed"
    return f'{said} <span class="muted">({e(when(perf["measured"])[:10])})</span>'


def probe_cell(probe: dict | None) -> str:
    """The latest probe: its outcome, the seconds it took, and when (the model's page lists every probe)."""
    if not probe:
        return '<span class="muted">never probed</span>'
    took = f" {e(secs(probe['seconds']))}" if probe.get("seconds") is not None else ""
    return f'{chip(probe["status"])}{took} <span class="muted">({e(when(probe.get("created")))})</span>'


def lines(values: list) -> str:
    return "\n".join(values or [])


def verdict_form(frame, call: str, verdict: dict | None = None, back: str = "/calls") -> str:
    """Useful or not, the claims that were real and false, a note; saved in place by script, or posted."""
    v = verdict or {}
    useful = v.get("useful")
    ident = e(call)
    checked = {True: ' checked', False: ''}

    def radio(value: str, label: str, on: bool) -> str:
        return (f'<label class="choice"><input type="radio" name="useful" value="{value}"'
                f'{checked[on]} required> {label}</label>')
    return (f'<form method="post" action="/calls/verdict" class="verdict" data-fetch>'
            f'{csrf(frame)}{hidden("call", call)}{hidden("back", back)}'
            f'<fieldset><legend>Your verdict</legend>'
            f'{radio("yes", "Useful", useful is True)}{radio("no", "Not useful", useful is False)}</fieldset>'
            f'<label for="real-{ident}">Claims that were real <span class="muted">(one a line)</span></label>'
            f'<textarea id="real-{ident}" name="real" rows="2">{e(lines(v.get("real")))}</textarea>'
            f'<label for="false-{ident}">Claims that were false <span class="muted">(one a line)</span></label>'
            f'<textarea id="false-{ident}" name="false" rows="2">{e(lines(v.get("false")))}</textarea>'
            f'<label for="note-{ident}">Note</label>'
            f'<input id="note-{ident}" name="note" type="text" maxlength="{NOTE_MOST}" '
            f'value="{e(v.get("note") or "")}">'
            f'<div class="form-end"><button type="submit">{"Change verdict" if verdict else "Save verdict"}</button>'
            f'<span class="status-text" data-status role="status"></span></div></form>')


def seat_column(frame, seat: dict, back: str) -> str:
    """One seat's answer: model, seat kind, status and seconds, the answer (Markdown made safe), its verdict."""
    head = (f'<header class="seat-head"><h3>{e(seat["model"])}</h3>'
            f'<p class="seat-meta">seat {e(seat.get("seat") or "")} · {e(seat["kind"])} · '
            f'{outcome_chip(seat)} · {e(secs(seat.get("seconds")))}{late_note(seat)}</p></header>')
    if seat["status"] == "ok":
        body = f'<div class="answer" data-fold>{markdown.render(seat.get("answer") or "")}</div>'
    else:
        body = f'<p class="seat-error">{e(seat.get("error") or seat["status"])}</p>'
    form = verdict_form(frame, seat["call"], seat.get("verdict"), back) if seat["status"] == "ok" else ""
    return f'<article class="seat" data-call="{e(seat["call"])}">{head}{body}{form}</article>'


def outcome_chip(seat: dict) -> str:
    """The seat's status chip; an answer cut at its output cap says so rather than a plain "answered"."""
    if seat["status"] == "ok" and seat.get("finish_reason") == "length":
        cap = seat.get("max_tokens")
        return chip("cut", f"cut at {cap:,} tokens" if cap else "cut at its output limit",
                    "The answer reached the output cap it was asked for: raise max_tokens for the whole answer.")
    return chip(seat["status"])


def late_note(seat: dict) -> str:
    return ' · <span class="muted">answered after the panel replied</span>' if seat.get("late") else ""
