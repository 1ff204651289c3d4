"""Models: the roster with each model's status, last probe, your verdicts' record, the suite's scores and its speed,
filter and search, and who to trust, as a chart."""
from __future__ import annotations

from typing import Protocol

from ...api.models import ModelListParts, models_view
from ...api.ratings import rankings_view
from ...core.rankings import blind_useful
from ...core.ratings import Ratings
from ...server.messages import Request
from .. import charts
from ..contract import stays
from ..markup import Html, card, html, link, options, table, trusted
from ..ratingsview import by_model, rating_cell, ratings_tables
from ..render import pct, secs
from ..web import Frame
from ..widgets import chip, muted, probe_cell, record_cell, speed_cell, suite_cell, tool_cell


class ModelsPageParts(ModelListParts, Protocol):
    """The roster with its record, and the ratings from best picks."""
    ratings: Ratings


STATUSES = [("", "any status"), ("active", "active"), ("resting", "resting"), ("retired", "retired")]


def data(req: Request, bench: ModelsPageParts) -> dict:
    find = (req.query.get("find") or "").strip()
    status = req.query.get("status") or ""
    rows = [m for m in models_view(bench, find)["models"] if not status or m["status"] == status]
    blind = req.query.get("blind") == "1"
    ratings = rankings_view(bench, None, blind)
    return {"models": rows, "find": find or None, "status": status or None, "ratings": ratings,
            "blind": blind_useful(bench.db, None) if blind else None,   # useful rates from blind verdicts alone
            "trust": [{"model": m["alias"], "judged": m["record"]["judged"], "useful_rate": m["record"]["useful_rate"],
                       "useful_interval": m["record"]["useful_interval"],
                       "confidently_wrong": m["record"]["confidently_wrong"]}
                      for m in rows if m["record"] and m["record"]["judged"]]}


SEARCH = """<div class="page-actions"><a class="button" href="/onboard">Onboard models</a></div>\
<form method="get" action="/models" class="search" role="search">\
<label for="find">Find</label><input id="find" name="find" type="search" value="$find" \
placeholder="alias, served name or endpoint">\
<label for="status">Status</label><select id="status" name="status">$status</select>\
<button type="submit" class="secondary">Filter</button></form>"""


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    head = html(SEARCH, find=d["find"] or "", status=options(STATUSES, d["status"] or ""))
    if not d["models"]:
        empty = ("No model matches." if d["find"] or d["status"] else
                 trusted('No models on the bench yet. <a href="/onboard">Onboard models</a> from your endpoints.'))
        return "Models", html('$head<p class="empty">$empty</p>', head=head, empty=empty)
    rated = by_model(d["ratings"])
    rows = [[link(f"/models/{m['alias']}", m["alias"]), html('<span class="served">$s</span>', s=m["served"]),
             m["endpoint"], status_cell(m), probe_cell(m.get("last_probe")),
             m["record"]["asks"] if m["record"] else "0",
             record_cell(m["record"]), *blind_cells(d, m["alias"]), rating_cell(rated.get(m["alias"])),
             m["record"]["false_claims"] if m["record"] else "0", tool_cell(m["record"]),
             secs(m["record"]["median_seconds"]) if m["record"] else "", suite_cell(m.get("suite")),
             speed_cell(m.get("perf"))] for m in d["models"]]
    blind = ["Useful (blind verdicts)"] if d.get("blind") is not None else []
    roster = table(["Alias", "Served name", "Endpoint", "Status", "Last probe", "Asks", "Useful (your verdicts)",
                    *blind, "Rating (best picks)" + (", blind" if blind else ""), "False claims", "Tool errors",
                    "Median", "Suite scores", "Speed (weekly test)"], rows, cls="roster")
    return "Models", html("$head$roster$trust$ratings", head=head, roster=card("", roster),
                          trust=card("Who to trust", trust_chart(d["trust"])),
                          ratings=card("Ratings from best picks", ratings_tables(d["ratings"], "/models"),
                                       anchor="ratings"))


def blind_cells(d: dict, alias: str) -> list:
    """With ?blind=1, the model's useful rate from the verdicts given before its panel's models were shown."""
    if d.get("blind") is None:
        return []
    found = d["blind"].get(alias)
    return [record_cell(found) if found else muted("no blind verdict yet")]


def status_cell(m: dict) -> Html:
    """The status chip, then what its one word leaves out as text (never only a tooltip): until when, or why."""
    said = status_words(m)
    return html("$chip$said$extra", chip=chip(m["status"], m["status"]),
                said=html(' <span class="reason">$s</span>', s=said) if said else "",
                extra=[" ", chip("adhoc", "ad hoc")] if m.get("ad_hoc") else "")


def status_words(m: dict) -> str:
    """'until T' for a resting model, the reason for a retired or held one; nothing for an active one."""
    if m["status"] == "active":
        return ""
    if m["status"] == "retired":
        return m["reason"] or ""
    text = m["status_text"]
    return text[len(m["status"]):].lstrip(": ") if text.startswith(m["status"]) else text


def trust_chart(points: list[dict]) -> Html:
    if not points:
        return trusted('<p class="empty">No verdicts yet: judge answers on <a href="/calls?verdict=missing">Calls</a> '
                       "and each model shows here by its useful rate and how much evidence there is.</p>")
    svg = charts.scatter("Useful rate against answers judged", [
        {"label": p["model"], "judged": p["judged"], "rate": p["useful_rate"], "interval": p["useful_interval"],
         "flagged": p["confidently_wrong"]} for p in points])
    rows = [[p["model"], pct(p["useful_rate"]), f'{pct(p["useful_interval"][0])}–{pct(p["useful_interval"][1])}',
             p["judged"], "yes" if p["confidently_wrong"] else ""] for p in points]
    numbers = table(["Model", "Useful", "95% interval", "Judged", "Confidently wrong"], rows, cls="numbers")
    return html('<figure class="chart-box wide">$svg<figcaption>Higher is better; a short whisker means much '
                "evidence. Squares are confidently wrong.$numbers</figcaption></figure>", svg=svg, numbers=numbers)


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
