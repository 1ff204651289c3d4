"""One model: its status and facts, your verdicts beside the suite's scores, why it was retired, its speed, latency
and useful rate over time, the catalog's facts with their sources and your own, its recent calls and probes."""
from __future__ import annotations

from typing import Protocol
from urllib.parse import quote

from ...api.calls import VerdictParts, with_verdicts
from ...api.history import daily_view
from ...api.models import ModelListParts, model_view
from ...api.parts import Records
from ...names import REASON_MOST
from ...server.messages import Request
from ...store.calls import Calls
from .. import charts
from ..apicall import call, post
from ..contract import stays
from ..markup import Html, card, facts, html, link, table, trusted
from ..render import pct, secs, when
from ..web import Done, Form, Frame
from ..widgets import chip, confirm, muted, post_button, record_cell, speed_cell
from . import modelcards, modelfacts
from .models import status_cell


class ModelPageParts(ModelListParts, VerdictParts, Records, Protocol):
    """The model with its probes and record, its calls with their verdicts, its calls per day."""
    calls: Calls


def data(req: Request, bench: ModelPageParts) -> dict:
    alias = req.params["alias"]
    model = model_view(bench, alias)["model"]
    record = bench.rankings.summary()
    per_collection = {name: models[alias] for name, models in record["collections"].items() if alias in models}
    return {"model": model, "record": record["models"].get(alias), "record_by_collection": per_collection,
            "daily": daily_view(bench, {"days": "30", "model": alias})["days"],
            "calls": [c for page in with_verdicts(bench, bench.calls.pages(model=alias, limit=20), by_model=True)
                      for c in page]}


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    m = d["model"]
    known = [("Status", status_cell(m)), ("Served name", html("<code>$s</code>", s=m["served"])),
             ("Endpoint", m["endpoint"]), ("Added", when(m.get("added")) or muted("not recorded")),
             ("Ad hoc", "yes: the bench never calls it unprompted" if m["ad_hoc"] else "no"),
             ("Speed", speed_cell(m.get("perf")))]
    pair = lambda cls, *cards: html('<div class="$cls">$cards</div>', cls=cls, cards=list(cards))   # noqa: E731
    parts = [card("", html("$f$a", f=facts(known, "cols-2"), a=actions(m, frame)))]
    if m.get("retirement"):
        parts.append(card("Why the bench retired it", modelcards.retirement(m["retirement"]), "evidence"))
    parts += [pair("side-layout", card("Your verdicts", record_table(d)),
                   card("The suite's scores", html("$o$s", o=modelcards.suite_open(m.get("suite_open") or []),
                                                   s=modelcards.suite_scores(m["alias"], m.get("suite"),
                                                                             m["status"] == "active")))),
              card("Speed", html("$s$b", s=modelcards.speed(m.get("perf_history") or [], m.get("perf")),
                                 b=post_button(frame, f"/models/{m['alias']}/speed", "Measure speed now")),
                   anchor="speed"),
              pair("grid-2", card("Latency per day", latency_chart(d["daily"])),
                   card("Useful rate over time", useful_chart(d["daily"]))),
              pair("grid-2", card("Facts and where they come from", modelcards.catalog_facts(m["catalog"])),
                   card("Your own facts and roles", modelfacts.form(m, frame), anchor="yours")),
              card("Recent calls", calls_table(d["calls"])), card("Probes", probes_table(m.get("probes") or []))]
    return m["alias"], html("$parts", parts=parts)


def actions(m: dict, frame: Frame) -> Html:
    base = f"/models/{m['alias']}"
    buttons = [post_button(frame, base + "/probe", "Probe now")]
    if m["status"] == "active":             # a held, resting or retired model gets no run
        buttons.append(post_button(frame, "/suite/runs", "Run the suite", {"model": m["alias"]}, back=base))
    if m["status"] == "held":      # a free model that turned paid: no seat, no probe until the price is accepted
        buttons.insert(0, post_button(frame, base + "/confirm", "Accept the new price"))
    if m["status"] == "retired":
        buttons.append(post_button(frame, base + "/restore", "Restore"))
    else:
        reason = html('<label for="reason">Why</label><input id="reason" name="reason" required maxlength="$most" '
                      'placeholder="e.g. wrong on every review">', most=REASON_MOST)
        buttons.append(confirm(frame, base + "/retire", "Retire", f"Retire {m['alias']}? It takes no seat until "
                                                                  "restored.", reason))
    return html('<div class="actions">$b</div>', b=buttons)


def record_table(d: dict) -> Html:
    rows = [["all collections", d["record"]]] + [[f"in {name}", r]
                                                 for name, r in sorted(d["record_by_collection"].items())]
    body = [[label, r["asks"], r["answers"], r["failures"], record_cell(r), f'{r["real_claims"]} / {r["false_claims"]}',
             secs(r["median_seconds"])] for label, r in rows if r]
    return table(["Where", "Asks", "Answers", "Failures", "Useful", "Real / false", "Median"], body,
                 "Not asked yet.")


def figure(svg: Html, numbers: Html) -> Html:
    return html('<figure class="chart-box">$svg<figcaption>$numbers</figcaption></figure>', svg=svg, numbers=numbers)


def latency_chart(days: list[dict]) -> Html:
    if not any(x["mean_seconds"] is not None for x in days):
        return trusted('<p class="empty">No answers in the last 30 days.</p>')
    values = [x["mean_seconds"] for x in days]
    svg = charts.line("Mean seconds per answer, by day", [x["day"] for x in days], values,
                      fmt=charts.seconds_format(values))
    rows = [[x["day"], secs(x["mean_seconds"]), x["by_status"]["ok"]] for x in days if x["mean_seconds"] is not None]
    return figure(svg, table(["Day", "Mean", "Answers"], rows, cls="numbers"))


def useful_chart(days: list[dict]) -> Html:
    if not any(x["cumulative"]["judged"] for x in days):
        return trusted('<p class="empty">No verdicts yet.</p>')
    values = [x["cumulative"]["rate"] for x in days]
    svg = charts.line("Useful rate so far, with its 95% interval", [x["day"] for x in days], values,
                      band=[x["cumulative"]["interval"] for x in days], top=1.0, fmt=lambda v: f"{v * 100:.0f}%")
    rows = [[x["day"], pct(x["cumulative"]["rate"]),
             f'{pct(x["cumulative"]["interval"][0])}–{pct(x["cumulative"]["interval"][1])}',
             x["cumulative"]["judged"]] for x in days if x["judged"]]
    return figure(svg, table(["Day", "Useful so far", "95% interval", "Judged so far"], rows, cls="numbers"))


def calls_table(calls: list[dict]) -> Html:
    rows = [[link(f"/calls/{c['panel'] or c['id']}", when(c["created"])), c["collection"] or "direct", c["kind"],
             chip(c["status"]), secs(c["seconds"]), verdict_word(c.get("verdict"))] for c in calls]
    return table(["When", "Collection", "Seat", "Status", "Seconds", "Verdict"], rows, "No calls yet.")


def verdict_word(v: dict | None) -> Html:
    if v is None:
        return muted("not judged")
    return chip("ok", "useful") if v["useful"] else chip("failed", "not useful")


def probes_table(probes: list[dict]) -> Html:
    rows = [[when(p["created"]), p["kind"], chip(p["status"]), secs(p["seconds"]),
             html('<span class="reason">$t</span>', t=p["answer"] if p["status"] == "ok" else p["error"])]
            for p in probes]
    return table(["When", "Kind", "Status", "Seconds", "Answer or error"], rows, "Never probed.")


# ---- actions -----------------------------------------------------------------------------------

def probe(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    d = post(req, f"/bench/models/{alias}/probe")
    last = d.get("confirm") or d["probe"]
    said = f"answered {last['answer']!r}" if last["status"] == "ok" else f"{last['status']}: {last['error']}"
    text = f"Probed {alias}: {said}." + (f" Retired: {d['model']['reason']}" if d["retired"] else "")
    return Done(text, f"/models/{alias}", d)


def measure_speed(req: Request, bench: object, form: Form) -> Done:
    """The perf job for this model alone, in the background: POST /bench/jobs/perf/run?model=."""
    alias = req.params["alias"]
    run = call(req, "POST", "/bench/jobs/perf/run", {}, {"model": alias})["run"]
    return Done(f"Measuring the speed of {alias} (job run {run['id']}): a short and a long prompt, a minute or more "
                "for a slow model. Its figures show here when the run is done.",
                f"/models/{quote(alias, safe='')}#speed", {"run": run})


def retire(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    m = post(req, f"/bench/models/{alias}/retire", {"reason": form.get("reason")})["model"]
    return Done(f"Retired {alias}: {m['reason']}.", f"/models/{alias}", {"model": m})


def restore(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    m = post(req, f"/bench/models/{alias}/restore")["model"]
    return Done(f"Restored {alias}: it is {m['status_text']} again.", f"/models/{alias}", {"model": m})


def confirm_price(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    m = post(req, f"/bench/models/{alias}/confirm")["model"]
    return Done(f"Accepted the new price of {alias}: it is {m['status_text']} again.", f"/models/{alias}", {"model": m})


ACTIONS = [("/models/{alias}/probe", probe, "/models/{alias}"), ("/models/{alias}/retire", retire, "/models/{alias}"),
           ("/models/{alias}/restore", restore, "/models/{alias}"),
           ("/models/{alias}/confirm", confirm_price, "/models/{alias}"),
           ("/models/{alias}/speed", measure_speed, "/models/{alias}")] + modelfacts.ACTIONS


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
