"""Budgets in a real browser (Playwright, this machine's Chromium): the Quotas page shows each budget's spend with
its warning and the models no budget limits, sets one through its form, and the Ask page says what an ask would
cost before it is sent."""
from __future__ import annotations

import pytest

from tests.fakes import Reply
from tests.helpers.http import Http
from tests.helpers.panel import body, chat_requests, fake  # noqa: F401 (fixture)
from tests.test_budgets import budgets, setup
from tests.test_dashboard_browser import CHROMIUM, FLAGS, Watch, arrive, shoot, sync_playwright

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sync_playwright is None, reason="Playwright for Python is not installed"),
    pytest.mark.skipif(not CHROMIUM, reason="no Chrome or Chromium on this machine (never downloaded)"),
]


@pytest.fixture
def tab():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = b.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.set_default_timeout(20000)
        yield page
        b.close()


def test_the_quotas_page_shows_budgets_and_sets_one_and_ask_says_what_it_would_cost(tab, home, fake, make_service):
    from playwright.sync_api import expect
    setup(home, fake, ["a", "c"])
    budgets(home, models={"a": 1.0})
    svc = make_service()
    fake.script("m-a", Reply(usage={"input": 40, "output": 45}))            # $0.85 of a's $1.00
    assert Http(svc.url)("POST", "/v1/chat/completions", body("bench/core", "hi", max_tokens=50))[0] == 200
    page, url = tab, svc.url
    watch = Watch(page, url)
    page.goto(url + "/quotas")
    card = page.locator("#budgets")
    expect(card).to_contain_text("model 'a'")
    expect(card.locator("meter")).to_have_attribute("value", "0.85")
    expect(page.locator(".flash", has_text="near its budget")).to_contain_text("$0.85 of $1.00 spent this month")
    expect(card.locator(".unpriced")).to_contain_text("c")
    shoot(page, "quotas-budgets")
    page.select_option("#q-target", "collection:core")
    page.fill("#q-usd_month", "2.5")
    page.click("#set button[type=submit]")
    expect(page.locator("#budgets")).to_contain_text("collection 'core'")
    expect(page.locator("#budgets")).to_contain_text("$2.50")
    page.goto(url + "/ask")
    arrive(page, url + "/ask")
    page.fill("#ask-prompt", "What would this cost?")
    out = page.locator("[data-estimate-out]")
    expect(out).to_be_visible()
    expect(out).to_contain_text("At most $")
    expect(out).to_contain_text("c no price known")
    shoot(page, "ask-estimate", dark=False)
    assert len(chat_requests(fake)) == 2                                    # the estimate sent nothing
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
