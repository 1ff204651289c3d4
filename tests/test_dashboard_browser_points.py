"""A panel's points in a real browser: asked on the Ask page, a point judged there in place, the seat columns show
its quoted words and the proposal its verdict makes, confirmed in one click; then judged again on the ask's page."""
from __future__ import annotations

import pytest

from tests.fakes.referee import FakeReferee
from tests.helpers.http import Http
from tests.helpers.panel import body, fake  # noqa: F401  (the fake fixture)
from tests.test_dashboard_points import serve
from tests.test_dashboard_browser import Watch, browser, pytestmark, tab  # noqa: F401  (fixtures, marks)

try:
    from playwright.sync_api import expect
except ImportError:          # skipped by pytestmark
    expect = None

@pytest.fixture
def served(home, fake, make_service):
    return serve(home, fake, make_service, FakeReferee())


def column(tab, model: str):
    return tab.locator("#answers .seat", has=tab.locator("h3", has_text=model))


def test_a_point_judged_on_the_ask_page_shows_in_the_columns(tab, served):
    watch = Watch(tab, served.url)
    tab.goto(served.url + "/ask")
    tab.fill("#ask-prompt", "Is the cache stale?")
    tab.click('#ask-form button[type="submit"]')
    point = tab.locator("#points li.point").first
    expect(point).to_contain_text("The cache is stale.")
    expect(point).to_contain_text("asserts: Seat 1 · a: “The cache is stale”")
    expect(point).to_contain_text("denies: Seat 2 · b: “The cache is fresh”")
    expect(point).to_contain_text("silent: Seat 3 · c")
    expect(column(tab, "a").locator(".answer mark")).to_have_text("The cache is stale")
    expect(column(tab, "b").locator(".answer mark")).to_have_text("The cache is fresh")
    assert column(tab, "c").locator(".answer mark").count() == 0
    assert tab.locator("#answers form.proposal").count() == 0
    point.locator("button", has_text="True").click()
    expect(tab.locator("#points li.point").first).to_contain_text("judged: true")
    expect(tab.locator("#points li.point").first.locator("[data-status]")).to_have_text("Point judged true.")
    expect(column(tab, "a").locator("form.proposal")).to_contain_text("propose: useful")
    expect(column(tab, "b").locator("form.proposal")).to_contain_text("propose: not useful")
    assert column(tab, "c").locator("form.proposal").count() == 0
    expect(tab).to_have_url(served.url + "/ask")                   # saved in place: the answers stay
    column(tab, "b").locator("form.proposal button").click()
    expect(column(tab, "b").locator("form.verdict [data-status]")).to_contain_text("Verdict saved: not useful")
    expect(column(tab, "b").locator('form.verdict input[value="no"]')).to_be_checked()
    panel = tab.locator(".panel-link").get_attribute("href").rsplit("/", 1)[1]
    api = Http(served.url)
    seats = {s["model"]: s for s in api("GET", f"/bench/history/{panel}")[2]["seats"]}
    assert seats["b"]["verdict"]["useful"] is False and seats["b"]["verdict"]["from_points"] is True
    # on the ask's own page the same point judged the other way turns the proposals over
    tab.goto(served.url + f"/calls/{panel}")
    tab.locator("#points li.point").first.locator("button", has_text="False").click()
    expect(tab.locator("#points li.point").first).to_contain_text("judged: false")
    expect(tab.locator(".seat", has=tab.locator("h3", has_text="a")).locator("form.proposal")).to_contain_text(
        "propose: not useful")
    assert api("GET", f"/bench/panels/{panel}/points")[2]["points"][0]["verdict"]["true"] is False
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)


def luminance(css: str) -> float:
    """WCAG's relative luminance of an opaque computed colour (`rgb(r, g, b)`)."""
    r, g, b, *alpha = (float(x) for x in css[css.index("(") + 1:-1].replace("/", ",").split(","))
    assert not alpha or alpha[0] == 1, f"{css} is not opaque: its contrast depends on what is behind it"
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(ink: str, ground: str) -> float:
    hi, lo = sorted((luminance(ink), luminance(ground)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_a_marked_quote_is_readable_in_either_scheme(tab, served, scheme):
    """Dark mode showed marked quotes as light text on yellow, about 1.2:1; WCAG AA asks 4.5:1 of body text."""
    panel = Http(served.url)("POST", "/v1/chat/completions", body())[2]["bench"]["panel"]
    tab.emulate_media(color_scheme=scheme)
    tab.goto(served.url + f"/calls/{panel}")
    marks = tab.locator(".answer mark")
    expect(marks.first).to_be_visible()
    colours = marks.evaluate_all("ms => ms.map(m => [getComputedStyle(m).color, getComputedStyle(m).backgroundColor])")
    assert len(colours) == 2
    for ink, ground in colours:
        assert contrast(ink, ground) >= 4.5, (scheme, ink, ground)
