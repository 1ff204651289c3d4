"""The model page's evidence cards: why it was retired, the suite's scores, its speed over time, the catalog's facts.

Each function takes the model as GET /bench/models/{alias} gives it and returns one card's body; the page
(model.py) lays them out. The suite's scores and the user's verdicts stay in cards of their own, never mixed.
"""
from __future__ import annotations

from ...words import plural
from .. import charts
from ..markup import Html, html
from ..render import e, facts, link, pct, secs, table, when
from ..widgets import chip, PURPOSES

FACT_WORDS = {"context_window": "Context window", "max_output": "Longest answer", "vision": "Reads images",
              "tools": "Uses tools", "reasoning": "Reasons first", "image_out": "Draws images",
              "price_in": "Price in ($ per million tokens)", "price_out": "Price out ($ per million tokens)"}


# ---- retirement --------------------------------------------------------------------------------

def retirement(r: dict) -> str:
    """The evidence kept when the bench retired it: the two probes and what its endpoint listed."""
    probes = r["evidence"].get("probes") or []
    rows = [[e(p.get("kind")), chip(p.get("status") or "failed"), e(p.get("upstream_status") or ""),
             f'<span class="reason">{e(p.get("error") or p.get("answer") or "")}</span>', e(when(p.get("created")))]
            for p in probes]
    listing = r["evidence"].get("listing")
    if listing is None:
        listed = "Its endpoint's model list could not be read at the time."
    else:
        holds = "still listed it" if listing["holds_it"] else "no longer listed it"
        listed = f"Its endpoint {listing['endpoint']} listed {plural(listing['count'], 'model')} and {holds}."
    return (f'<p><strong>{e(r["reason"])}</strong> <span class="muted">({e(when(r["created"]))})</span></p>'
            + table(["Probe", "Status", "HTTP", "Answer or error", "When"], rows, "No probes were kept.")
            + f"<p>{e(listed)}</p>")


# ---- the suite ---------------------------------------------------------------------------------

SUITE_STATES = {"owed": "owed: the scheduler's suite job plays it at its next run", "queued": "queued to run now",
                "running": "running", "interrupted": "cut off by a restart: the suite job picks it up again"}


def suite_open(runs: list[dict]) -> str:
    """The model's suite runs with work left: owed (quick onboarding's), queued, running."""
    if not runs:
        return ""
    items = "".join(f'<li>{link("/suite/runs/" + str(r["id"]), "Run " + str(r["id"]))}: '
                    f'{e(SUITE_STATES.get(r["status"], r["status"]))} <span class="muted">({e(r["reason"] or "")}, '
                    f'since {e(when(r["created"]))})</span></li>' for r in runs)
    return f'<ul class="plain">{items}</ul>'


def suite_scores(alias: str, scores: dict | None, runnable: bool = True) -> str:
    """Per purpose: the score with its interval and what it rests on; then calibration and how answers parsed.
    `runnable`: the model's page has "Run the suite" (an active model's does; a retired, held or resting one not)."""
    if not scores or not any(scores.get(p) for p in PURPOSES):
        start = ('"Run the suite" above starts a run, and the ' if runnable else
                 "it can be run once the model is active again (restored, its price accepted or its rest over); the ")
        return f'<p class="empty">The suite has not scored it yet: {start}{link("/suite", "Suite")} page follows it.</p>'
    rows = []
    review, claims = scores.get("review"), scores.get("claims")
    if review:
        rows.append(["review", score(review), f'{review["hits"]} of {plural(review["bugs"], "bug")} found',
                     f'{review["false_alarms"]} false alarms on {review["controls"]} clean controls'])
    if claims:
        rows.append(["claims", score(claims), f'{claims["right"]} of {plural(claims["claims"], "claim")} right',
                     f'{claims["wrong"]} wrong, {claims["unanswered"]} unanswered'])
    out = table(["Purpose", "Score", "Found", "Missed or wrong"], rows)
    notes = [f'{plural(scores["confidently_wrong"], "answer")} wrong at 80% stated confidence or more'] \
        if scores.get("confidently_wrong") else []
    if scores.get("failed"):
        notes.append(f'{plural(scores["failed"], "call")} failed (not scored)')
    parsed = ", ".join(f"{n} {how}" for how, n in sorted((scores.get("parse") or {}).items()))
    if parsed:
        notes.append(f"answers read as: {parsed}")
    tail = f'<p class="muted">{e("; ".join(notes))}.</p>' if notes else ""
    updated = (f'<p class="muted">Last scored {e(when(scores.get("updated")))}; runs and their answers are on the '
               f'{link("/suite", "Suite")} page.</p>')
    return out + tail + calibration(scores.get("calibration") or []) + updated


def score(s: dict) -> Html:
    lo, hi = s.get("interval") or (None, None)
    span = html(' <span class="muted">($lo–$hi)</span>', lo=pct(lo), hi=pct(hi)) if lo is not None else ""
    return html("<strong>$score</strong>$span", score=pct(s["score"]), span=span)


def calibration(bands: list[dict]) -> str:
    if not bands:
        return ""
    rows = [[f'{pct(b["stated"][0])}–{pct(b["stated"][1])}', str(b["answers"]), pct(b["right_rate"])] for b in bands]
    return ('<details class="hint"><summary>Stated confidence against answers right</summary>'
            + table(["Stated", "Answers", "Right"], rows, cls="numbers") + "</details>")


# ---- speed -------------------------------------------------------------------------------------

def speed(history: list[dict], perf: dict | None) -> str:
    """Time to first token (the short prompt) and output tokens per second (the long one), each time measured."""
    if not history:
        return ('<p class="empty">Not measured yet: the scheduler\'s weekly <code>perf</code> job times a short '
                'and a long prompt (<a href="/settings#scheduler">Settings</a>).</p>')
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
    figures = "".join(f'<figure class="chart-box"><h3 class="first">{e(title)} <span class="muted">({e(which)})'
                      f"</span></h3>{svg}</figure>" for title, which, svg in drawn)
    rows = [[e(day(f)), e(f["prompt"]), chip(f["status"]), e(secs(f["ttft"])), e(rate(f["tokens_per_second"])),
             str(f["output_tokens"] or ""), f'<span class="reason">{e(f["error"] or "")}</span>']
            for f in reversed(history)]
    numbers = table(["Day", "Prompt", "Status", "First token", "Tokens/s", "Tokens out", "Error"], rows,
                    cls="numbers")
    latest = facts([("Latest", speed_words(perf))]) if perf else ""
    drawn_html = (f'<div class="grid-2">{figures}</div>' if figures else
                  '<p class="empty">Every measurement failed: the table says why.</p>')
    return f"{latest}{drawn_html}{numbers}"


def compact(value: float) -> str:
    """An axis tick short enough for a phone: 37500 -> 37.5k."""
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def rate(tokens_per_second) -> str:
    if not tokens_per_second:
        return ""
    return f"{tokens_per_second:,.0f}" if tokens_per_second >= 100 else f"{tokens_per_second:.1f}"


def day(figure: dict) -> str:
    return when(figure["created"])[:10]


def speed_words(perf: dict) -> str:
    parts = [f"{secs(perf['ttft'])} to the first token"] if perf.get("ttft") is not None else []
    if perf.get("tokens_per_second"):
        parts.append(f"{rate(perf['tokens_per_second'])} tokens a second")
    return e(", ".join(parts) or "no figure: the last test failed") + f' <span class="muted">(measured ' \
        f'{e(when(perf["measured"]))})</span>'


# ---- the catalog -------------------------------------------------------------------------------

def catalog_facts(c: dict) -> str:
    """Each fact with the source it came from (the user's overrides first), the provider and the roles."""
    rows = [[e(FACT_WORDS.get(k, k)), e(fact_value(k, f["value"])), f'<span class="reason">{e(f["source"])}</span>']
            for k, f in sorted(c["facts"].items(), key=lambda kv: list(FACT_WORDS).index(kv[0])
                               if kv[0] in FACT_WORDS else 99)]
    roles = ", ".join(c["roles"]) or "none"
    chosen = "set by you" if c["roles_set_by"] == "user" else "from its facts"
    head = facts([("Provider", e(c["provider"] or "not matched: its endpoint's address names no known provider")),
                  ("Roles", f'{e(roles)} <span class="muted">({chosen})</span>')])
    return head + table(["Fact", "Value", "Source"], rows, "No source states a fact about it yet.")


def fact_value(key: str, value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.startswith("price_"):
        return "free" if value == 0 else f"${value:g}"
    return f"{value:,}" if isinstance(value, int) else str(value)
