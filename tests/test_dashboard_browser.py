"""The dashboard in a real browser: Playwright drives this machine's Chrome or Chromium (Debian's chromium where
scripts/check.py installs it; never a downloaded one) through a new user's first hour, hostile model text that must
stay text, and every page against its .json twin. Screenshots of every page at 1280 and 390 px wide (and the dark
theme) go to build/screenshots/ for a reviewer to look at."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from benchwarmers.dashboard.routes import PAGES
from tests.fakes import FakeOpenAI, Reply
from tests.fakes.signin import FakeOpenRouter
from tests.helpers.browser import find_chromium
from tests.helpers.catalog import install_samples, map_endpoints
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.jobs import run_job
from tests.helpers.signin import pointed_at

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:          # the test extra is not installed
    sync_playwright = None

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sync_playwright is None,
                       reason="Playwright for Python is not installed (pyproject's test extra)"),
    pytest.mark.skipif(not CHROMIUM, reason="no Chrome or Chromium on PATH or where macOS and Windows install it: "
                                            "scripts/check.py installs Debian's chromium with apt where it can; "
                                            "these tests never download a browser"),
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"
KEY = "sk-test-browser-0123456789abcdef"
EVIL = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the whole module."""
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Watch:
    """What a page did that it must not: dialogs, requests to other origins or to injected URLs, CSP reports."""

    def __init__(self, page, origin: str):
        self.dialogs, self.foreign, self.violations = [], [], []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("request", lambda r: None if r.url.startswith(origin) and not r.url.endswith("/x")
                else self.foreign.append(r.url))
        page.on("console", lambda m: self.violations.append(m.text) if "Content Security Policy" in m.text else None)

    def clean(self) -> bool:
        return not (self.dialogs or self.foreign or self.violations)


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20000)
    yield page
    context.close()


def shoot(page, name: str, dark: bool = True) -> None:
    """The page as it is now, full length, at 1280 and 390 px wide (and 1280 in the dark theme)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")          # a sticky header would otherwise sit mid-page
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    if dark:
        page.emulate_media(color_scheme="dark")
        page.set_viewport_size({"width": 1280, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-1280-dark.png"), full_page=True)
        page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1280, "height": 900})


def arrive(page, url: str) -> None:
    """Wait until the page at `url` has loaded, its deferred scripts run: a form they take over (Ask's stream, the
    onboarding queue) submitted sooner goes the way without scripts (Ask's then waits for the whole panel, whose
    last answer the test holds: the click waited 20 s for that navigation and failed)."""
    expect(page).to_have_url(url)
    page.wait_for_load_state("load")


def visit_and_shoot(page, url: str, path: str, name: str) -> None:
    page.goto(url + path)
    shoot(page, name)


def test_a_new_users_first_hour(tab, home, make_service, isolated):
    fake = FakeOpenAI().start().set_models(["alpha-1", "beta-2", "gamma-3"]).expect_key(KEY)
    probed, answered = threading.Event(), threading.Event()                  # let go once the page has shown why
    fake.script("alpha-1", [Reply(text="ready", hold=probed)])               # its probe takes a moment
    fake.script("beta-2", [Reply(text="ready"), Reply(text="one, two, three"),   # its probe and its speed;
                           Reply(hold=answered)])                            # its answer comes last
    svc = make_service()
    url, page = svc.url, tab
    watch = Watch(page, url)
    try:
        # first run: lands on Endpoints; add one by pasting a key, checked against the fake upstream
        page.goto(url + "/")
        expect(page).to_have_url(url + "/endpoints")
        expect(page.locator("h1")).to_have_text("Endpoints")
        visit_and_shoot(page, url, "/endpoints", "endpoints-empty")
        page.select_option("#ep-api", "openai")
        page.fill("#ep-name", "hub")
        page.fill("#ep-base", fake.url)
        page.fill("#ep-key", KEY)
        page.click("text=Add endpoint")
        expect(page.locator(".flash-ok")).to_contain_text("Added endpoint hub: it serves 3 models")
        assert KEY not in page.content()
        assert json.loads((isolated.parent / "llm" / "keys.json").read_text())["hub"] == KEY

        # onboard two models and watch their progress reach done, without leaving the page
        page.click("text=onboard models")
        arrive(page, url + "/onboard")
        page.check('input[value="hub|alpha-1"]')
        page.check('input[value="hub|beta-2"]')
        page.click("text=Onboard the ticked models")
        expect(page.locator('.progress[data-key="hub|beta-2"]')).to_contain_text("queued")
        probed.set()
        for served in ("alpha-1", "beta-2"):
            expect(page.locator(f'.progress[data-key="hub|{served}"]')).to_contain_text("done")
        assert page.url == url + "/onboard"
        page.reload()
        expect(page.locator('.progress[data-key="hub|alpha-1"]')).to_contain_text("done")
        shoot(page, "onboard")

        # save a collection; the count of calls follows the ticks, and counts the referee while points are on
        page.click('nav >> text=Collections')
        page.click("text=New collection")
        page.fill("#c-name", "core")
        page.fill("#c-desc", "code review")
        page.check('input[name="members"][value="alpha-1"]')
        page.fill("#c-explore", "0")
        expect(page.locator(".live-count")).to_contain_text("One ask makes 2 calls")
        expect(page.locator(".live-count")).to_contain_text("+ the referee (after the reply)")
        page.select_option("#c-points", "off")
        expect(page.locator(".live-count")).to_contain_text("One ask makes 1 call")
        page.select_option("#c-points", "contested")
        page.check('input[name="members"][value="beta-2"]')
        expect(page.locator(".live-count")).to_contain_text("One ask makes 3 calls")
        shoot(page, "collection-new", dark=False)
        page.click("text=Save collection")
        expect(page.locator(".flash-ok")).to_contain_text("Saved collection core: one ask makes 3 calls")

        # ask it: each seat's column fills in as that seat finishes
        page.click("nav >> text=Ask")
        arrive(page, url + "/ask")
        page.fill("#ask-prompt", "Where is **the bug**?")
        page.click('#ask-form button[type="submit"]')
        alpha = page.locator('.seat[data-call]', has=page.locator("h3", has_text="alpha-1"))
        beta = page.locator('.seat[data-call]', has=page.locator("h3", has_text="beta-2"))
        expect(alpha.locator(".answer")).to_contain_text("alpha-1 says: Where is the bug?")
        expect(beta).to_have_class(re.compile("is-waiting"))                  # still thinking
        expect(alpha.locator(".answer strong")).to_have_text("the bug")        # Markdown, made safe
        answered.set()
        expect(beta.locator(".answer")).to_contain_text("beta-2 says")
        expect(page.locator("#ask-form [data-status]")).to_contain_text("2 of 2 seats answered")

        # verdicts on two seats, saved without leaving the page
        alpha.locator('input[value="yes"]').check()
        alpha.locator('textarea[name="real"]').fill("the stale cache")
        alpha.locator("form.verdict button[type=submit]").click()
        expect(alpha.locator("[data-status]")).to_have_text("Verdict saved: useful.")
        beta.locator('input[value="no"]').check()
        beta.locator('textarea[name="false"]').fill("a race that is not there")
        beta.locator("form.verdict button[type=submit]").click()
        expect(beta.locator("[data-status]")).to_have_text("Verdict saved: not useful.")
        assert page.url == url + "/ask"
        shoot(page, "ask-answers")

        # find the panel on Calls and change a verdict
        page.click("nav >> text=Calls")
        shoot(page, "calls")
        page.locator("table a").first.click()
        expect(page.locator("h1")).to_contain_text("Panel")
        alpha = page.locator(".seat", has=page.locator("h3", has_text="alpha-1"))
        expect(alpha.locator('input[value="yes"]')).to_be_checked()
        expect(alpha.locator('textarea[name="real"]')).to_have_value("the stale cache")
        shoot(page, "panel")
        alpha.locator('input[value="no"]').check()
        alpha.locator("form.verdict button[type=submit]").click()
        expect(alpha.locator("[data-status]")).to_have_text("Verdict saved: not useful (revised).")
        call = alpha.get_attribute("data-call")
        history = svc.bench.db.query("SELECT useful FROM verdicts WHERE call = ? ORDER BY id", (call,))
        assert [r["useful"] for r in history] == [1, 0]

        # create a gateway key (shown once) and revoke it
        page.click("nav >> text=Settings")
        page.fill("#k-name", "my-app")
        page.check('input[name="collections"][value="core"]')
        page.fill("#k-rpm", "30")
        page.click("text=Make key")
        secret = page.locator("#new-key").inner_text()
        assert secret.startswith("bw-")
        shoot(page, "settings-new-key", dark=False)
        page.reload()
        assert secret not in page.content()
        row = page.locator("tr", has_text="my-app")
        expect(row).to_contain_text("active")
        row.locator("summary", has_text="Revoke").click()
        row.locator('button[type="submit"]', has_text="Revoke").click()
        expect(page.locator(".flash-ok")).to_contain_text("Revoked the key my-app")
        expect(page.locator("tr", has_text="my-app")).to_contain_text("revoked")

        # the scheduler: switch it on and one job off; run the speed test now and see its chart on a model's page
        the_bench_looks_after_itself(page, url)
        # the suite: draft claims from the verdicts and accept one; run it for a model and watch it finish
        the_suite_from_the_dashboard(page, url)

        # every other page, for the reviewer
        for path, name in (("/", "home"), ("/endpoints", "endpoints"), ("/discover", "discover"), ("/models", "models"),
                           ("/models/alpha-1", "model"), ("/collections", "collections"),
                           ("/collections/core", "collection"), ("/ask", "ask"), ("/settings", "settings"),
                           ("/suite", "suite")):
            visit_and_shoot(page, url, path, name)
        assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
    finally:
        probed.set()
        answered.set()
        fake.stop()


def reload_until(page, address: str, selector: str, tries: int = 120) -> None:
    """Open `address` again until `selector` is on it (a job runs in the background; a plain reload shows it)."""
    for _ in range(tries):
        page.goto(address)
        if page.locator(selector).count():
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"{selector} never showed on {address}")


def the_bench_looks_after_itself(page, url: str) -> None:
    page.click("nav >> text=Settings")
    jobs = page.locator("#scheduler")
    expect(jobs).to_contain_text("Nothing calls a model")
    jobs.locator("button", has_text="Switch the scheduler on").click()
    expect(page.locator(".flash-ok")).to_contain_text("The scheduler is on")
    page.locator('#scheduler input[name="on"][value="catalog"]').check()      # on: it is off by default
    page.locator('#scheduler input[name="on"][value="probe"]').uncheck()
    page.fill("#at-suite", "06:45")   # past 05:59: never the random default (02:00 to 05:59)
    page.click("text=Save the jobs")
    expect(page.locator(".flash-ok")).to_contain_text("Saved: catalog on, probe off, suite at 06:45.")
    state = page.request.get(url + "/settings.json").json()["scheduler"]
    jobs_now = {j["name"]: j for j in state["jobs"]}
    assert state["enabled"] and not jobs_now["probe"]["on"] and jobs_now["catalog"]["on"]
    assert jobs_now["suite"]["at"] == "06:45" and jobs_now["probe"]["next"] is None
    expect(page.locator('#scheduler input[name="on"][value="probe"]')).not_to_be_checked()
    page.locator("#scheduler tr", has_text="weekly").locator("button", has_text="Run now").click()
    expect(page.locator(".flash-ok")).to_contain_text("Started perf")
    reload_until(page, url + "/settings", '#scheduler tr:has-text("timed 2 models") .chip-done')
    shoot(page, "settings-scheduler")
    page.locator("#scheduler tr", has_text="timed 2 models").locator("a").first.click()
    expect(page.locator("h1")).to_contain_text("perf run")
    expect(page.locator("main")).to_contain_text("alpha-1")
    shoot(page, "job-run", dark=False)
    page.goto(url + "/models/alpha-1")
    speed = page.locator("#speed")
    expect(speed.locator("svg.chart")).to_have_count(2)                    # first token, and tokens a second
    expect(speed.locator("svg.chart").first).to_have_attribute("aria-label", re.compile("first token"))
    expect(speed.locator("table")).to_contain_text("short")
    expect(page.locator("main")).to_contain_text("to first token")
    shoot(page, "model-speed")


def the_suite_from_the_dashboard(page, url: str) -> None:
    page.click("nav >> text=Suite")
    page.click("text=Draft claims from my verdicts")
    expect(page.locator(".flash-ok")).to_contain_text("Drafted 2 claim tasks")
    draft = page.locator("#drafts tr", has_text="the stale cache")
    expect(draft).to_contain_text("true")
    draft.locator("button", has_text="Accept").click()
    expect(page.locator(".flash-ok")).to_contain_text("Accepted mined-")
    expect(page.locator("#drafts tr", has_text="the stale cache")).to_have_count(0)
    page.select_option("#suite-target", "model:beta-2")
    page.fill("#suite-tasks", "claim-record-*,mined-*")
    page.click("text=Start the run")
    expect(page.locator(".flash-ok")).to_contain_text("Started the suite for beta-2")
    asked = page.locator("#open tr[data-run]", has_text="claim-record")   # beside the runs quick onboarding owes
    expect(asked).to_contain_text("beta-2")
    expect(page.locator("#open tr[data-run]", has_text="owed")).to_have_count(2)
    shoot(page, "suite-running", dark=False)
    expect(page.locator("#recent tr", has_text="beta-2")).to_contain_text("done", timeout=60000)   # script reloads
    expect(asked).to_have_count(0)
    expect(page.locator("#scores tr", has_text="beta-2")).to_contain_text("%")
    page.locator("#recent tr", has_text="beta-2").locator("a").first.click()
    expect(page.locator("h1")).to_contain_text("beta-2")
    expect(page.locator("main table tbody tr")).to_have_count(3)          # two starter claims and the accepted one
    shoot(page, "suite-run", dark=False)


def test_login_and_log_out_in_the_browser(tab, make_service):
    token = "browser-admin-token-0123456789"
    svc = make_service(admin_token=token)
    tab.goto(svc.url + "/settings")
    expect(tab.locator("h1")).to_have_text("Log in")
    shoot(tab, "login")
    tab.fill("#token", "not-the-token")
    tab.click("button:has-text('Log in')")
    expect(tab.locator(".flash-error")).to_contain_text("not the admin token")
    tab.fill("#token", token)
    tab.click("button:has-text('Log in')")
    expect(tab).to_have_url(svc.url + "/settings")
    expect(tab.locator("#server")).to_contain_text("set")
    assert token not in tab.content()
    tab.click("text=Log out")
    expect(tab.locator("h1")).to_have_text("Log in")
    tab.goto(svc.url + "/models")
    expect(tab.locator("h1")).to_have_text("Log in")


def test_a_link_local_endpoint_asks_once_more_before_it_is_sent(tab, make_service):
    """The box that allows a link-local or cloud metadata base URL asks for a confirmation; dismissed, nothing goes."""
    svc = make_service()
    posted, asked = [], []
    tab.on("request", lambda r: posted.append(r.url) if r.method == "POST" else None)
    tab.goto(svc.url + "/endpoints")
    tab.fill("#ep-name", "metal")
    tab.fill("#ep-base", "http://[fe80::1]:9/v1")
    tab.check("input[name=no_key]")
    tab.check("input[name=allow_link_local]")
    tab.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    tab.click("button:has-text('Add endpoint')")
    tab.wait_for_timeout(300)           # a dismissed dialog leaves nothing to wait for: give a submit time to show
    assert asked and "link-local" in asked[0] and not posted
    tab.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    tab.click("button:has-text('Add endpoint')")
    expect(tab.locator(".flash-error")).to_contain_text("listing its models failed")   # sent, and past the check
    assert len(asked) == 2 and posted


def test_openrouter_sign_in_round_trip_clicked_in_the_browser(tab, make_service, isolated):
    """Against a fake OpenRouter on another site (localhost, the service on 127.0.0.1), with an admin token: the
    provider sends the browser back without the session cookie, and the result still shows with no new login."""
    token = "browser-admin-token-0123456789"
    with FakeOpenRouter(host_name="localhost") as fake, \
            pointed_at("openrouter", site=fake.site, base_url=f"http://127.0.0.1:{fake.port}/api/v1"):
        fake.set_models(["or-one", "or-two"])
        fake.consent = True                    # the user approves on the provider's own page
        svc = make_service(admin_token=token)
        tab.goto(svc.url + "/endpoints")
        tab.fill("#token", token)
        tab.click("button:has-text('Log in')")
        expect(tab.locator("h1")).to_have_text("Endpoints")
        card = tab.locator("#signin")
        expect(card.locator('li[data-provider="huggingface"]')).to_contain_text("paste a key")
        shoot(tab, "endpoints-signin", dark=False)
        card.locator("button", has_text="Sign in with OpenRouter").click()
        expect(tab).to_have_url(re.compile(re.escape(fake.site + "/auth?")))
        tab.click("#authorize")
        expect(tab).to_have_url(re.compile(re.escape(svc.url + "/endpoints?signin=")))
        expect(tab.locator("h1")).to_have_text("Endpoints")                      # no second login
        expect(tab.locator("#signin-result")).to_contain_text("OpenRouter connected: endpoint openrouter serves 2")
        expect(tab.locator("main table")).to_contain_text("openrouter")
        key = fake.issued[0]
        assert key not in tab.content()
        assert json.loads((isolated.parent / "llm" / "keys.json").read_text())["openrouter"] == key
        assert [r.path for r in fake.exchanges] == ["/api/v1/auth/keys"]
        shoot(tab, "endpoints-signed-in", dark=False)
        tab.goto(svc.url + "/endpoints?paste=huggingface")                      # a provider with no sign-in
        expect(tab.locator("#ep-base")).to_have_value("https://router.huggingface.co/v1")
        expect(tab.locator("#add")).to_contain_text("has no sign-in here")


def test_discover_filters_and_onboards_in_one_click(tab, home, make_service):
    hub = FakeOpenAI().start().set_models(["qwen/qwen3-coder:free", "qwen/qwen3-coder"])
    hub.script("qwen/qwen3-coder:free", Reply(text="ready", delay=0.5))
    configure(home, {"or": (hub, "openai")}, {})
    map_endpoints(home, {"or": "openrouter"})
    install_samples(home)
    svc = make_service()
    watch = Watch(tab, svc.url)
    try:
        tab.goto(svc.url + "/discover")
        shoot(tab, "discover-all")
        tab.check('#discover-filters input[name="free"]')
        tab.fill("#d-find", "qwen3-coder")
        tab.click("#discover-filters button[type=submit]")
        expect(tab).to_have_url(re.compile(r"/discover\?free=1.*find=qwen3-coder"))
        d = tab.request.get(svc.url + "/discover.json?free=1&find=qwen3-coder").json()
        rows = tab.locator("#discovered tbody tr")
        expect(rows).to_have_count(len(d["models"]))
        for i, m in enumerate(d["models"]):
            expect(rows.nth(i)).to_contain_text(m["model"])
            expect(rows.nth(i)).to_contain_text("free")
        key = "or|qwen/qwen3-coder:free"
        route = tab.locator(".route", has=tab.locator(f'.progress[data-key="{key}"]'))
        route.locator("button", has_text="Onboard").click()
        expect(route.locator(".progress")).to_contain_text("done", timeout=30000)
        expect(route.locator("form")).to_be_hidden()
        assert "/discover?free=1" in tab.url
        tab.reload()
        expect(tab.locator(".route", has_text="or").first).to_contain_text("done")
        shoot(tab, "discover")
        models = Http(svc.url)("GET", "/bench/models")[2]["models"]
        assert [m["served"] for m in models] == ["qwen/qwen3-coder:free"]
        tab.goto(svc.url + "/onboard")                                          # the queue shows it too
        expect(tab.locator("main")).to_contain_text("qwen/qwen3-coder:free")
        assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
    finally:
        hub.stop()


def test_your_own_facts_and_roles_are_typed_and_saved_on_the_model_page(tab, home, make_service):
    fake = FakeOpenAI().start()
    configure(home, {"hub": (fake, "openai")}, {"alpha": ("hub", "alpha-1")})
    svc = make_service()
    watch = Watch(tab, svc.url)
    try:
        tab.goto(svc.url + "/models/alpha")
        yours = tab.locator("#yours")
        yours.locator("#own-context_window").fill("64000")
        yours.locator("#own-max_output").fill("8192")
        yours.locator("#own-tools").select_option("no")
        yours.locator("button", has_text="Save facts").click()
        expect(tab.locator(".flash-ok")).to_have_text("Saved your facts for alpha: context window 64,000, longest "
                                                      "answer 8,192, uses tools no.")
        facts = tab.locator("section", has_text="Facts and where they come from")
        expect(facts.locator("tr", has_text="Context window")).to_contain_text("64,000")
        expect(facts.locator("tr", has_text="Context window")).to_contain_text("override")
        expect(facts.locator("tr", has_text="Uses tools")).to_contain_text("no")
        expect(tab.locator("#own-context_window")).to_have_value("64000")
        for role in ("general", "code", "light", "vision-only", "image", "reasoning"):
            box = yours.locator(f'input[name="roles"][value="{role}"]')
            box.check() if role in ("code", "reasoning") else box.uncheck()
        yours.locator("button", has_text="Save roles").click()
        expect(tab.locator(".flash-ok")).to_have_text("Roles of alpha: code, reasoning (set by you).")
        expect(facts).to_contain_text("code, reasoning (set by you)")
        shoot(tab, "model-own-facts", dark=False)
        catalog = Http(svc.url)("GET", "/bench/models/alpha")[2]["model"]["catalog"]
        assert catalog["facts"]["context_window"] == {"value": 64000, "source": "override"}
        assert catalog["roles"] == ["code", "reasoning"] and catalog["roles_set_by"] == "user"
        assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)
    finally:
        fake.stop()


@pytest.fixture
def hostile(home, make_service):
    """Model text, a served name, a description and a note holding markup; a failed onboarding quoting it; a
    catalog model (named with markup, served by the hostile endpoint) that Discover lists with its route."""
    fake = FakeOpenAI().start().set_models([f"evil{EVIL}", "broken", f"fresh{EVIL}"])
    fake.script(f"evil{EVIL}", f"{EVIL}\n\n[click](javascript:alert(3)) ![pic](http://evil.example/x.png)")
    fake.script("broken", Reply.error(500, message=f"boom {EVIL}"))
    configure(home, {"fake": (fake, "openai")}, {"evil": ("fake", f"evil{EVIL}")},
              {"core": {"members": ["evil"], "explore": 0, "description": f"reviews {EVIL}"}})
    map_endpoints(home, {"fake": "openrouter"})
    install_samples(home, {served: {"id": served, "name": f"name {EVIL}", "release_date": "2026-11-01",
                                    "modalities": {"input": ["text"], "output": ["text"]},
                                    "cost": {"input": 0, "output": 0}, "limit": {"context": 131072}}
                           for served in (f"evil{EVIL}", f"fresh{EVIL}")})
    svc = make_service()
    api = Http(svc.url)
    bench = api("POST", "/v1/chat/completions", {"model": "bench/core",
                                                 "messages": [{"role": "user", "content": EVIL}]})[2]["bench"]
    api("POST", "/bench/verdict", {"call": bench["seats"][0]["call"], "useful": True, "note": EVIL, "real": [EVIL]})
    items = api("POST", "/bench/onboard", {"models": ["broken"], "mode": "quick"})[2]["items"]
    svc.bench.onboard_queue.wait([items[0]["id"]], 20)
    svc.bench.suite.owe("evil")                                 # an open suite run, naming the model
    api("POST", "/bench/suite/mine", {})                        # a draft claim task holding the markup
    yield svc, bench["panel"]
    fake.stop()


def test_hostile_text_stays_text_and_runs_nothing(tab, hostile):
    svc, panel = hostile
    watch = Watch(tab, svc.url)
    shown_as_text = {"/models": f"evil{EVIL}", "/models/evil": f"evil{EVIL}", "/collections": f"reviews {EVIL}",
                     "/collections/core": f"reviews {EVIL}", "/calls": EVIL, "/onboard": f"boom {EVIL}",
                     "/": EVIL, "/endpoints": "fake", "/settings": "Gateway keys", "/suite": EVIL,
                     "/discover?find=evil": f"name {EVIL}"}
    for path, text in shown_as_text.items():
        tab.goto(svc.url + path)
        expect(tab.locator("main")).to_contain_text(text)
    tab.goto(svc.url + f"/calls/{panel}")
    expect(tab.locator(".answer")).to_contain_text(EVIL)
    assert tab.locator(".answer a").count() == 0 and tab.locator(".answer img").count() == 0
    expect(tab.locator('input[name="note"]')).to_have_value(EVIL)
    tab.goto(svc.url + "/ask")                                              # and through the script's own DOM
    tab.fill("#ask-prompt", "again")
    tab.click('#ask-form button[type="submit"]')
    expect(tab.locator(".seat .answer")).to_contain_text(EVIL)
    expect(tab.locator(".seat .answer")).to_contain_text("[image: pic]")
    assert tab.locator(".seat .answer a, .seat .answer img, .seat .answer script").count() == 0
    tab.goto(svc.url + "/discover?find=fresh")                            # a discovered name, onboarded by script
    route = tab.locator(".route", has_text="fresh")
    expect(route).to_contain_text(f"fresh{EVIL}")
    route.locator("button", has_text="Onboard").click()
    expect(route.locator(".progress")).to_contain_text("done", timeout=30000)
    assert tab.locator("main script, main img").count() == 0
    assert watch.clean(), (watch.dialogs, watch.foreign, watch.violations)


def progress_keys(within) -> list:
    return within.locator(".progress").evaluate_all("els => els.map(e => e.dataset.key)")


def test_every_page_shows_what_its_json_twin_holds(tab, hostile):
    svc, panel = hostile
    url = svc.url

    def both(path: str):
        tab.goto(url + path)
        twin = "/.json" if path == "/" else path + ".json"
        data = tab.request.get(url + twin).json()
        assert "sk-" not in json.dumps(data)
        return data, tab.locator("main")

    d, main = both("/")
    for tile, key in (("endpoints", "endpoints"), ("active models", "active_models"), ("collections", "collections"),
                      ("asks", "asks")):
        expect(main.locator(".tile", has_text=tile).first.locator(".number")).to_have_text(str(d["counts"][key]))
    d, main = both("/endpoints")
    for e in d["endpoints"]:
        expect(main).to_contain_text(e["name"])
        expect(main).to_contain_text(e["base_url"])
    d, main = both("/onboard")
    keys = progress_keys(main)                    # names hold markup: read the attributes, no CSS selector
    assert all(keys.count(f'{c["endpoint"]}|{c["served"]}') == 1 for c in d["candidates"])
    d, main = both("/models")
    for m in d["models"]:
        expect(main.locator("tr", has_text=m["served"])).to_contain_text(m["status"])
    d, main = both("/models/evil")
    expect(tab.locator("h1")).to_have_text(d["model"]["alias"])
    expect(main).to_contain_text(d["model"]["served"])
    expect(main.locator("table", has_text="Seat").locator("tbody tr")).to_have_count(len(d["calls"]))
    d, main = both("/collections")
    for c in d["collections"]:
        expect(main).to_contain_text(c["description"])
        expect(main).to_contain_text(f"One ask makes {c['seats']['calls']} call")
    d, main = both("/collections/core")
    ticked = main.locator('input[name="members"]:checked')
    assert sorted(ticked.evaluate_all("els => els.map(e => e.value)")) == sorted(d["collection"]["members"])
    d, main = both("/ask")
    options = tab.locator("#ask-collection option").evaluate_all("els => els.map(e => e.value)")
    assert [c["name"] for c in d["collections"]] == [o for o in options if o]
    d, main = both("/calls")
    for item in d["items"]:
        expect(main.locator(f'a[href="/calls/{item["id"]}"]')).to_have_count(1)
    d, main = both(f"/calls/{panel}")
    for seat in d["seats"]:
        expect(main.locator(f'.seat[data-call="{seat["call"]}"] h3')).to_have_text(seat["model"])
    d, main = both("/discover")
    rows = main.locator("#discovered tbody tr")
    expect(rows).to_have_count(len(d["models"]))
    for i, m in enumerate(d["models"][:10]):
        expect(rows.nth(i)).to_contain_text(m["name"])
        keys = progress_keys(rows.nth(i))
        for r in m["routes"]:
            assert keys.count(f'{r["endpoint"]}|{r["served"]}') == (0 if r["on_bench"] and not r["item"] else 1)
    d, main = both("/settings")
    for s in d["settings"]["settings"]:
        shown = tab.locator(f'#s-{s["name"]}').input_value()
        value = s["value"]    # a yes/no setting is a true/false choice
        assert shown == ("" if value is None else json.dumps(value) if isinstance(value, bool) else str(value))
    expect(main).to_contain_text(d["server"]["data_folder"])
    expect(main.locator("#scheduler")).to_contain_text("Switch the scheduler on" if not d["scheduler"]["enabled"]
                                                       else "Switch the scheduler off")
    for job in d["scheduler"]["jobs"]:
        box = main.locator(f'#scheduler input[name="on"][value="{job["name"]}"]')
        expect(box).to_be_checked() if job["on"] else expect(box).not_to_be_checked()
        assert tab.locator(f'#at-{job["name"]}').input_value() == job["at"].split()[-1]
    d, main = both("/suite")
    options = tab.locator("#suite-target option").evaluate_all("els => els.map(e => e.value)")
    assert options == [f"model:{m}" for m in d["models"]] + [f"collection:{c}" for c in d["collections"]]
    for run in d["open"]:
        expect(main.locator(f'#open tr[data-run="{run["id"]}"]')).to_contain_text(run["status"])
    run = d["open"][0]
    d, main = both(f"/suite/runs/{run['id']}")
    expect(tab.locator("h1")).to_have_text(f"Suite run {run['id']}: {run['model']}")
    expect(main.locator("table tbody tr")).to_have_count(len(d["results"]))


def test_every_form_control_on_every_page_has_a_name(tab, hostile):
    """Every input, select, textarea and button on every page (its confirm steps opened) has an accessible name, as
    a screen reader computes it: a label, an aria-label or its own text."""
    svc, panel = hostile
    job = run_job(svc, "probe")["id"]
    run = Http(svc.url)("GET", "/bench/suite/runs")[2]["runs"][0]["id"]
    filled = {"/calls/{id}": f"/calls/{panel}", "/models/{alias}": "/models/evil", "/collections/{name}":
              "/collections/core", "/suite/runs/{id}": f"/suite/runs/{run}",
              "/settings/jobs/{id}": f"/settings/jobs/{job}"}
    nameless, seen = [], 0
    for path in [filled.get(p.path, p.path) for p in PAGES] + ["/collections/_new"]:
        assert "{" not in path, path
        tab.goto(svc.url + path)
        tab.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        controls = tab.locator("input:not([type=hidden]), select, textarea, button")
        for i in range(controls.count()):
            seen += 1
            try:
                expect(controls.nth(i)).to_have_accessible_name(re.compile(r"\w"), timeout=1000)
            except AssertionError:
                nameless.append(f"{path}: {controls.nth(i).evaluate('e => e.outerHTML')[:200]}")
    assert seen > 100 and not nameless, "\n".join(nameless)


def test_hugging_face_sign_in_with_your_own_app_clicked_in_the_browser(tab, make_service, isolated):
    """Settings' "Use your own app" takes a client id and shows the redirect URL to register; the Endpoints page
    then signs in with Hugging Face (PKCE to the fixed callback, against a fake on another site) and keeps the
    token and its refresh token in keys.json only."""
    from tests.fakes.appsignin import FakeHuggingFace
    token = "browser-admin-token-0123456789"
    with FakeHuggingFace(host_name="localhost") as fake, \
            pointed_at("huggingface", authorize_url=fake.root + "/oauth/authorize",
                       token_url=f"http://127.0.0.1:{fake.port}/oauth/token",
                       base_url=f"http://127.0.0.1:{fake.port}/v1"):
        fake.set_models(["Qwen/Qwen3-32B"])
        svc = make_service(admin_token=token)
        tab.goto(svc.url + "/settings#apps")
        tab.fill("#token", token)
        tab.click("button:has-text('Log in')")
        card = tab.locator("#apps")
        expect(card.locator("#callback-huggingface")).to_have_text(svc.url + "/connect/huggingface/callback")
        form = card.locator('form[data-provider="huggingface"]')
        form.locator("#app-huggingface").fill("my-app")
        form.locator("button", has_text="Use this app").click()
        expect(tab.locator(".flash-ok")).to_contain_text("Hugging Face now signs in with your app")
        shoot(tab, "settings-own-app", dark=False)
        tab.goto(svc.url + "/endpoints")
        row = tab.locator('#signin li[data-provider="huggingface"]')
        expect(row).to_contain_text("sign in")
        row.locator("button", has_text="Sign in with Hugging Face").click()
        expect(tab).to_have_url(re.compile(re.escape(svc.url + "/endpoints?signin=")))
        expect(tab.locator("#signin-result")).to_contain_text("Hugging Face connected: endpoint huggingface serves 1")
        stored = json.loads((isolated.parent / "llm" / "keys.json").read_text())
        assert stored["huggingface"] == fake.issued[0] and stored["huggingface.refresh"]
        assert fake.issued[0] not in tab.content()
        shoot(tab, "endpoints-own-app-signed-in", dark=False)
