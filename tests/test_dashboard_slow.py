"""The dashboard and the small faults of the first hour with a slow model, without a browser: asks set aside as
only tests, advice in the page's words, the loopback note with Require keys, onboarding rows per endpoint, the
model page's Measure speed now and owed suite runs, cut seats on the ask's page, the probe's small cap, the vision
purpose, failover text, stale provider resets, and bench ask cut short by BENCHWARMERS_TIMEOUT."""
from __future__ import annotations

import threading
import time

import pytest

from benchwarmers.dashboard.pagewords import for_page
from tests.fakes import FakeOpenAI, Reply, SlowModel
from tests.helpers.dashboard import Session
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.panel import body, wait_for


@pytest.fixture
def fast():
    f = FakeOpenAI().start()
    yield f
    f.stop()


def two_seats(home, fake, **extra) -> None:
    configure(home, {"fast": (fake, "openai")}, {"a": ("fast", "m-a"), "b": ("fast", "m-b"), **extra},
              {"core": {"members": ["a", "b"], "explore": 0}})


# ---- set aside ------------------------------------------------------------------------------------

def test_an_ask_set_aside_stops_waiting_for_a_verdict_and_can_come_back(home, fast, make_service):
    two_seats(home, fast)
    svc = make_service()
    api = Http(svc.url)
    panel = api("POST", "/v1/chat/completions", body())[2]["bench"]["panel"]
    other = api("POST", "/v1/chat/completions", body(content="a real one"))[2]["bench"]["panel"]
    assert api("GET", "/bench/pending")[2]["total"] == 4
    status, _, d = api("POST", f"/bench/history/{panel}/aside", {"aside": True})
    assert status == 200 and d == {"id": panel, "set_aside": True}
    pending = api("GET", "/bench/pending")[2]
    assert pending["total"] == 2 and {p["panel"] for p in pending["pending"]} == {other}
    missing = api("GET", "/bench/history?verdict=missing")[2]
    assert [i["id"] for i in missing["items"]] == [other]
    assert api("GET", f"/bench/history/{panel}")[2]["set_aside"] > 0
    s = Session(svc.url)
    page = s.get(f"/calls/{panel}")[2]
    assert "Set aside as only a test" in page and "Bring it back" in page
    assert s.form("/calls/aside", {"id": panel, "aside": "0", "back": f"/calls/{panel}"})[0] == 303
    assert api("GET", "/bench/pending")[2]["total"] == 4
    assert "Set aside: only a test" in s.get(f"/calls/{panel}")[2]
    assert 'data-save-all hidden>Save all verdicts' in s.get(f"/calls/{panel}")[2]
    assert api("POST", "/bench/history/p_nosuchpanel/aside", {"aside": True})[0] == 404
    assert api("POST", f"/bench/history/{panel}/aside", {"aside": "yes"})[0] == 400


def test_a_cut_seat_says_so_on_the_asks_page(home, fast, make_service):
    two_seats(home, fast)
    fast.script("m-b", Reply(finish="length"))
    svc = make_service()
    data = Http(svc.url)("POST", "/v1/chat/completions", body(max_tokens=64))[2]
    assert "## Seat 2 · b · member · cut at 64 tokens" in data["choices"][0]["message"]["content"]
    page = Session(svc.url).get(f"/calls/{data['bench']['panel']}")[2]
    assert "cut at 64 tokens" in page and 'class="chip chip-cut"' in page and "data-fold" in page


# ---- words for the page ---------------------------------------------------------------------------

def test_the_apis_command_line_advice_is_said_for_the_page(home, fast, make_service):
    svc = make_service()
    s = Session(svc.url)
    status, headers, _ = s.form("/endpoints/add", {"api": "openai", "name": "local", "base_url": fast.url, "key": "sk-x",
                                               "no_key": "1"})
    page = s.get(headers["location"])[2]
    assert "tick &#x27;No key: a local server&#x27;" in page and "--no-key" not in page
    said = for_page("No key for endpoint 'x'. `bench endpoint add x --base URL` prompts for one (or --key-stdin); "
                    "set BENCH_KEY_X; or pass --no-key for a local server.")
    assert said == ("No key for endpoint 'x'. Paste it in the Key field (or set BENCH_KEY_X where the service "
                    "starts), or tick 'No key: a local server' for a local server.")
    assert for_page("The alias 'a' is taken. Pick another with --alias.") == \
        "The alias 'a' is taken. Type another in the Alias field."


def test_keys_not_enforced_on_loopback_is_a_note_with_one_click_to_require_them(home, fast, make_service):
    svc = make_service()
    s = Session(svc.url)
    page = s.get("/settings")[2]
    assert "flash-info" in page and "Require keys" in page and "flash flash-error" not in page
    assert s.form("/settings/values", {"require_keys": "true"})[0] == 303
    assert Http(svc.url)("GET", "/bench/status")[2]["gateway_keys"]["enforced"] is True
    assert Http(svc.url)("POST", "/v1/chat/completions", body())[0] == 401


def test_collection_snippets_have_short_lines(home, fast, make_service):
    two_seats(home, fast)
    page = Session(make_service().url).get("/collections")[2]
    snippets = page.split('<div class="snippet">')[1:]
    assert len(snippets) == 3
    for block in snippets:
        text = block.split("<pre", 1)[1].split(">", 1)[1].split("</pre>")[0]
        assert max(len(line) for line in text.splitlines()) <= 80, text


# ---- onboarding -----------------------------------------------------------------------------------

def test_onboarding_rows_are_per_endpoint_and_take_an_alias(home, fast, make_service):
    other = FakeOpenAI().start()
    try:
        fast.set_models(["shared", "mine"])
        other.set_models(["shared"])
        configure(home, {"one": (fast, "openai"), "two": (other, "openai")}, {}, {})
        svc = make_service()
        s = Session(svc.url)
        fast.script("shared", Reply.error(500, "one is broken"))
        status, _, _ = s.form("/onboard", [("pick", "one|shared"), ("alias:one|shared", ""),
                                           ("pick", "one|mine"), ("alias:one|mine", "my-pick"), ("mode", "quick")])
        assert status == 303
        api = Http(svc.url)
        wait_for(lambda: all(i["state"] in ("done", "failed") for i in api("GET", "/bench/onboard")[2]["items"]))
        d = s.json("/onboard.json")
        states = {(c["endpoint"], c["served"]): (c["item"] or {}).get("state") for c in d["candidates"]}
        assert states[("one", "shared")] == "failed" and states[("two", "shared")] is None   # not the other's
        assert "my-pick" in api("GET", "/bench/models")[2]["models"][0]["alias"] or \
            any(m["alias"] == "my-pick" for m in api("GET", "/bench/models")[2]["models"])
        page = s.get("/onboard")[2]
        assert 'data-select-all="pick"' in page and 'name="alias:two|shared"' in page
        recent = page.split("Recent onboarding")[1]
        assert 'class="progress"' in recent and 'data-state="failed"' in recent
    finally:
        other.stop()


def test_a_model_queued_without_an_endpoint_shows_on_the_row_of_the_endpoint_found(home, fast, make_service):
    other = FakeOpenAI().start()        # the README's form: bench onboard NAME --alias X --wait (no --endpoint)
    try:
        fast.set_models(["shared"])
        other.set_models([])
        configure(home, {"one": (fast, "openai"), "two": (other, "openai")}, {}, {})
        svc = make_service()
        api, s = Http(svc.url), Session(svc.url)
        held = threading.Event()
        fast.script("shared", Reply(hold=held))
        item = api("POST", "/bench/onboard", {"models": ["shared"], "alias": "sh", "mode": "quick"})[2]["items"][0]

        def rows() -> dict:
            return {(c["endpoint"], c["served"]): (c["item"] or {}).get("state")
                    for c in s.json("/onboard.json")["candidates"]}
        assert rows() in ({("one", "shared"): "queued"}, {("one", "shared"): "probing"})
        wait_for(lambda: api("GET", f"/bench/onboard/{item['id']}")[2]["state"] == "probing")
        assert api("GET", f"/bench/onboard/{item['id']}")[2]["endpoint"] == "one"     # the item names it now
        other.set_models(["shared"])                  # the other endpoint serves the same name from now on
        assert rows() == {("one", "shared"): "probing", ("two", "shared"): None}
        held.set()
        wait_for(lambda: api("GET", f"/bench/onboard/{item['id']}")[2]["state"] == "done")
        assert rows() == {("one", "shared"): "done", ("two", "shared"): None}
        page = s.get("/onboard")[2]
        two = page.split('data-key="two|shared"')[1].split("</td>")[0]
        assert "not on the bench" in two and "done" not in two
    finally:
        other.stop()


def test_an_item_of_an_older_record_without_an_endpoint_goes_where_the_queue_finds_it():
    from benchwarmers.dashboard.pages.onboard import latest_items
    item = {"id": 1, "endpoint": None, "served": "shared", "model": None, "state": "queued"}
    both = [{"endpoint": "one", "served": "shared"}, {"endpoint": "two", "served": "shared"}]
    assert latest_items([item], both[:1], {}) == {("one", "shared"): item}         # the one endpoint serving it
    assert latest_items([item], both, {}) == {}                     # several: it fails saying so, on no one's row
    done = {**item, "state": "done", "model": "sh"}
    assert latest_items([done], both, {"sh": "two"}) == {("two", "shared"): done}  # where its model is


# ---- a model's page -------------------------------------------------------------------------------

def test_measure_speed_now_runs_the_perf_job_for_that_model_alone(home, fast, make_service):
    two_seats(home, fast)
    svc = make_service()
    s = Session(svc.url)
    page = s.get("/models/a")[2]
    assert "Measure speed now" in page
    status, headers, _ = s.form("/models/a/speed", {})
    assert status == 303 and headers["location"].startswith("/models/a")
    api = Http(svc.url)
    run = wait_for(lambda: (r := api("GET", "/bench/jobs?name=perf")[2]["runs"]) and r[0]["status"] != "running"
                   and r[0])
    assert run["status"] == "done" and run["models"] == 1
    asked = {r.body["model"] for r in fast.requests if r.path.endswith("/chat/completions")}
    assert asked == {"m-a"}
    assert api("GET", "/bench/models/a")[2]["model"]["perf"]["tokens_per_second"]
    assert api("POST", "/bench/jobs/suite/run?model=a")[0] == 400
    assert api("POST", "/bench/jobs/perf/run?model=nobody")[0] == 404


def test_a_models_page_says_its_suite_run_is_owed_and_a_retired_one_has_no_run_button(home, fast, make_service):
    fast.set_models(["m-new"])
    configure(home, {"fast": (fast, "openai")}, {}, {})
    svc = make_service()
    api = Http(svc.url)
    item = api("POST", "/bench/onboard", {"models": ["m-new"], "mode": "quick"})[2]["items"][0]
    alias = wait_for(lambda: (i := api("GET", f"/bench/onboard/{item['id']}")[2])["state"] == "done" and i["model"])
    page = Session(svc.url).get(f"/models/{alias}")[2]
    assert "owed: the scheduler&#x27;s suite job plays it at its next run" in page
    assert api("POST", f"/bench/models/{alias}/retire", {"reason": "testing"})[0] == 200
    page = Session(svc.url).get(f"/models/{alias}")[2]
    assert "Run the suite</button>" not in page and "&quot;Run the suite&quot; above" not in page
    assert "once the model is active again" in page


# ---- small faults ---------------------------------------------------------------------------------

def test_the_probe_asks_for_a_few_tokens_only(home, fast, make_service):
    slow = SlowModel(first_byte=0.01, tokens_per_second=500, length=700).start()
    try:
        configure(home, {"local": (slow, "openai")}, {"s": ("local", "llama")}, {})
        api = Http(make_service().url)
        status, _, d = api("POST", "/bench/models/s/probe")
        assert status == 200 and d["probe"]["status"] == "ok"
        assert slow.asked_max == [16] and slow.served[-1] == (16, "length")
    finally:
        slow.stop()


def test_purpose_vision_seats_only_models_that_read_images(home, fast, make_service):
    configure(home, {"fast": (fast, "openai")},
              {"a": ("fast", "m-a"), "sees": ("fast", "m-sees", {"vision": True}), "blind": ("fast", "m-blind")},
              {"look": {"members": ["a"], "explore": 2, "purpose": "vision"}})
    data = Http(make_service().url)("POST", "/v1/chat/completions", body("bench/look"))[2]
    explorers = [s["model"] for s in data["bench"]["seats"] if s["kind"] == "explore"]
    passed = {p["model"]: p["reason"] for p in data["bench"]["passed_over"]}
    assert explorers == ["sees"] and "does not read images" in passed["blind"]


def test_failover_text_ends_with_a_full_stop(home, fast, make_service):
    two_seats(home, fast)
    fast.script("*", Reply.error(500, "down"))
    status, _, data = Http(make_service().url)("POST", "/v1/chat/completions", body("bench/core:route"))
    message = data["error"]["message"]
    assert status == 502 and "failed this turn: " in message
    head = message.split(" Check the members")[0]
    assert head.endswith(".") and not head.endswith("..")


def test_provider_resets_already_passed_are_said_so(home, fast, make_service):
    two_seats(home, fast)
    fast.script("m-a", Reply(headers={"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
                                      "x-ratelimit-reset-requests": "1s"}))
    svc = make_service()
    Http(svc.url)("POST", "/v1/chat/completions", body("a"))
    time.sleep(1.2)                                   # the reset the headers named passes
    page = Session(svc.url).get("/quotas")[2]
    assert ": passed</span>" in page and "full again, most likely" in page


def test_bench_ask_cut_short_names_the_variable_and_prints_the_seats_so_far(home, fast, make_service):
    from tests.test_cli_ask import bench_cli
    two_seats(home, fast)
    gate = threading.Event()
    fast.script("m-b", Reply(hold=gate))
    svc = make_service()
    try:
        proc = bench_cli(svc.url, "ask", "core", "hello", BENCHWARMERS_TIMEOUT="1")
    finally:
        gate.set()
    out, err = proc.stdout.decode(), proc.stderr.decode()
    assert proc.returncode == 1 and "BENCHWARMERS_TIMEOUT" in err and "TimeoutError" not in err, err
    assert "m-a says: hello" in out
    rows = [line.split() for line in err.splitlines() if line.strip()[:2] in ("1 ", "2 ")]
    assert ["1", "member", "a", "ok"] in rows and ["2", "b", "no", "answer", "yet"] in rows, err
