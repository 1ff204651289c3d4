"""The model page's evidence cards: why it was retired, the suite's scores, its speed over time, the catalog's facts.

Each function takes the model as GET /bench/models/{alias} gives it and returns one card's body; the page
(model.py) lays them out. The suite's scores and the user's verdicts stay in cards of their own, never mixed.
"""
from __future__ import annotations

from ...words import plural
from .. import charts
from ..markup import Html, facts, html, join, link, table, trusted
from ..render import pct, secs, when
from ..widgets import PURPOSES, chip, muted

FACT_WORDS = {"context_window": "Context window", "max_output": "Longest answer", "vision": "Reads images",
              "tools": "Uses tools", "reasoning": "Reasons first", "image_out": "Draws images",
              "price_in": "Price in ($ per million tokens)", "price_out": "Price out ($ per million tokens)"}


# ---- retirement --------------------------------------------------------------------------------

def retirement(r: dict) -> Html:
    """The evidence kept when the bench retired it: the two probes and what its endpoint listed."""
    probes = r["evidence"].get("probes") or []
    rows = [[p.get("kind"), chip(p.get("status") or "failed"), p.get("upstream_status") or "",
             html('<span class="reason">$t</span>', t=p.get("error") or p.get("answer") or ""), when(p.get("created"))]
            for p in probes]
    listing = r["evidence"].get("listing")
    if listing is None:
        listed = "Its endpoint's model list could not be read at the time."
    else:
        holds = "still listed it" if listing["holds_it"] else "no longer listed it"
        listed = f"Its endpoint {listing['endpoint']} listed {plural(listing['count'], 'model')} and {holds}."
    return html('<p><strong>$reason</strong> <span class="muted">($when)</span></p>$table<p>$listed</p>',
                reason=r["reason"], when=when(r["created"]), listed=listed,
                table=table(["Probe", "Status", "HTTP", "Answer or error", "When"], rows, "No probes were kept."))


# ---- the suite ---------------------------------------------------------------------------------

SUITE_STATES = {"owed": "owed: the scheduler's suite job plays it at its next run", "queued": "queued to run now",
                "running": "running", "interrupted": "cut off by a restart: the suite job picks it up again"}


def suite_open(runs: list[dict]) -> Html:
    """The model's suite runs with work left: owed (quick onboarding's), queued, running."""
    if not runs:
        return Html("")
    return html('<ul class="plain">$items</ul>', items=[
        html('<li>$link: $state <span class="muted">($reason, since $when)</span></li>',
             link=link("/suite/runs/" + str(r["id"]), "Run " + str(r["id"])),
             state=SUITE_STATES.get(r["status"], r["status"]), reason=r["reason"] or "", when=when(r["created"]))
        for r in runs])


def suite_scores(alias: str, scores: dict | None, runnable: bool = True) -> Html:
    """Per purpose: the score with its interval and what it rests on; then calibration and how answers parsed.
    `runnable`: the model's page has "Run the suite" (an active model's does; a retired, held or resting one not)."""
    if not scores or not any(scores.get(p) for p in PURPOSES):
        start = ('"Run the suite" above starts a run, and the ' if runnable else
                 "it can be run once the model is active again (restored, its price accepted or its rest over); the ")
        return html('<p class="empty">The suite has not scored it yet: $start$link page follows it.</p>', start=start,
                    link=link("/suite", "Suite"))
    rows = []
    review, claims = scores.get("review"), scores.get("claims")
    if review:
        rows.append(["review", score(review), f'{review["hits"]} of {plural(review["bugs"], "bug")} found',
                     f'{review["false_alarms"]} false alarms on {review["controls"]} clean controls'])
    if claims:
        rows.append(["claims", score(claims), f'{claims["right"]} of {plural(claims["claims"], "claim")} right',
                     f'{claims["wrong"]} wrong, {claims["unanswered"]} unanswered'])
    notes = [f'{plural(scores["confidently_wrong"], "answer")} wrong at 80% stated confidence or more'] \
        if scores.get("confidently_wrong") else []
    if scores.get("failed"):
        notes.append(f'{plural(scores["failed"], "call")} failed (not scored)')
    parsed = ", ".join(f"{n} {how}" for how, n in sorted((scores.get("parse") or {}).items()))
    if parsed:
        notes.append(f"answers read as: {parsed}")
    return html('$table$tail$calibration<p class="muted">Last scored $when; runs and their answers are on the $link '
                "page.</p>", table=table(["Purpose", "Score", "Found", "Missed or wrong"], rows),
                tail=html('<p class="muted">$n.</p>', n="; ".join(notes)) if notes else "",
                calibration=calibration(scores.get("calibration") or []), when=when(scores.get("updated")),
                link=link("/suite", "Suite"))


def score(s: dict) -> Html:
    lo, hi = s.get("interval") or (None, None)
    span = html(' <span class="muted">($lo–$hi)</span>', lo=pct(lo), hi=pct(hi)) if lo is not None else ""
    return html("<strong>$score</strong>$span", score=pct(s["score"]), span=span)


def calibration(bands: list[dict]) -> Html:
    if not bands:
        return Html("")
    rows = [[f'{pct(b["stated"][0])}–{pct(b["stated"][1])}', b["answers"], pct(b["right_rate"])] for b in bands]
    return html('<details class="hint"><summary>Stated confidence against answers right</summary>$t</details>',
                t=table(["Stated", "Answers", "Right"], rows, cls="numbers"))


# ---- speed -------------------------------------------------------------------------------------

NOT_MEASURED = trusted('<p class="empty">Not measured yet: the scheduler\'s weekly <code>perf</code> job times a short '
                       'and a long prompt (<a href="/settings#scheduler">Settings</a>).</p>')


def speed(history: list[dict], perf: dict | None) -> Html:
    """Time to first token (the short prompt) and output tokens per second (the long one), each time measured."""
    if not history:
        return NOT_MEASURED
    short = [f for f in history if f["prompt"] == "short"]
    long_ = [f for f in history if f["prompt"] == "long"]
    drawn = []
    if any(f["ttft"] is not None for f in short):
        values = [f["ttft"] for f in short]
        drawn.append(("Time to the first token", "short prompt", charts.line(
            "Seconds to the first token (short prompt)", [day(f) for f in short], values,
            fmt=charts.seconds_format(values))))
    if any(f["tokens_per_second"] for f in long_):
        drawn.append(("Output tokens per second", "long prompt", charts.line(
            "Output tokens per second (long prompt)", [day(f) for f in long_],
            [f["tokens_per_second"] for f in long_], fmt=compact)))
    figures = [html('<figure class="chart-box"><h3 class="first">$title <span class="muted">($which)</span></h3>$svg'
                    "</figure>", title=title, which=which, svg=svg) for title, which, svg in drawn]
    rows = [[day(f), f["prompt"], chip(f["status"]), secs(f["ttft"]), rate(f["tokens_per_second"]),
             f["output_tokens"] or "", html('<span class="reason">$e</span>', e=f["error"] or "")]
            for f in reversed(history)]
    numbers = table(["Day", "Prompt", "Status", "First token", "Tokens/s", "Tokens out", "Error"], rows,
                    cls="numbers")
    drawn_html = html('<div class="grid-2">$f</div>', f=figures) if figures else \
        trusted('<p class="empty">Every measurement failed: the table says why.</p>')
    return html("$latest$drawn$numbers", latest=facts([("Latest", speed_words(perf))]) if perf else "",
                drawn=drawn_html, numbers=numbers)


def compact(value: float) -> str:
    """An axis tick short enough for a phone: 37500 -> 37.5k."""
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def rate(tokens_per_second) -> str:
    if not tokens_per_second:
        return ""
    return f"{tokens_per_second:,.0f}" if tokens_per_second >= 100 else f"{tokens_per_second:.1f}"


def day(figure: dict) -> str:
    return when(figure["created"])[:10]


def speed_words(perf: dict) -> Html:
    parts = [f"{secs(perf['ttft'])} to the first token"] if perf.get("ttft") is not None else []
    if perf.get("tokens_per_second"):
        parts.append(f"{rate(perf['tokens_per_second'])} tokens a second")
    return html("$said $when", said=", ".join(parts) or "no figure: the last test failed",
                when=muted(f"(measured {when(perf['measured'])})"))


# ---- the catalog -------------------------------------------------------------------------------

def catalog_facts(c: dict) -> Html:
    """Each fact with the source it came from (the user's overrides first), the provider and the roles."""
    rows = [[FACT_WORDS.get(k, k), fact_value(k, f["value"]), html('<span class="reason">$s</span>', s=f["source"])]
            for k, f in sorted(c["facts"].items(), key=lambda kv: list(FACT_WORDS).index(kv[0])
                               if kv[0] in FACT_WORDS else 99)]
    chosen = "set by you" if c["roles_set_by"] == "user" else "from its facts"
    head = facts([("Provider", c["provider"] or "not matched: its endpoint's address names no known provider"),
                  ("Roles", join([", ".join(c["roles"]) or "none", muted(f"({chosen})")], " "))])
    return html("$head$table", head=head, table=table(["Fact", "Value", "Source"], rows,
                                                      "No source states a fact about it yet."))


def fact_value(key: str, value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.startswith("price_"):
        return "free" if value == 0 else f"${value:g}"
    return f"{value:,}" if isinstance(value, int) else str(value)
