"""Real bugs from the Suite page in a real browser: with no real-bug task yet it offers "Fetch N real bugs from M
public repositories" and says what leaves the machine; the click starts the fetch, the page follows its progress
and reloads to list each task with its project, fix and licence. The shipped picks and the forge stand replaced by
the picks of two repositories made here and a mirror of their files on 127.0.0.1 (fetch.use_for_tests)."""
from __future__ import annotations

import shutil

import pytest

from benchwarmers.suite import fetch
from tests.helpers.mirror import Mirror, made_picks, raw_files, write_picks
from tests.test_dashboard_browser import Watch, browser, pytestmark, shoot, tab  # noqa: F401  (fixtures, marks)

try:
    from playwright.sync_api import expect
except ImportError:          # skipped by pytestmark
    expect = None

pytestmark = [*pytestmark, pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")]


@pytest.fixture
def mirror(tmp_path):
    picks, clones = made_picks(tmp_path / "repos")
    with Mirror(raw_files(tmp_path / "raw", picks, clones)) as served:
        fetch.use_for_tests(write_picks(tmp_path / "picks.json", picks), served.url)
        try:
            yield served, picks
        finally:
            fetch.use_for_tests(None)


def test_the_suite_page_offers_the_real_bugs_and_fetches_them(tab, home, make_service, mirror):
    served, picks = mirror
    svc = make_service()
    watch = Watch(tab, svc.url)
    tab.goto(svc.url + "/suite")
    card = tab.locator("#real")
    expect(card).to_contain_text("No real-bug task yet")
    expect(card).to_contain_text(f"What leaves this machine: 4 requests to {served.url}")
    expect(card).to_contain_text("Nothing of yours is sent")
    button = card.locator("button", has_text="Fetch 2 real bugs from 2 public repositories")
    expect(button).to_be_visible()
    shoot(tab, "suite-real-bugs-offer", dark=False)
    served.hold.clear()                                   # the fetch waits on its first file while the page looks
    button.click()
    expect(tab.locator(".flash-ok")).to_contain_text(f"Fetching 2 real bugs from {served.url}")
    expect(card.locator("[data-follow-fetch]")).to_contain_text("0 of 2 picks")
    expect(card.locator("button", has_text="Fetch")).to_have_count(0)    # no second fetch offered while one runs
    shoot(tab, "suite-real-bugs-fetching", dark=False)
    served.hold.set()
    expect(card).to_contain_text("Last fetch: done 2 tasks written", timeout=30000)     # suite.js reloads at the end
    for pick in picks:
        row = card.locator("tr", has_text=fetch.task_id(pick))
        expect(row).to_contain_text(pick["repo"])
        expect(row).to_contain_text(pick["commit"][:10])
        expect(row).to_contain_text("MIT")
        expect(row.locator("a", has_text=pick["commit"][:10])).to_have_attribute(
            "href", f"https://github.com/{pick['repo']}/commit/{pick['commit']}")
    expect(card.locator("button", has_text="Fetch")).to_have_count(0)    # nothing left to fetch
    shoot(tab, "suite-real-bugs", dark=False)
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
