"""The Quotas page in a real browser, driven as a user would: set a connection's limit, use it up from the Ask
page, watch Home and Quotas warn of it, see the refused seat say when it resets, read the month's usage by
connection, clear the limit; the page against its JSON twin, with no script, foreign request or CSP report."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.fakes import FakeOpenAI
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.test_dashboard_browser import Watch, browser, pytestmark, shoot, tab  # noqa: F401 (fixtures, marks)


def ask_on_the_page(page, url: str, prompt: str) -> None:
    page.goto(url + "/ask")
    page.select_option("#ask-collection", "core")
    page.fill("#ask-prompt", prompt)
    page.click('#ask-form button[type="submit"]')


def test_a_user_sets_a_limit_uses_it_up_and_clears_it(tab, home, make_service):
    fake = FakeOpenAI().start()
    try:
        configure(home, {"hub": (fake, "openai")}, {"alpha": ("hub", "m-alpha")},
                  {"core": {"members": ["alpha"], "explore": 0}})
        svc = make_service()
        url, page = svc.url, tab
        watch = Watch(page, url)

        page.goto(url + "/")
        page.click('nav >> text=Quotas')
        expect(page.locator("h1")).to_have_text("Quotas")
        page.select_option("#q-target", "connection:hub")
        page.fill("#q-rpd", "2")
        page.click("text=Set limits")
        expect(page.locator(".flash-ok")).to_contain_text("Limits of connection hub: rpd 2.")
        row = page.locator("#connections tr", has_text="rpd")
        expect(row).to_contain_text("0 of 2")

        for n in (1, 2):                                   # two asks use the day up; both answered
            ask_on_the_page(page, url, f"question {n}")
            expect(page.locator(".seat")).to_contain_text(f"m-alpha says: question {n}")
        ask_on_the_page(page, url, "one too many")         # the third is refused before it is sent
        expect(page.locator("main [role=status]")).to_contain_text("rate limited: resets at")
        assert len([r for r in fake.requests if r.path.endswith("/chat/completions")]) == 2

        page.goto(url + "/")                               # Home warns, and leads to Quotas
        warning = page.locator(".flash", has_text="hub is at a limit")
        expect(warning).to_contain_text("rpd 2 of 2 used")
        warning.locator("text=See Quotas").click()
        expect(page).to_have_url(url + "/quotas")
        row = page.locator("#connections tr", has_text="rpd")
        expect(row).to_contain_text("2 of 2")
        expect(row.locator(".chip")).to_have_text("at a limit")
        assert row.locator("meter").get_attribute("value") == "2"
        shoot(page, "quotas")

        page.select_option("#u-by", "connection")          # the month by connection, as `bench usage` has it
        page.click("#usage >> text=Show")
        twin = page.request.get(url + "/quotas.json?" + page.url.split("?", 1)[1]).json()["usage"]
        assert twin["by"] == "connection" and twin["rows"][0]["name"] == "hub" and twin["rows"][0]["calls"] == 2
        expect(page.locator("#usage tbody tr", has_text="hub")).to_contain_text("2")

        row = page.locator("#connections tr", has_text="rpd")
        row.locator("button", has_text="Clear").click()
        expect(page.locator(".flash-ok")).to_contain_text("Cleared rpd of connection hub")
        expect(page.locator("#connections")).not_to_contain_text("requests a day")
        assert Http(url)("GET", "/bench/limits")[2]["connections"][0]["set"] == {}
        ask_on_the_page(page, url, "free again")
        expect(page.locator(".seat")).to_contain_text("m-alpha says: free again")
        assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
    finally:
        fake.stop()
