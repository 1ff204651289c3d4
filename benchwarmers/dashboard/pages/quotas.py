"""Quotas: what is left of each connection's and model's rate limits and when each resets (a bar per limit), your
limits set and cleared, the month's usage and cost by the same cuts as `bench usage`, and calls and tokens per day."""
from __future__ import annotations

import time
from typing import Protocol

from ...api.limits import LimitsParts, limits_view
from ...api.usage import usage_view
from ...core.collection import Collections
from ...errors import BadRequest
from ...scheduler import Clock
from ...server.messages import Request
from ...store import Database
from ...words import plural
from .. import charts
from ..apicall import call, get, post
from ..contract import stays
from ..markup import Html, card, html, link, options, table, trusted
from ..render import when
from ..web import Done, Form, Frame
from ..widgets import chip, csrf, hidden, muted


class QuotasPageParts(LimitsParts, Protocol):
    """The rate limits, and the usage ledger."""
    clock: Clock
    collections: Collections
    db: Database


CUTS = [("model", "model"), ("connection", "connection"), ("collection", "collection"), ("kind", "kind")]
STATE_CHIPS = {"ok": ("active", "ok"), "near": ("resting", "near a limit"), "at": ("failed", "at a limit")}


def data(req: Request, bench: QuotasPageParts) -> dict:
    q = req.query
    return {"limits": limits_view(bench), "usage": usage_view(bench, q.get("month") or None, q.get("by") or None, 30)}


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    lim, use = d["limits"], d["usage"]
    parts = [warnings(lim["connections"])]
    if lim.get("problem"):
        parts.append(html('<div class="flash flash-error" role="alert">limits.json cannot be read, so none of its '
                          "limits apply: $p</div>", p=lim["problem"]))
    parts.append(card("Connections", html("$t$w", t=limits_table(lim["connections"], frame, lim),
                                          w=waits(lim["waits"])), anchor="connections"))
    parts.append(card("Models", limits_table(lim["models"], frame, lim) if lim["models"] else trusted(
        '<p class="empty">No model has a limit of its own, or a call this month.</p>'), anchor="models"))
    parts.append(card("Set a limit", set_form(lim, frame), anchor="set"))
    parts.append(card(f"Usage in {use['month']}", html("$f$t$x", f=month_form(use), t=usage_table(use),
                                                       x=exploration(use)), anchor="usage"))
    parts.append(card("Calls and tokens per day", daily_charts(use["daily"]), anchor="daily"))
    return "Quotas", html("$parts", parts=parts)


def warnings(connections: list[dict]) -> Html:
    """The connections near or at a limit, as Home shows them too."""
    return html("$w", w=[html('<div class="flash flash-$kind" role="status">$text</div>', text=warning_text(c),
                              kind="error" if c["state"] == "at" else "info")
                         for c in connections if c["state"] != "ok"])


def warning_text(c: dict) -> str:
    """'openrouter is at a limit: rpm 20 of 20 used, resets at T' (the fullest of its limits)."""
    full = [(w["used"] / w["limit"], k, w) for k, w in c["windows"].items() if w["limit"]]
    state = "at a limit" if c["state"] == "at" else "near a limit"
    if c.get("resting_until"):
        return f"{c['name']} is {state}: its provider's limit, resting until {when(c['resting_until'], True)}."
    if not full:
        return f"{c['name']} is {state}: its provider's headers say little is left."
    _, key, w = max(full, key=lambda f: f[0])
    return (f"{c['name']} is {state}: {key} {w['used']} of {w['limit']} used, resets at "
            f"{when(w['resets_at'], True)}.")


def bar(w: dict) -> Html:
    """A meter of what is used of one limit, with its words beside it for screen readers and narrow screens."""
    limit, used = w["limit"], min(w["used"], w["limit"])
    low, high = max(limit * 0.8 - 0.5, 0.5), limit - 0.5      # amber from 80% used, red once used up
    return html('<meter class="quota" min="0" max="$limit" low="$low" high="$high" optimum="0" value="$used" '
                'title="$all of $limit used">$all of $limit</meter>', limit=limit, low=f"{low:g}", high=f"{high:g}",
                used=used, all=w["used"])


def limits_table(entries: list[dict], frame: Frame, lim: dict) -> Html:
    rows = []
    for x in entries:
        name = html("$n$gone", n=x["name"], gone="" if x["known"] else [" ", muted("(gone)")])
        if x["scope"] == "model" and x.get("connection"):
            name = html('$link <span class="muted">on $c</span>', link=link(f"/models/{x['name']}", x["name"]),
                        c=x["connection"])
        chip_state, words = STATE_CHIPS[x["state"]]
        state = chip(chip_state, words)
        for key, w in x["windows"].items():
            if w["limit"]:
                rows.append([name, state, html('$k <span class="muted">$w</span>', k=key, w=w["what"]),
                             html("$bar $used of $limit", bar=bar(w), used=f'{w["used"]:,}', limit=f'{w["limit"]:,}'),
                             f'{w["left"]:,}', when(w["resets_at"], True), clear_button(frame, x, key)])
        rows += provider_rows(x, name, state)
        if not any(w["limit"] for w in x["windows"].values()) and not provider_rows(x, name, state):
            rows.append([name, state, muted("none of its own"), f'{x["windows"]["rpmonth"]["used"]:,} this month', "",
                         when(x.get("blocked_until"), True), ""])
    return table(["Name", "State", "Limit", "Used", "Left", "Resets", ""], rows,
                 "No connections yet: add an endpoint first.", "quotas")


def provider_rows(x: dict, name: Html, state: Html) -> list[list]:
    """What the provider's own headers said of a connection, and a rest it imposed."""
    rows, learned = [], x.get("learned") or {}
    now = time.time()
    for unit in ("requests", "tokens"):
        left = learned.get(f"{unit}_remaining")
        if left is not None:
            limit = learned.get(f"{unit}_limit")
            reset = learned.get(f"{unit}_reset_at")
            passed = reset is not None and reset <= now    # what the headers said then is stale by now
            rows.append([name, state, html('provider $u <span class="muted">from its headers</span>', u=unit),
                         f"of {limit:,}" if limit else "",
                         muted("full again, most likely") if passed else f"{left:,}",
                         muted(f"reset at {when(reset, True)}: passed") if passed else when(reset, True), ""])
    if x.get("resting_until") and x["resting_until"] > now:
        rows.append([name, state, "provider rest", "", "0", when(x["resting_until"], True), ""])
    return rows


def clear_button(frame: Frame, x: dict, key: str) -> Html:
    return html('<form method="post" action="/quotas/clear" class="inline">$csrf$name$scope$limit<button type="submit" '
                'class="secondary small" aria-label="Clear $key of $n">Clear</button></form>', csrf=csrf(frame),
                name=hidden("name", x["name"]), scope=hidden("scope", x["scope"]), limit=hidden("limit", key), key=key,
                n=x["name"])


def waits(w: dict) -> Html:
    return html('<p class="muted">A call waits up to $wait s for a limit ($scheduled s for scheduled work, probes, '
                "speed tests and suite tasks), else it is refused unsent and its seat says when the limit resets; an "
                "explore seat goes to a model that need not wait. Minutes slide; days and months are UTC calendar "
                'days and months. <a href="/settings#settings">Change the waits</a>.</p>',
                wait=f'{w["limit_wait_seconds"]:g}', scheduled=f'{w["limit_wait_scheduled_seconds"]:g}')


SET_FORM = """<form method="post" action="/quotas/set" class="stack narrow">$csrf\
<label for="q-target">Connection or model</label><select id="q-target" name="target" required>$targets</select>\
$inputs<p class="muted">Empty fields leave a limit as it is; Clear (above) removes one. A limit you set is never \
loosened by what a provider's headers say. Kept in <code>$file</code>.</p>\
<div class="form-end"><button type="submit">Set limits</button></div></form>"""


def set_form(lim: dict, frame: Frame) -> Html:
    targets = [(f"connection:{c['name']}", f"connection {c['name']}") for c in lim["connections"] if c["known"]]
    targets += [(f"model:{alias}", f"model {alias}") for alias in lim["model_names"]]
    inputs = [html('<label for="q-$k">$k <span class="muted">($words)</span></label><input id="q-$k" name="$k" '
                   'type="number" min="1" step="1" value="$typed">', k=k, words=words, typed=frame.typed(k))
              for k, words in lim["limits"].items()]
    return html(SET_FORM, csrf=csrf(frame), targets=options(targets, frame.typed("target")), inputs=inputs,
                file=lim["file"])


def month_form(use: dict) -> Html:
    months = [(m, m) for m in sorted(set(use["months"]) | {use["month"]}, reverse=True)]
    return html('<form method="get" action="/quotas" class="search"><label for="u-month">Month</label><select '
                'id="u-month" name="month">$months</select><label for="u-by">By</label><select id="u-by" name="by">'
                '$cuts</select><button type="submit" class="secondary">Show</button></form>',
                months=options(months, use["month"]), cuts=options(CUTS, use["by"]))


def money(value) -> str:
    return "" if value is None else "$0" if value == 0 else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def cost_cell(t: dict) -> Html | str:
    if t["cost"] is None and not t["unpriced"]:
        return "$0"
    extra = html(' <span class="muted">+$n unpriced</span>', n=t["unpriced"]) if t["unpriced"] else ""
    return html("$cost$extra", cost=money(t["cost"]) or "unknown", extra=extra)


def usage_table(use: dict) -> Html:
    rows = [[r["name"] if r["name"] is not None else "(none)", f'{r["calls"]:,}', f'{r["input_tokens"]:,}',
             f'{r["output_tokens"]:,}', f'{r["cached_tokens"]:,}', cost_cell(r)] for r in use["rows"]]
    if rows:
        t = use["total"]
        rows.append([trusted("<strong>Total</strong>"), f'{t["calls"]:,}', f'{t["input_tokens"]:,}',
                     f'{t["output_tokens"]:,}', f'{t["cached_tokens"]:,}', cost_cell(t)])
    return table([use["by"].capitalize(), "Calls", "Tokens in", "Tokens out", "Cached", "Cost"], rows,
                 f"No calls in {use['month']}.", "numbers usage")


def exploration(use: dict) -> Html:
    x = use["exploration"]
    if not x["calls"]:
        return trusted('<p class="exploration"><strong>Exploration:</strong> no explore seats this month.</p>')
    promoted = ", ".join(f"{p['model']} ({p['collection']})" for p in x["promoted"]) or "none yet"
    return html('<p class="exploration"><strong>Exploration:</strong> $seats cost $tokens tokens ($cost); $useful of '
                "$judged judged answers were useful; now members: $promoted.</p>",
                seats=plural(x["calls"], "explore seat"), tokens=f'{x["input_tokens"] + x["output_tokens"]:,}',
                cost=money(x["cost"]) or "cost unknown", useful=x["useful"], judged=x["judged"], promoted=promoted)


def daily_charts(days: list[dict]) -> Html:
    labels = [x["day"] for x in days]
    calls = charts.stacked_bars("Calls per day", labels, [("calls", [x["calls"] for x in days])])
    tokens = charts.line("Tokens per day", labels, [x["tokens"] for x in days], fmt=lambda v: f"{v:,.0f}")
    rows = [[x["day"], f'{x["calls"]:,}', f'{x["tokens"]:,}', money(x["cost"])] for x in days if x["calls"]]
    numbers = table(["Day (UTC)", "Calls", "Tokens", "Cost"], rows, "No calls in the last 30 days.", "numbers")
    return html('<div class="grid-2"><figure class="chart-box">$calls</figure><figure class="chart-box">$tokens'
                "</figure></div>$numbers", calls=calls, tokens=tokens, numbers=numbers)


# ---- actions -----------------------------------------------------------------------------------

def set_limits(req: Request, bench: object, form: Form) -> Done:
    scope, _, name = form.get("target").partition(":")
    values = {}
    for key in get(req, "/bench/limits")["limits"]:
        typed = form.get(key).strip()
        if typed:
            values[key] = int(typed) if typed.isdigit() else typed     # the API says what a limit must be
    if not values:
        raise BadRequest("Fill in at least one limit.", "e.g. rpm 20 for 20 requests a minute.")
    d = post(req, "/bench/limits", {"name": name, "scope": scope or None, **values})
    said = ", ".join(f"{k} {v}" for k, v in d["set"].items())
    return Done(f"Limits of {d['scope']} {d['name']}: {said}.", "/quotas", {"entry": d})


def clear_limit(req: Request, bench: object, form: Form) -> Done:
    name, scope, key = form.get("name"), form.get("scope"), form.get("limit")
    if key:
        d = post(req, "/bench/limits", {"name": name, "scope": scope, key: None})
    else:
        d = call(req, "DELETE", f"/bench/limits/{name}", query={"scope": scope})
    return Done(f"Cleared {key or 'every limit'} of {d['scope']} {d['name']}.", "/quotas", {"entry": d})


ACTIONS = [("/quotas/set", set_limits, "/quotas#set"), ("/quotas/clear", clear_limit, "/quotas")]


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
