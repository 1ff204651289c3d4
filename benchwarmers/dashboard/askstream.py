"""The Ask page's stream: POST /ask/stream runs a panel and sends one JSON line per seat as it finishes; a column's
Stop and Retry (POST /ask/stop, /ask/retry: core/again.py) stop its seat or ask it again, read as it writes.

The one place the dashboard uses the panel (bench.panel: start, finished, merge_events) rather than the admin API: a
page cannot stream a column per seat through a whole-answer API. Lines: {"panel": ...} first, then {"seat": ...}
per finished seat (its answer as Markdown nodes, see markdown.py; a seat still running after the explore grace says
so, and the page then reads its late answer from the ask's page), {"merge": {"delta"}} and {"merged": ...} for
:merged, {"points": points_info} when the panel shows points (pending: the referee reads the answers after them;
the page follows the ask's page until they are in), and {"done": ...} or {"error": ...} last; empty lines keep the
connection alive while seats think. While a seat writes, {"live": {"call", "text", "pieces"}} lines carry the text it
wrote since the last one (plain text, a read every few tens of milliseconds; its Markdown comes once, in its
{"seat"} line) and how many pieces (about tokens) it has written.
"""
from __future__ import annotations

import json
from typing import Protocol

from .. import formats
from ..api.estimate import EstimateParts, estimate_view
from ..api.panelseats import PanelSeatParts, held_run, sent_again, stopped, unseen_by
from ..api.parts import EffectiveSettings
from ..canonical import KeepAlive, TextDelta
from ..core.live import Heard
from ..core.panel import Panel
from ..errors import BadRequest, BenchError
from ..formats.base import RequestInfo
from ..formats.benchfields import panel_options
from ..server.messages import Request, Response
from . import markdown, web
from .pages.ask import chat_body


class AskStreamParts(EffectiveSettings, Protocol):
    """The panel itself, and the keep-alive setting."""
    panel: Panel


def ask_estimate(req: Request, bench: EstimateParts) -> Response:
    """POST /ask/estimate: the Ask form as it stands, what it would cost at most (POST /bench/estimate's answer);
    nothing is sent. The page's script asks it as the form changes."""
    form = web.read_form(req)
    web.check_csrf(req, form)
    return Response.json(estimate_view(bench, chat_body(form), req.headers))


def line(obj: dict) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def seat_head(seat, hidden=None) -> dict:
    """A seat as its column starts (the ask's first line, a retry's): a blind panel's (`hidden`) names no model."""
    return {"seat": seat.seat, "kind": seat.kind, "call": seat.call,
            "model": f"Seat {seat.seat}" if hidden else seat.model}


def seat_line(seat, hidden=None) -> dict:
    """A finished seat's line; a blind panel's (`hidden`) names no model until it is judged."""
    answer = hidden.text(seat.answer) if hidden else seat.answer
    return {"seat": {"seat": seat.seat, "kind": seat.kind, "model": f"Seat {seat.seat}" if hidden else seat.model,
                     "status": seat.status, "outcome": seat.outcome(), "finish_reason": seat.finish_reason,
                     "seconds": round(seat.seconds, 2), "call": seat.call,
                     "error": hidden.text(seat.error) if hidden else seat.error,
                     "tokens": seat.usage.output_tokens if seat.answer else 0, "answer": answer,
                     "nodes": markdown.parse(answer) if answer else []}}


def item_line(item, hidden=None) -> bytes:
    """One item of panel.finished as the page reads it: a keep-alive, a seat's new text, a seat done (a blind
    panel's, `hidden`, with the names it knows masked)."""
    if isinstance(item, KeepAlive):
        return b"\n"
    if isinstance(item, Heard):          # plain text as it comes; Markdown once, when the seat is done
        text = hidden.text(item.text) or item.text if hidden else item.text
        return line({"live": {"call": item.call, "text": text, "pieces": item.pieces}})
    return line(seat_line(item, hidden))


def ask_stream(req: Request, bench: AskStreamParts) -> Response:
    form = web.read_form(req)
    web.check_csrf(req, form)
    body = chat_body(form)
    ask = formats.get("openai_chat").parse(body, RequestInfo(req.path, req.query, req.headers)).ask
    panel_options(body, ask)   # blind, and a follow-up: each seat's thread rebuilt from the record
    panel = bench.panel
    run = panel.start(ask, live=True)   # refusals (empty collection, unknown name) answer before any line
    keepalive = bench.settings()["keepalive_seconds"]
    merged = ask.aim.mode == "merged"

    def lines():
        yield line({"panel": run.id, "collection": run.reply().collection, "mode": ask.aim.mode,
                    "blind": bool(run.hidden), "seats": [seat_head(s, run.hidden) for s in run.seats]})
        try:
            for item in panel.finished(run, keepalive, gone=req.gone):   # a closed tab hangs up its seats
                yield item_line(item, run.hidden)
        finally:
            panel.referee.begin(run)    # the referee reads the answers in the background
        answered = sum(s.status == "ok" for s in run.seats)
        if merged:
            yield from merge_lines(panel, run)
        panel.referee.told(run)         # in already, or pending: nothing waits for it here
        panel.settle(run)               # the call ids it showed are kept before it says done
        if run.unkept:                  # or not: the page then says so and offers no verdict on them
            yield line({"done": {"answered": answered, "seats": len(run.seats),
                                 "record": {"kept": False, "why": run.unkept}}})
            return
        if run.points is not None:      # the page reads them, with their controls, from the ask's page
            yield line({"points": run.points["points_info"]})
        yield line({"done": {"answered": answered, "seats": len(run.seats)}})
    return Response.streaming(lines(), "application/x-ndjson", {"x-bench-panel": run.id})


def merge_lines(panel, run):
    text = []
    try:
        for ev in panel.merge_events(run):
            if isinstance(ev, TextDelta):
                text.append(ev.text)
                yield line({"merge": {"delta": ev.text}})
    except BenchError as err:
        yield line({"error": str(err)})
        return
    info = run.merge_info or {}
    yield line({"merged": {"model": info.get("model"), "status": info.get("status"), "call": info.get("call"),
                           "error": info.get("error"), "nodes": markdown.parse("".join(text))}})


# ---- one column's controls: stop, retry (core/again.py) -------------------------------------------

def seat_form(req: Request, bench: PanelSeatParts) -> tuple:
    """(the panel's run, the seat's number) a column's control names, behind the CSRF check."""
    form = web.read_form(req)
    web.check_csrf(req, form)
    number = form.get("seat").strip()
    if not number.isdigit():
        raise BadRequest("Name the seat by its number (seat=2).")
    return held_run(req, bench, form.get("panel").strip()), int(number)


def ask_stop(req: Request, bench: PanelSeatParts) -> Response:
    """POST /ask/stop: the column's seat hung up; its line in the ask's stream then says it stopped."""
    return stopped(*seat_form(req, bench))


def ask_retry(req: Request, bench: PanelSeatParts) -> Response:
    """POST /ask/retry: the column's seat asked again, read as it writes: {"retry"} (the new call, and the one it
    replaces), then the lines of the ask's stream for that one seat, and {"done"}."""
    run, number = seat_form(req, bench)
    seats = sent_again(bench, run, number, live=True)
    panel, keepalive = bench.panel, bench.settings()["keepalive_seconds"]

    hidden = unseen_by(bench, run)   # a blind panel's names, until it is judged

    def lines():
        s = seats.seats[0]
        yield line({"retry": {"panel": run.id, "retry_of": seats.retried, "seat": seat_head(s, hidden)}})
        for item in panel.finished(seats, keepalive, gone=req.gone):
            yield item_line(item, hidden)
        panel.settle(seats)
        yield line({"done": {"answered": int(s.status == "ok"), "seats": 1,
                             **({"record": {"kept": False, "why": seats.unkept}} if seats.unkept else {})}})
    return Response.streaming(lines(), "application/x-ndjson", {"x-bench-panel": run.id})
