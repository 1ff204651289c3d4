"""The Ask page's live columns in a real browser: a seat whose model writes slowly (a fake streaming a word every
tenth of a second) fills its column as it writes, with its timer and token count, while a fast seat is done; its
Markdown answer replaces the plain text when it ends."""
from __future__ import annotations

import re

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.helpers.data import configure, write
from tests.test_dashboard_browser import arrive, browser, pytestmark, shoot, tab  # noqa: F401 (fixtures, skip marks)

try:
    from playwright.sync_api import expect
except ImportError:          # the module is skipped then (pytestmark)
    expect = None

SLOW = "The **race** is in the cache: " + " ".join(f"word{n}" for n in range(1, 41)) + "."


@pytest.fixture
def live_bench(home, make_service):
    """core = w (writes a word every 0.1 s, remote: whole unless shown live) and f (fast)."""
    fake = FakeOpenAI().start()
    fake.script("m-w", Reply(text=SLOW, chunk_delay=0.1))
    fake.script("m-f", Reply(text="Fast and **done**."))
    configure(home, {"remote": (fake, "openai")}, {"w": ("remote", "m-w"), "f": ("remote", "m-f")},
              {"core": {"members": ["w", "f"], "explore": 0}})
    write(home, "settings.json", {"stream_seats": "none"})     # as for a remote provider: whole unless shown live
    svc = make_service()
    yield svc, fake
    fake.stop()


def column(page, model: str, where: str = ""):
    """The column of `model`'s seat (`where`: within this selector, e.g. the answers on show)."""
    return page.locator(f'{where} .seat[data-call]'.strip(), has=page.locator("h3", has_text=re.compile(f"^{model}$")))


def ask_on_page(page, url: str, prompt: str) -> None:
    """On the Ask page, with its script running: ask the first collection `prompt`."""
    page.goto(url + "/ask")
    arrive(page, url + "/ask")
    page.fill("#ask-prompt", prompt)
    page.click('#ask-form button[type="submit"]')


def test_a_seat_fills_its_column_as_its_model_writes(tab, live_bench):
    svc, fake = live_bench
    page = tab
    ask_on_page(page, svc.url, "Where is the race?")
    w, f = column(page, "w"), column(page, "f")
    expect(w).to_have_class(re.compile("is-writing"))
    expect(w.locator(".live-text")).to_contain_text("word3")
    expect(w.locator(".live-text")).not_to_contain_text("word40")          # still writing: part of it shown
    expect(w.locator(".seat-meta")).to_contain_text("writing")
    expect(w.locator(".seat-meta .tokens")).to_have_text(re.compile(r"^ · \d+ tokens$"))
    expect(w.locator(".elapsed")).to_have_text(re.compile(r"^\d+ s$"))     # its timer runs while it writes
    expect(f.locator(".answer strong")).to_have_text("done")              # the fast seat is done meanwhile
    first = int(re.search(r"\d+", w.locator(".seat-meta .tokens").inner_text())[0])
    shoot(page, "ask-live-writing", dark=False)
    expect(w.locator(".answer strong")).to_have_text("race", timeout=20000)   # its Markdown, once it is done
    expect(w.locator(".live-text")).to_have_count(0)
    expect(w).not_to_have_class(re.compile("is-writing"))
    expect(w.locator(".seat-meta")).to_contain_text("answered")
    last = int(re.search(r"\d+", w.locator(".seat-meta .tokens").inner_text())[0])
    assert last > first
    expect(page.locator("#ask-form [data-status]")).to_contain_text("2 of 2 seats answered")
    asked = [r.body for r in list(fake.requests) if "/chat/completions" in r.path]
    assert asked and all(b.get("stream") for b in asked)          # shown live: every seat asked streamed, remote or not


@pytest.fixture
def clip_tab(browser, live_bench):
    """A tab that may read what it copied (the clipboard permissions granted for the service's origin)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.set_default_timeout(20000)
    yield page
    context.close()


def test_stop_retry_and_copy_a_column(clip_tab, live_bench):
    svc, fake = live_bench
    page = clip_tab
    ask_on_page(page, svc.url, "Where is the race?")
    w, f = column(page, "w"), column(page, "f")
    expect(w.locator(".live-text")).to_contain_text("word3")
    expect(f.locator("[data-stop]")).to_be_hidden()                 # done: nothing to stop, something to retry
    expect(f.locator("[data-retry]")).to_be_visible()
    stopped_call = w.get_attribute("data-call")
    w.locator("[data-stop]").click()
    expect(w.locator(".seat-meta")).to_contain_text("stopped")
    expect(w.locator(".answer")).to_contain_text("word3")          # what it wrote before it stopped stays
    expect(w.locator(".answer")).to_contain_text("Stopped: stopped by the user")
    expect(page.locator("#ask-form [data-status]")).to_contain_text("1 of 2 seats answered")
    # copy: the answer's Markdown as the model wrote it
    f.locator("[data-copy]").click()
    expect(f.locator("[data-copy]")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "Fast and **done**."
    # retry the stopped seat: a fresh column in its place, written live again, to the end this time
    w.locator("[data-retry]").click()
    expect(w.locator(".live-text")).to_contain_text("word3")
    expect(w.locator(".answer strong")).to_have_text("race", timeout=20000)
    expect(w.locator("[data-seat-status]")).to_contain_text("Asked again")
    expect(w.locator("[data-seat-status]")).to_contain_text("points (and a merged answer) are not made again")
    new_call = w.get_attribute("data-call")
    assert new_call != stopped_call
    shoot(page, "ask-live-retried", dark=False)
    # the record: the retry holds the seat, the stopped call is kept beside it
    panel = page.locator(".panel-link").get_attribute("href")
    page.goto(svc.url + panel)
    expect(page.locator(".seats")).to_contain_text("word40")
    d = page.evaluate(f"fetch('{panel}.json', {{headers: {{Accept: 'application/json'}}}}).then(r => r.json())")
    seats = {s["model"]: s for s in d["seats"]}
    assert seats["w"]["call"] == new_call and seats["w"]["retry_of"] == stopped_call and seats["w"]["status"] == "ok"
    assert [(s["call"], s["status"]) for s in d["replaced"]] == [(stopped_call, "stopped")]
