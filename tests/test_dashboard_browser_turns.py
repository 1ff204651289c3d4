"""The Ask page as a conversation in a real browser (issue 42): after the answers a follow-up box asks the same seats
again, each going on with its own thread (what each model was sent, from the fake's log); "Continue with this seat
only" asks one seat; the earlier turns stay above; the ask's own page shows the conversation's turns."""
from __future__ import annotations

import re

import pytest

from tests.fakes import FakeOpenAI
from tests.helpers.data import configure, write
from tests.test_dashboard_browser import browser, pytestmark, shoot, tab  # noqa: F401 (fixtures, skip marks)
from tests.test_dashboard_browser_live import ask_on_page, column as live_column

try:
    from playwright.sync_api import expect
except ImportError:          # the module is skipped then (pytestmark)
    expect = None


@pytest.fixture
def two(home, make_service):
    """core = a and b, each echoing what it was asked last ("m-a says: ...")."""
    fake = FakeOpenAI().start()
    configure(home, {"remote": (fake, "openai")}, {"a": ("remote", "m-a"), "b": ("remote", "m-b")},
              {"core": {"members": ["a", "b"], "explore": 0}})
    write(home, "settings.json", {"stream_seats": "none"})
    svc = make_service()
    yield svc, fake
    fake.stop()


def sent(fake, model: str) -> list:
    """The messages each request to `model` carried, in order, as (role, text)."""
    out = []
    for r in list(fake.requests):
        if "/chat/completions" in r.path and r.body.get("model") == model:
            out.append([(m["role"], m["content"] if isinstance(m["content"], str) else
                         "".join(p.get("text", "") for p in m["content"])) for m in r.body["messages"]])
    return out


def column(page, model: str):
    return live_column(page, model, "#answers")


def test_follow_up_each_seat_its_own_thread_then_one_seat_only(tab, two):
    svc, fake = two
    page = tab
    ask_on_page(page, svc.url, "Where is the race?")
    expect(page.locator("#ask-form [data-status]")).to_contain_text("2 of 2 seats answered")
    follow = page.locator("#follow-form")
    expect(follow).to_be_visible()
    # every seat goes on with its own thread
    follow.locator("textarea").fill("And the fix?")
    follow.locator('button[type="submit"]').click()
    expect(follow.locator("[data-status]")).to_contain_text("2 of 2 seats answered")
    expect(page.locator("#turns .turn")).to_have_count(1)
    expect(page.locator("#turns .turn h3").first).to_have_text("You asked: Where is the race?")
    expect(page.locator("#turns .turn .seat")).to_have_count(2)                  # the first turn's columns kept
    expect(page.locator("#turns .turn [data-retry]")).to_have_count(0)           # no controls on an old turn
    expect(column(page, "a").locator(".answer")).to_contain_text("m-a says: And the fix?")
    for model, other in (("m-a", "m-b"), ("m-b", "m-a")):
        second = sent(fake, model)[1]
        assert [r for r, _ in second] == ["user", "assistant", "user"]
        assert second[1][1] == f"{model} says: Where is the race?"                 # its own answer, not the other's
        assert other not in second[1][1] and "## Seat" not in second[1][1]
    shoot(page, "ask-follow-up", dark=False)
    # one seat only: b goes on, a is not asked
    column(page, "b").locator("[data-only]").click()
    expect(follow.locator("[data-only-note]")).to_contain_text("Only seat 2 (b) goes on.")
    expect(follow.locator('button[type="submit"]')).to_have_text("Ask seat 2 only")
    follow.locator("textarea").fill("Only you: how sure?")
    follow.locator('button[type="submit"]').click()
    expect(follow.locator("[data-status]")).to_contain_text("1 of 1 seat")
    expect(page.locator("#answers .seat")).to_have_count(1)
    expect(column(page, "b").locator(".answer")).to_contain_text("m-b says: Only you: how sure?")
    assert len(sent(fake, "m-a")) == 2 and len(sent(fake, "m-b")) == 3
    assert [t for _, t in sent(fake, "m-b")[2]][-2:] == ["m-b says: And the fix?", "Only you: how sure?"]
    expect(page.locator("#turns .turn")).to_have_count(2)
    # the ask's own page: the conversation's turns
    page.locator("#answers .panel-link").click()
    turns = page.locator("#conversation li")
    expect(turns).to_have_count(3)
    expect(turns.nth(0)).to_contain_text("Where is the race?")
    expect(turns.nth(2)).to_contain_text("Only you: how sure?")
    expect(turns.nth(2)).to_have_class(re.compile("current"))
    shoot(page, "call-conversation", dark=False)
    # a new ask from the form above starts a new conversation
    ask_on_page(page, svc.url, "Something else")
    expect(page.locator("#ask-form [data-status]")).to_contain_text("2 of 2 seats answered")
    assert sent(fake, "m-a")[-1] == [("user", "Something else")]
