"""The Ask page and an ask's page in a real browser with a slow local model beside fast ones (tests/fakes/slow.py):
each waiting seat counts its seconds, the panel answers at its members plus the grace with the slow seat still
running, its late answer fills its column with a verdict form, a long answer folds with "Show all", "Save all
verdicts" saves every column judged, and an ask that was only a test is set aside."""
from __future__ import annotations

import re
import threading

import pytest

from tests.fakes import FakeOpenAI, Reply, SlowModel
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.test_dashboard_browser import browser, pytestmark, shoot, tab  # noqa: F401 (fixtures, skip marks)

try:
    from playwright.sync_api import expect
except ImportError:          # the module is skipped then (pytestmark)
    expect = None

LONG = "\n\n".join(f"Paragraph {n}: the cache is read before the lock is taken, so a reader may see a stale value."
                   for n in range(1, 90))


@pytest.fixture
def slow_bench(home, make_service):
    """core = a (a long answer), b; the explore seat goes to s, a local model held until the test lets it go."""
    fast = FakeOpenAI().start()
    gate = threading.Event()
    slow = SlowModel(first_byte=0.05, tokens_per_second=200, length=30, hold=gate).start()
    fast.script("m-a", Reply(text=LONG))
    configure(home, {"fast": (fast, "openai"), "local": (slow, "openai")},
              {"a": ("fast", "m-a"), "b": ("fast", "m-b"), "s": ("local", "llama")},
              {"core": {"members": ["a", "b"], "explore": 1}})
    write(home, "settings.json", {"explore_grace_seconds": 1})
    svc = make_service()
    yield svc, gate
    gate.set()
    slow.stop()
    fast.stop()


def test_asking_with_a_slow_model_timers_folding_save_all_and_set_aside(tab, slow_bench):
    svc, gate = slow_bench
    url, page = svc.url, tab
    page.goto(url + "/ask")
    page.fill("#ask-prompt", "Where is the race?")
    page.click('#ask-form button[type="submit"]')
    column = lambda model: page.locator('.seat[data-call]', has=page.locator("h3", has_text=re.compile(f"^{model}$")))
    a, b, s = column("a"), column("b"), column("s")
    expect(s.locator(".elapsed")).to_have_text(re.compile(r"^\d+ s$"))           # it counts while it thinks
    expect(page.locator("#ask-form [data-status]")).to_contain_text("2 of 3 seats answered")
    expect(s).to_have_class(re.compile("is-running"))
    expect(s.locator(".answer")).to_contain_text("Still running")
    expect(s.locator(".seat-meta")).to_contain_text("still running")
    # a long answer folds to a screen, the verdict form right under it
    expect(a.locator(".answer")).to_have_class(re.compile("folded"))
    assert a.locator(".answer").evaluate("el => el.clientHeight") <= 500
    a.locator("button.show-all").click()
    expect(a.locator(".answer")).not_to_have_class(re.compile("folded"))
    expect(b.locator("button.show-all")).to_have_count(0)                         # a short one does not fold
    shoot(page, "ask-slow-running", dark=False)
    # the local model answers after the panel replied: its column fills in, with its verdict form
    gate.set()
    expect(s.locator(".seat-meta")).to_contain_text("answered after the panel replied", timeout=30000)
    expect(s.locator(".answer")).to_contain_text("tok tok")
    expect(s.locator("form.verdict")).to_be_visible()
    # save all: every column with a choice made, in one click
    a.locator('input[value="yes"]').check()
    b.locator('input[value="no"]').check()
    s.locator('input[value="yes"]').check()
    page.click("button[data-save-all]")
    expect(page.locator("[data-save-all-box] [data-status]")).to_have_text("3 of 3 verdicts saved.")
    api = Http(url)
    calls = {c["model"]: c for c in api("GET", "/bench/calls?collection=core")[2]["calls"]}
    assert [v["useful"] for v in api("GET", f"/bench/calls/{calls['s']['id']}")[2]["verdicts"]] == [True]
    assert [v["useful"] for v in api("GET", f"/bench/calls/{calls['b']['id']}")[2]["verdicts"]] == [False]
    shoot(page, "ask-slow-answered", dark=False)

    # a second ask, only a test: set aside on its own page, it stops waiting for a verdict
    page.fill("#ask-prompt", "just trying")
    page.click('#ask-form button[type="submit"]')
    expect(page.locator("#ask-form [data-status]")).to_contain_text("seats answered")
    waiting = api("GET", "/bench/pending")[2]["total"]
    assert waiting >= 2
    page.click("text=Open this ask on its own page")
    page.click("text=Set aside: only a test")
    expect(page.locator(".flash-ok")).to_contain_text("Set aside: its answers no longer wait for a verdict")
    expect(page.locator("[data-save-all-box]")).to_contain_text("Set aside as only a test")
    assert api("GET", "/bench/pending")[2]["total"] < waiting
    shoot(page, "call-set-aside", dark=False)
