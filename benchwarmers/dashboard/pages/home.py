"""Home: what to do next, connections near or at a rate limit, models held until their new price is accepted, the
answers waiting for a verdict, calls per day by status, the last asks, and where the service runs."""
from __future__ import annotations

from typing import Protocol

from ...api.collection import collections_view
from ...api.endpoints import endpoints_view
from ...api.history import daily_view, history_page
from ...api.limits import LimitsParts, limits_view
from ...api.models import models_view
from ...api.status import StatusParts, summary
from ...core.rankings import Rankings
from ...errors import ConfigError
from ...roster.limits.quota import Quota
from ...roster.limits.resting import Resting
from ...server.messages import Request
from ...store.pending import pending
from ...suite.service import SuiteService
from .. import charts
from ..apicall import post
from ..markup import Html, card, facts, html, link, table, trusted
from ..render import when
from ..web import Done, Form, Frame
from ..widgets import chip, confirm
from . import quotas


class HomePageParts(StatusParts, Protocol):
    """A glance at everything: status, endpoints, models, collections, recent asks, limits near their end."""
    quota: Quota
    rankings: Rankings
    resting: Resting
    suite: SuiteService


SERIES = ("ok", "failed", "timeout", "skipped")


def data(req: Request, bench: HomePageParts) -> dict:
    status = summary(bench)
    endpoints = listed(lambda: endpoints_view(bench)["endpoints"])
    models = listed(lambda: models_view(bench)["models"])
    collections = listed(lambda: collections_view(bench)["collections"])
    recent = history_page(bench, {"per_page": "5"})
    judged = sum(m.judged for m in bench.rankings.models().values())   # the record's, kept
    waiting = pending(bench.db, limit=1)
    steps = [
        {"done": bool(endpoints), "text": "Add an endpoint", "href": "/endpoints"},
        {"done": bool(models), "text": "Onboard models", "href": "/onboard"},
        {"done": bool(collections), "text": "Make a collection", "href": "/collections/_new"},
        {"done": recent["total"] > 0, "text": "Ask it", "href": "/ask"},
        {"done": judged > 0, "text": "Judge the answers", "href": "/calls?verdict=missing"},
    ]
    return {"status": status, "counts": {"endpoints": len(endpoints), "models": len(models),
                                         "active_models": sum(m["status"] == "active" for m in models),
                                         "collections": len(collections), "asks": recent["total"],
                                         "asks_capped": recent["total_capped"], "answers_judged": judged,
                                         "answers_unjudged": waiting["total"],
                                         "answers_unjudged_capped": waiting.get("total_capped", False)},
            "next_steps": steps, "daily": daily_view(bench, {"days": "14"})["days"],
            "recent": recent["items"], "limits": near_limits(bench)}


def near_limits(bench: LimitsParts) -> list[dict]:
    """The connections near or at a rate limit, in words (the Quotas page has the rest)."""
    return [{"connection": c["name"], "state": c["state"], "text": quotas.warning_text(c)}
            for c in listed(lambda: limits_view(bench)["connections"]) if c["state"] != "ok"]


def listed(read) -> list:
    """One list the bench gives, or none while a config file is broken (the status's config_problems, shown on the
    page, names the file and line): a bad hand edit never takes Home down."""
    try:
        return read()
    except ConfigError:
        return []


def redirect(d: dict) -> str | None:
    """The first run opens on Endpoints: nothing can happen before one is added (a broken config file is not a
    first run: Home stays, to say which file and line)."""
    return "/endpoints" if not d["counts"]["endpoints"] and not d["status"]["config_problems"] else None


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    s, c = d["status"], d["counts"]
    notes = [html('<div class="flash flash-error" role="alert">Config problem: $p</div>', p=p)
             for p in s["config_problems"]]
    notes += [html('<div class="flash flash-$kind" role="status">$text $link.</div>', kind="error" if x["state"] == "at"
                   else "info", text=x["text"], link=link("/quotas", "See Quotas")) for x in d["limits"]]
    if c["answers_unjudged"]:
        waiting = number(c["answers_unjudged"], c["answers_unjudged_capped"])
        notes.append(html('<div class="flash flash-info" role="status">$n $wait for a verdict: verdicts decide who '
                          "gets seated. $link.</div>", n=waiting,
                          wait="answer waits" if waiting == "1" else "answers wait",
                          link=link("/calls?verdict=missing", "Judge them on Calls")))
    tiles = [("/endpoints", c["endpoints"], "endpoints"), ("/models", c["active_models"], "active models"),
             ("/collections", c["collections"], "collections"), ("/calls", number(c["asks"], c["asks_capped"]), "asks"),
             ("/calls?verdict=given", number(c["answers_judged"]), "answers judged")]
    parts = [*notes, held_card(s.get("held") or [], frame), html('<div class="tiles">$tiles</div>', tiles=[
        html('<a class="tile" href="$href"><span class="number">$n</span><span class="what">$what</span></a>',
             href=href, n=n, what=what) for href, n, what in tiles])]
    if not all(step["done"] for step in d["next_steps"]):
        parts.append(card("Next steps", steps_list(d["next_steps"]), "steps"))
    parts.append(html('<div class="grid-2">$daily$recent</div>', daily=card("Calls per day", daily_chart(d["daily"])),
                      recent=card("Last asks", recent(d["recent"]))))
    parts.append(card("This service", service_facts(s)))
    return "Home", html("$parts", parts=parts)


def service_facts(s: dict) -> Html:
    code = lambda text: html("<code>$t</code>", t=text)   # noqa: E731
    return facts([
        ("Service", html("$chip $role", chip=chip("active", "running"), role=s["role"])),
        ("Gateway base URL", code(s["url"] + "/v1")), ("Dashboard", code(s["url"])), ("Listening on", s["bind"]),
        ("Data folder", code(s["data_folder"])),
        ("Admin token", "set" if s["admin_token_set"] else "not set (this machine only)"),
        ("Gateway keys", "enforced" if s["gateway_keys"]["enforced"] else "not enforced (Settings says how)")],
        "cols-2")


def number(n: int, capped: bool = False) -> str:
    """A count as shown: '10,000+' when counting stopped there."""
    return f"{n:,}{'+' if capped else ''}"


def held_card(held: list[dict], frame: Frame) -> Html:
    """Free models that turned paid: not seated or probed until the new price is accepted."""
    if not held:
        return Html("")
    rows = [[link("/models/" + h["model"], h["model"]), h["reason"], when(h.get("since")),
             confirm(frame, f'/held/{h["model"]}/confirm', "Accept the new price",
                     f'Accept the new price of {h["model"]}? It takes seats and probes again, at that price.')]
            for h in held]
    return card("Held until you accept the new price", html(
        '<p class="muted">These free models turned paid, so they take no seat and get no probe until you accept (or '
        "<code>bench model confirm NAME</code>).</p>$table", table=table(["Model", "Why", "Since", ""], rows)),
        "held", anchor="held")


def accept_price(req: Request, bench: object, form: Form) -> Done:
    alias = req.params["alias"]
    m = post(req, f"/bench/models/{alias}/confirm")["model"]
    return Done(f"Accepted the new price of {alias}: it is {m['status_text']} again.", "/", {"model": m})


ACTIONS = [("/held/{alias}/confirm", accept_price, "/")]


def steps_list(steps: list[dict]) -> Html:
    return html('<ol class="steps">$items</ol>', items=[
        html('<li class="$state">$chip $link</li>', state="done" if s["done"] else "todo",
             chip=chip("done", "done") if s["done"] else chip("queued", "to do"), link=link(s["href"], s["text"]))
        for s in steps])


def daily_chart(days: list[dict]) -> Html:
    labels = [x["day"] for x in days]
    svg = charts.stacked_bars("Calls per day by status", labels,
                              [(name, [x["by_status"].get(name, 0) for x in days]) for name in SERIES])
    rows = [[x["day"]] + [x["by_status"].get(n, 0) for n in SERIES] for x in days if x["calls"]]
    numbers = table(["Day", *SERIES], rows, "No calls in the last 14 days.", "numbers")
    return html('<figure class="chart-box">$svg<figcaption>$numbers</figcaption></figure>', svg=svg, numbers=numbers)


def recent(items: list[dict]) -> Html:
    if not items:
        return trusted('<p class="empty">Nothing asked yet. <a href="/ask">Ask a collection</a>.</p>')
    rows = [html('<li><a href="/calls/$id">$prompt</a><span class="muted"> · $collection · $when · $answered '
                 "answered, $judged judged</span></li>", id=i["id"], prompt=i["prompt"] or "(no text)",
                 collection=i["collection"], when=when(i["created"]), answered=i["answered"], judged=i["judged"])
            for i in items]
    return html('<ul class="plain-list">$rows</ul><p><a href="/calls">Every ask →</a></p>', rows=rows)


SCRIPTS: tuple = ()
