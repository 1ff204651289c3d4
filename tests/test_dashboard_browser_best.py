"""The best answer and a blind panel in a real browser: asked blind on the Ask page, the columns say Seat 1..N and
name no model; "Best answer" on one of them opens the ask's page, which now says who sat where, marks the pick,
proposes its verdict (confirmed in one click) and can withdraw it."""
from __future__ import annotations

import re

import pytest

from tests.helpers.panel import fake, setup_bench  # noqa: F401  (the fake fixture)
from tests.test_blind import EXTRA, NAMES
from tests.test_dashboard_browser import Watch, browser, pytestmark, tab  # noqa: F401  (fixtures, marks)

try:
    from playwright.sync_api import expect
except ImportError:          # skipped by pytestmark
    expect = None

COLS = {"open": {"members": list(NAMES), "explore": 0, "merge_model": "merger"}}
FORBIDDEN = re.compile("|".join(re.escape(n) for n in [*NAMES, *NAMES.values()]), re.I)


@pytest.fixture
def served(home, fake, make_service):
    setup_bench(home, fake, COLS, **EXTRA)
    for alias, srv in NAMES.items():
        fake.script(srv, f"I am {srv}. The cache is stale.")
    return make_service()


def asked_blind(tab, url: str) -> Watch:
    """The Ask page asks `open` blind; its three answers are in."""
    watch = Watch(tab, url)
    tab.goto(url + "/ask")
    tab.select_option("#ask-collection", "open")
    tab.fill("#ask-prompt", "Who are you?")
    tab.check('input[name="blind"]')
    tab.click('#ask-form button[type="submit"]')
    expect(tab.locator("#ask-form [data-status]")).to_contain_text("3 of 3 seats answered")
    return watch


def test_a_blind_panel_judged_by_best_reveals_its_seats(tab, served):
    watch = asked_blind(tab, served.url)
    headings = tab.locator("#answers .seat h3").all_inner_texts()
    assert headings == ["Seat 1", "Seat 2", "Seat 3"]
    answers = tab.locator("#answers").inner_text()
    assert not FORBIDDEN.search(answers) and "I am a model." in answers
    second = tab.locator("#answers .seat").nth(1)
    expect(second.locator(".best-pick")).to_be_visible()
    second.locator(".best-pick button", has_text="Best answer").click()
    expect(tab).to_have_url(re.compile(r"/calls/p_"))
    expect(tab.locator(".flash")).to_contain_text("Seat 2 picked as the best answer.")
    expect(tab.locator(".blind-note")).to_contain_text("Blind: judged, so who sat where is shown.")
    revealed = tab.locator(".seats .seat h3").all_inner_texts()
    assert sorted(revealed) == sorted(NAMES)                       # who sat where, now
    picked = tab.locator(".seats .seat").nth(1)
    expect(picked.locator(".best-picked")).to_contain_text("Picked as the best answer")
    expect(picked.locator("form.proposal")).to_contain_text("The best pick proposes: useful")
    picked.locator("form.proposal button").click()
    expect(picked.locator("form.verdict [data-status]")).to_contain_text("Verdict saved: useful")
    tab.locator("button", has_text="Withdraw the pick").click()
    expect(tab.locator(".flash")).to_contain_text("Best pick withdrawn")
    assert tab.locator(".best-picked").count() == 0
    assert sorted(tab.locator(".seats .seat h3").all_inner_texts()) == sorted(NAMES)   # once shown, shown
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)


def test_a_verdict_saved_in_place_on_the_ask_page_names_the_blind_seats(tab, served):
    watch = asked_blind(tab, served.url)
    assert tab.locator("#answers .seat h3").all_inner_texts() == ["Seat 1", "Seat 2", "Seat 3"]
    first = tab.locator("#answers .seat").nth(0)
    first.locator("form.verdict label", has_text="Not useful").click()
    first.locator("form.verdict button[type=submit]").click()
    expect(first.locator("form.verdict [data-status]")).to_contain_text("saved")
    expect(tab.locator("#answers .seat h3").nth(0)).not_to_have_text("Seat 1")   # the verdict showed who sat where
    assert sorted(tab.locator("#answers .seat h3").all_inner_texts()) == sorted(NAMES)
    assert tab.url.endswith("/ask")                                               # in place: the page stayed
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
