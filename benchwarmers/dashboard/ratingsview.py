"""Ratings from best picks as the pages show them: a member's rating with its 95% interval beside its useful rate,
and the plain and length-controlled tables side by side."""
from __future__ import annotations

from .markup import Html, html, link, table
from .widgets import muted


def by_model(view: dict) -> dict:
    """model -> its plain rating's entry, from api.ratings.rankings_view (or a Fit's to_dict)."""
    return {r["model"]: r for r in view["models"]}


def rating_cell(entry: dict | None) -> Html:
    """'1,045 (1,002–1,090) of 12' or a dash when the model has no comparison yet."""
    if not entry:
        return muted("no best picks yet")
    lo, hi = entry["interval"]
    return html('$rating <span class="muted">($lo–$hi) of $n</span>', rating=f"{entry['rating']:,.0f}",
                lo=f"{lo:,.0f}", hi=f"{hi:,.0f}", n=entry["comparisons"])


def ratings_tables(view: dict, here: str) -> Html:
    """The plain ratings and the length-controlled ones beside them, and the switch to blind judgements alone."""
    if not view["models"]:
        said = "No best picks given blind yet." if view["blind"] else (
            "No best picks yet: press \u201cbest\u201d on an answer of the Ask page or an ask's own page, and each "
            "model is rated here by the answers it beat.")
        return html('<p class="empty">$said</p>$switch', said=said, switch=switch(view, here))
    styled = view["length_controlled"]
    effect = styled.get("length_effect")
    plain = table(["Model", "Rating", "95% interval", "Comparisons"], rows(view["models"]), cls="numbers")
    controlled = table(["Model", "Rating", "95% interval"], [r[:3] for r in rows(styled["models"])], cls="numbers")
    note = f"a longer answer's pull: {effect:+,.0f} points at the longest" if effect is not None else ""
    return html('<div class="ratings"><figure><figcaption>Plain</figcaption>$plain</figure><figure><figcaption>'
                'Length-controlled <span class="muted">($note)</span></figcaption>$controlled</figure></div>$switch',
                plain=plain, controlled=controlled, note=note, switch=switch(view, here))


def rows(models: list) -> list:
    return [[m["model"], f"{m['rating']:,.0f}", f"{m['interval'][0]:,.0f}–{m['interval'][1]:,.0f}", m["comparisons"]]
            for m in models]


def switch(view: dict, here: str) -> Html:
    if view["blind"]:
        return html('<p class="muted">From blind judgements alone (given before the models were shown): these '
                    'ratings, and on the Models page the useful rates beside your verdicts\u2019. $all</p>',
                    all=link(here, "Every judgement"))
    return html('<p class="muted">$blind</p>', blind=link(here + "?blind=1", "From blind judgements alone"))
