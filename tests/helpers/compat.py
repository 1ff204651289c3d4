"""The compat tests' panel: fake upstreams of three protocols behind a running service, and checks of a reply."""
from __future__ import annotations

import json
import re
import threading
import urllib.request
from typing import Callable, Iterable, Iterator

import pytest

from tests.helpers.data import configure, write
from tests.fakes import FakeAnthropic, FakeGemini, FakeOpenAI, Reply

# Seat order is fixed: three members (one per provider protocol), then the one explore candidate.
MEMBERS = {"alpha": ("oa", "gpt-alpha"), "claude": ("an", "claude-x"), "gem": ("gm", "gemini-x")}
EXPLORE = {"scout": ("oa", "gpt-scout")}
SEATS = [("alpha", "member"), ("claude", "member"), ("gem", "member"), ("scout", "explore")]
ADMIN = "admin-token-" + "x" * 20


class Panel:
    """The started fakes and service; `fail_all()` makes every seat's upstream answer 500."""

    def __init__(self, service, fakes: dict, home):
        self.service, self.fakes, self.home = service, fakes, home
        self.url = service.url

    def hold_first_seat(self, keepalive: float = 0.05) -> threading.Event:
        """Seat 1 stays out until the test sets the event returned, while keep-alives go out often: streams must
        carry both. (A delay instead would be a race on a busy machine.)"""
        write(self.home, "settings.json", {"keepalive_seconds": keepalive})
        gate = threading.Event()
        self.fakes["oa"].script("gpt-alpha", Reply(hold=gate))
        return gate

    def fail_all(self, status: int = 500) -> None:
        for fake in self.fakes.values():
            fake.script("*", Reply.error(status, "upstream is down"))

    def script_all(self, reply) -> None:
        for fake in self.fakes.values():
            fake.script("*", reply)


def until_seen(gate: threading.Event, items: Iterable, text_of: Callable, seats=(2,)) -> Iterator:
    """`items` as they stream in; `gate` is set once each of `seats` has shown in their text (text_of(item))."""
    text = ""
    try:
        for item in items:
            text += text_of(item) or ""
            if all(f"## Seat {n}" in text for n in seats):
                gate.set()
            yield item
    finally:
        gate.set()


def start_panel(home, make_service, **service_kw) -> tuple[Panel, list]:
    """Fakes for OpenAI, Anthropic and Gemini; collection `core` seats alpha, claude, gem and explores scout; mixer
    (gpt-alpha too, ad hoc, so never a seat) writes its merges."""
    fakes = {"oa": FakeOpenAI().start(), "an": FakeAnthropic().start(), "gm": FakeGemini().start()}
    apis = {"oa": "openai", "an": "anthropic", "gm": "gemini"}
    mixer = {"mixer": {"endpoint": "oa", "served": "gpt-alpha", "ad_hoc": True, "facts": {}}}   # merges, never a seat
    configure(home, {name: (fake, apis[name]) for name, fake in fakes.items()}, {**MEMBERS, **EXPLORE, **mixer},
              {"core": {"members": list(MEMBERS), "explore": 1, "merge_model": "mixer"},
               "spare": {"members": ["alpha"], "explore": 0}})
    return Panel(make_service(**service_kw), fakes, home), list(fakes.values())


@pytest.fixture
def panel(home, make_service):
    p, fakes = start_panel(home, make_service)
    yield p
    for fake in fakes:
        fake.stop()


@pytest.fixture
def keyed_panel(home, make_service):
    """The panel behind an admin token, and a gateway key for `core` made through POST /bench/keys."""
    p, fakes = start_panel(home, make_service, admin_token=ADMIN)
    req = urllib.request.Request(p.url + "/bench/keys", json.dumps({"name": "app", "collections": ["core"]}).encode(),
                                 {"Content-Type": "application/json", "Authorization": "Bearer " + ADMIN})
    with urllib.request.urlopen(req, timeout=10) as resp:
        key = json.loads(resp.read())["key"]
    yield p, key
    for fake in fakes:
        fake.stop()


def assert_every_seat(text: str, prompt: str, streamed: bool = False) -> None:
    """Every seat's heading once and each seat's echoed answer of `prompt`; a whole reply keeps seat order,
    a stream has them in the order the seats finished."""
    headings = re.findall(r"^## Seat (\d+) · (\S+) · (\w+)", text, flags=re.M)
    got = [(int(n), m, k) for n, m, k in headings]
    want = [(i + 1, m, k) for i, (m, k) in enumerate(SEATS)]
    assert (sorted(got) if streamed else got) == want, text
    for alias, _ in SEATS:
        served = {**MEMBERS, **EXPLORE}[alias][1]
        assert f"{served} says: {prompt}" in text, (alias, text)


def assert_bench(bench: dict, mode: str = "panel") -> None:
    """The `bench` data object: collection, panel id, every seat ok, the mode."""
    assert bench["collection"] == "core" and bench["panel"].startswith("p_"), bench
    assert bench["mode"] == mode
    assert [(s["seat"], s["model"], s["kind"], s["status"]) for s in bench["seats"]] == \
        [(i + 1, m, k, "ok") for i, (m, k) in enumerate(SEATS)]
    assert all(s["answer"] and s["call"] for s in bench["seats"])
    if mode == "merged":
        assert bench["merge"]["model"] == "mixer" and bench["merge"]["status"] == "ok"


def assert_merged(text: str) -> None:
    """A merged answer is the merge model's own text, not the seat blocks."""
    assert "gpt-alpha says:" in text and "## Seat" not in text, text
