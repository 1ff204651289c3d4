"""Home: what to do next, connections near or at a rate limit, models held until their new price is accepted, the
answers waiting for a verdict, calls per day by status, the last asks, and where the service runs."""
from __future__ import annotations

from ...errors import ConfigError
from .. import charts
from ..apicall import Refused, get, post
from ..render import card, e, facts, link, table, when
from ..web import Done
from ..widgets import chip, confirm
from . import quotas

SERIES = ("ok", "failed", "timeout", "skipped")


def data(req, bench) -> dict:
    status = get(req, "/bench/status")
    endpoints = listed(req, "/bench/endpoints", "endpoints")
    models = listed(req, "/bench/models", "models")
    collections = listed(req, "/bench/collections", "collections")
    recent = get(req, "/bench/history", per_page=5)
    judged = sum(m["judged"] for m in get(req, "/bench/record")["models"].values())   # the record's, kept
    waiting = get(req, "/bench/pending", limit=1)
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
            "next_steps": steps, "daily": get(req, "/bench/stats/daily", days=14)["days"],
            "recent": recent["items"], "limits": near_limits(req)}


def near_limits(req) -> list[dict]:
    """The connections near or at a rate limit, in words (the Quotas page has the rest)."""
    return [{"connection": c["name"], "state": c["state"], "text": quotas.warning_text(c)}
            for c in listed(req, "/bench/limits", "connections") if c["state"] != "ok"]


def listed(req, path: str, name: str) -> list:
    """One list the API gives, or none while a config file is broken (the status's config_problems, shown on the
    page, names the file and line): a bad hand edit never takes Home down."""
    try:
        return get(req, path)[name]
    except Refused as err:
        if err.code != ConfigError.code:
            raise
        return []


def redirect(d: dict) -> str | None:
    """The first run opens on Endpoints: nothing can happen before one is added (a broken config file is not a
    first run: Home stays, to say which file and line)."""
    return "/endpoints" if not d["counts"]["endpoints"] and not d["status"]["config_problems"] else None


def render(d: dict, frame) -> tuple[str, str]:
    s = d["status"]
    problems = "".join(f'<div class="flash flash-error" role="alert">Config problem: {e(p)}</div>'
                       for p in s["config_problems"])
    problems += "".join(f'<div class="flash flash-{"error" if x["state"] == "at" else "info"}" role="status">'
                        f'{e(x["text"])} {link("/quotas", "See Quotas")}.</div>' for x in d["limits"])
    c = d["counts"]
    if c["answers_unjudged"]:
        waiting = number(c["answers_unjudged"], c["answers_unjudged_capped"])
        problems += (f'<div class="flash flash-info" role="status">{waiting} '
                     f'{"answer waits" if waiting == "1" else "answers wait"} for a verdict: verdicts decide '
                     f'who gets seated. {link("/calls?verdict=missing", "Judge them on Calls")}.</div>')
    tiles = [("/endpoints", c["endpoints"], "endpoints"), ("/models", c["active_models"], "active models"),
             ("/collections", c["collections"], "collections"), ("/calls", number(c["asks"], c["asks_capped"]), "asks"),
             ("/calls?verdict=given", number(c["answers_judged"]), "answers judged")]
    parts = [problems, held_card(s.get("held") or [], frame), '<div class="tiles">' + "".join(
        f'<a class="tile" href="{e(href)}"><span class="number">{e(str(n))}</span><span class="what">{e(what)}</span></a>'
        for href, n, what in tiles) + "</div>"]
    if not all(step["done"] for step in d["next_steps"]):
        parts.append(card("Next steps", steps_list(d["next_steps"]), "steps"))
    parts.append('<div class="grid-2">' + card("Calls per day", daily_chart(d["daily"])) +
                 card("Last asks", recent(d["recent"])) + "</div>")
    parts.append(card("This service", facts([
        ("Service", f'{chip("active", "running")} {e(s["role"])}'),
        ("Gateway base URL", f'<code>{e(s["url"])}/v1</code>'),
        ("Dashboard", f'<code>{e(s["url"])}</code>'), ("Listening on", e(s["bind"])),
        ("Data folder", f'<code>{e(s["data_folder"])}</code>'),
        ("Admin token", "set" if s["admin_token_set"] else "not set (this machine only)"),
        ("Gateway keys", "enforced" if s["gateway_keys"]["enforced"] else "not enforced (Settings says how)")],
        "cols-2")))
    return "Home", "".join(parts)


def number(n: int, capped: bool = False) -> str:
    """A count as shown: '10,000+' when counting stopped there."""
    return f"{n:,}{'+' if capped else ''}"


def held_card(held: list[dict], frame) -> str:
    """Free models that turned paid: not seated or probed until the new price is accepted."""
    if not held:
        return ""
    rows = [[link("/models/" + h["model"], h["model"]), e(h["reason"]), e(when(h.get("since"))),
             confirm(frame, f'/held/{h["model"]}/confirm', "Accept the new price",
                     f'Accept the new price of {h["model"]}? It takes seats and probes again, at that price.')]
            for h in held]
    return card("Held until you accept the new price", '<p class="muted">These free models turned paid, so they '
                "take no seat and get no probe until you accept (or <code>bench model confirm NAME</code>).</p>" +
                table(["Model", "Why", "Since", ""], rows), "held", anchor="held")


def accept_price(req, bench, form) -> Done:
    alias = req.params["alias"]
    m = post(req, f"/bench/models/{alias}/confirm")["model"]
    return Done(f"Accepted the new price of {alias}: it is {m['status_text']} again.", "/", {"model": m})


ACTIONS = [("/held/{alias}/confirm", accept_price, "/")]


def steps_list(steps: list[dict]) -> str:
    items = "".join(f'<li class="{"done" if s["done"] else "todo"}">'
                    f'{chip("done", "done") if s["done"] else chip("queued", "to do")} '
                    f'{link(s["href"], s["text"])}</li>' for s in steps)
    return f'<ol class="steps">{items}</ol>'


def daily_chart(days: list[dict]) -> str:
    labels = [x["day"] for x in days]
    svg = charts.stacked_bars("Calls per day by status", labels,
                              [(name, [x["by_status"].get(name, 0) for x in days]) for name in SERIES])
    rows = [[e(x["day"])] + [str(x["by_status"].get(n, 0)) for n in SERIES] for x in days if x["calls"]]
    numbers = table(["Day", *SERIES], rows, "No calls in the last 14 days.", "numbers")
    return f'<figure class="chart-box">{svg}<figcaption>{numbers}</figcaption></figure>'


def recent(items: list[dict]) -> str:
    if not items:
        return '<p class="empty">Nothing asked yet. <a href="/ask">Ask a collection</a>.</p>'
    rows = "".join(
        f'<li><a href="/calls/{e(i["id"])}">{e(i["prompt"] or "(no text)")}</a>'
        f'<span class="muted"> · {e(i["collection"])} · {e(when(i["created"]))} · {i["answered"]} answered, '
        f'{i["judged"]} judged</span></li>' for i in items)
    return f'<ul class="plain-list">{rows}</ul><p><a href="/calls">Every ask →</a></p>'


SCRIPTS: tuple = ()
