"""The dashboard without a browser: every page and its JSON twin, strict headers, CSRF, forms that post and
redirect with a note, the ask stream, the admin token's login and log-out."""
from __future__ import annotations

import json
import re
import threading

import pytest

from benchwarmers.dashboard.render import secs
from tests.fakes import FakeOllama, FakeOpenAI, Reply
from tests.helpers.dashboard import SECURITY_HEADERS, Session
from tests.helpers.data import configure
from tests.helpers.panel import wait_for

KEY = "sk-test-dash-0123456789abcdef"
TOKEN = "dash-admin-token-0123456789"
PAGES = ["/", "/endpoints", "/onboard", "/discover", "/models", "/models/a", "/collections", "/collections/core",
         "/collections/_new", "/ask", "/calls", "/settings", "/suite"]


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-a", "m-b", "m-x", "m-new"])
    yield f
    f.stop()


@pytest.fixture
def bench(home, fake, make_service):
    """core = a, b + one explore seat (x); one ask already made, one seat judged."""
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a", {"context_window": 8000}), "b": ("fake", "m-b"),
                                                 "x": ("fake", "m-x")},
              {"core": {"members": ["a", "b"], "explore": 1, "description": "code review"}})
    svc = make_service()
    s = Session(svc.url)
    status, headers, _ = s.form("/ask", {"collection": "core", "prompt": "Where is the bug?"})
    assert status == 303 and headers["location"].startswith("/calls/p_")
    s.panel = headers["location"].rsplit("/", 1)[1]
    s.service = svc
    return s


VOLATILE = ("uptime_seconds", "checked", "room")     # room: the disk's free bytes, which other writers move


def strip_volatile(d):
    if isinstance(d, dict):
        return {k: strip_volatile(v) for k, v in d.items() if k not in VOLATILE}
    if isinstance(d, list):
        return [strip_volatile(v) for v in d]
    return d


def test_every_page_answers_with_strict_headers_and_its_json_twin(bench):
    for path in PAGES + [f"/calls/{bench.panel}"]:
        status, headers, text = bench.get(path)
        assert status == 200, (path, text[:300])
        assert all(h in headers for h in SECURITY_HEADERS), path
        csp = headers["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
        assert ' style="' not in text and "<script>" not in text and " onclick" not in text   # nothing CSP blocks
        twin = "/.json" if path == "/" else path + ".json"
        as_json = bench.json(twin)
        _, _, accepted = bench.get(path, Accept="application/json")
        assert strip_volatile(json.loads(accepted)) == strip_volatile(as_json), path
        assert f'href="{twin}"' in text, path                       # each page links its twin


def test_a_page_that_does_not_exist_is_an_html_404_with_the_headers(bench):
    status, headers, text = bench.get("/models/nobody")
    assert status == 404 and "nobody" in text and all(h in headers for h in SECURITY_HEADERS)
    status, _, text = bench.get("/models/nobody.json")
    assert status == 404 and json.loads(text)["error"]["message"].startswith("No model named")

def test_home_survives_a_broken_config_file_and_names_it(bench, home):
    (home / "config" / "endpoints.json").write_text('{"endpoints": {,}}', encoding="utf-8")
    status, _, text = bench.get("/")
    assert status == 200 and "Config problem" in text and "endpoints.json:1:" in text   # no redirect to Endpoints
    d = bench.json("/.json")
    assert d["counts"]["endpoints"] == 0 and any("endpoints.json" in p for p in d["status"]["config_problems"])



def test_every_post_needs_the_csrf_token_and_our_origin(bench, home):
    form = b"name=x&base_url=http%3A%2F%2F127.0.0.1%3A9&api=ollama&no_key=1"
    plain = {"Content-Type": "application/x-www-form-urlencoded"}
    stranger = Session(bench.url)
    status, _, text = stranger.request("POST", "/endpoints/add", form, plain)
    assert status == 403 and "expired" in text                          # no cookie, no token
    status, _, _ = bench.request("POST", "/endpoints/add", form + b"&csrf=not-the-token", plain)
    assert status == 403
    status, _, _ = bench.request("POST", "/endpoints/add", form + f"&csrf={bench.csrf}".encode(),
                                 {**plain, "Origin": "http://evil.example"})
    assert status == 403
    status, _, body = bench.request("POST", "/collections/core/delete", b"",
                                    {**plain, "Accept": "application/json", "X-CSRF-Token": "wrong"})
    assert status == 403 and json.loads(body)["error"]["code"] == "csrf_failed"
    assert "core" in json.loads((home / "config" / "collections.json").read_text())["collections"]
    for path in ("/logout", "/ask/stream", "/calls/verdict", "/settings/keys", "/onboard"):
        assert stranger.request("POST", path, b"", plain)[0] == 403, path


def test_adding_an_endpoint_by_form_checks_the_key_and_never_shows_it(bench, isolated):
    with FakeOpenAI() as other:
        other.set_models(["o-1", "o-2"]).expect_key(KEY)
        fields = {"api": "openai", "name": "hub", "base_url": other.url, "key": "sk-wrong-key-000000000000"}
        status, headers, _ = bench.form("/endpoints/add", fields)
        assert status == 303 and headers["location"] == "/endpoints"
        _, _, page = bench.get("/endpoints")
        assert "key was refused" in page and "sk-wrong-key" not in page
        assert f'value="{other.url}"' in page and 'value="hub"' in page     # what was typed comes back, not the key
        status, _, _ = bench.form("/endpoints/add", {**fields, "key": KEY})
        _, _, page = bench.get("/endpoints")
        assert "Added endpoint hub: it serves 2 models" in page and KEY not in page
        assert "Added endpoint" not in bench.get("/endpoints")[2]          # a note is shown once
        assert json.loads((isolated.parent / "llm" / "keys.json").read_text())["hub"] == KEY
        assert KEY not in json.dumps(bench.json("/endpoints.json"))
        status, _, d = bench.form("/endpoints/hub/test", {}, script=True)
        assert status == 200 and d["ok"] and "serves 2 models" in d["message"]
    status, _, d = bench.form("/endpoints/hub/test", {}, script=True)
    assert status == 502 and "failed its test" in d["error"]["message"]
    status, headers, _ = bench.form("/endpoints/hub/remove", {})
    assert status == 303 and "Removed endpoint hub" in bench.get("/endpoints")[2]


def test_a_local_ollama_is_offered_in_one_click(bench, monkeypatch):
    with FakeOllama() as ol:
        ol.set_models(["llama3.2"])
        monkeypatch.setenv("OLLAMA_HOST", ol.root)
        _, _, page = bench.get("/endpoints")
        assert "Ollama on this machine" in page and "(1 model)" in page
        action = re.search(r'<form method="post" action="/endpoints/add" class="inline"><input type="hidden" '
                           r'name="csrf"[^>]*>(.*?)<button', page).group(1)
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', action))
        assert fields == {"api": "ollama", "name": "ollama", "base_url": ol.root, "no_key": "1"}
        assert bench.form("/endpoints/add", fields)[0] == 303
        assert "added as ollama" in bench.get("/endpoints")[2]   # added: no longer offered
        assert [e["name"] for e in bench.json("/endpoints.json")["endpoints"]] == ["fake", "ollama"]


def test_onboarding_by_form_shows_progress_beside_each_model(bench, fake):
    fake.script("m-new", Reply(text="ready", delay=0.3))
    page = bench.get("/onboard")[2]
    assert 'value="fake|m-new"' in page and "fake|m-a" not in page        # on the bench: not offered
    status, headers, _ = bench.form("/onboard", [("pick", "fake|m-new"), ("mode", "adhoc")])
    assert status == 303 and "Queued 1 model (m-new)" in bench.get("/onboard")[2]
    done = wait_for(lambda: [c for c in bench.json("/onboard.json")["candidates"]
                             if c["served"] == "m-new" and c["item"]["state"] == "done"], 20)
    assert done[0]["item"]["model"] == "m-new" and done[0]["item"]["mode"] == "adhoc"
    page = bench.get("/onboard")[2]
    assert 'data-state="done"' in page and 'href="/models/m-new"' in page   # a reload shows the same progress
    status, _, d = bench.form("/onboard", [("pick", "fake|m-new")], script=True)
    assert status == 409 and "already on the bench" in d["error"]["message"]
    status, _, d = bench.form("/onboard", [], script=True)
    assert status == 400 and "No model ticked" in d["error"]["message"]


def test_collections_by_form(bench, home):
    fields = [("name", "fresh"), ("description", "design <review>"), ("members", "a"), ("members", "x"),
              ("explore", "0"), ("shadow", "0"), ("merge_model", "")]
    status, headers, _ = bench.form("/collections/save", fields)
    assert status == 303 and headers["location"] == "/collections/fresh"
    page = bench.get("/collections/fresh")[2]
    assert "Saved collection fresh: one ask makes 2 calls" in page and "design &lt;review&gt;" in page
    saved = json.loads((home / "config" / "collections.json").read_text())["collections"]["fresh"]
    assert saved["members"] == ["a", "x"] and saved["explore"] == 0
    status, headers, _ = bench.form("/collections/save", [("name", "bad name"), ("members", "a")])
    assert status == 303 and "not a valid name" in bench.get(headers["location"])[2]
    assert bench.form("/collections/fresh/delete", {})[0] == 303
    assert "fresh" not in json.loads((home / "config" / "collections.json").read_text())["collections"]
    overview = bench.json("/collections.json")["collections"][0]
    assert overview["name"] == "core" and overview["seats"]["calls"] == 3 and overview["together"]["context_window"]


def test_ask_without_script_attaches_files_and_opens_the_answers(bench, fake):
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 20
    status, headers, _ = bench.form("/ask", {"collection": "core", "prompt": "Review this", "system": "Be terse."},
                                    files=[("files", "cache.py", "text/x-python", b"def f():\n    return 1\n"),
                                           ("files", "shot.png", "image/png", png)])
    assert status == 303
    sent = [r.body for r in fake.requests if r.path.endswith("/chat/completions")][-1]
    text = json.dumps(sent["messages"])
    assert '<file name=\\"cache.py\\">' in text and "image_url" in text and "Be terse." in text
    page = bench.get(headers["location"])[2]
    assert page.count('class="seat"') == 3 and page.count('action="/calls/verdict"') == 3
    status, headers, _ = bench.form("/ask", {"collection": "", "prompt": "x"})
    assert status == 303 and "Choose a collection" in bench.get(headers["location"])[2]
    status, headers, _ = bench.form("/ask", {"collection": "", "prompt": "direct", "with": "b"})
    assert status == 303 and "Asked b: 1 of 1" in bench.get(headers["location"])[2]


def ndjson(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_ask_stream_sends_a_line_per_seat_as_it_finishes(bench, fake):
    slow = threading.Event()                              # b answers once the other two seats have arrived
    fake.script("m-b", Reply(text="**slow** one", hold=slow))
    body = f"collection=core&prompt=hello&csrf={bench.csrf}".encode()
    try:
        status, headers, text = bench.request("POST", "/ask/stream", body,
                                              {"Content-Type": "application/x-www-form-urlencoded"},
                                              on_data=lambda data: data.count(b'{"seat": {') >= 2 and slow.set())
    finally:
        slow.set()
    assert status == 200 and headers["content-type"].startswith("application/x-ndjson")
    lines = ndjson(text)
    first, seats, last = lines[0], [x["seat"] for x in lines if "seat" in x], lines[-1]
    assert first["panel"] == headers["x-bench-panel"] and [s["model"] for s in first["seats"]] == ["a", "b", "x"]
    assert seats[-1]["model"] == "b"                                        # the slow seat came last
    assert seats[-1]["nodes"] == [{"t": "p", "c": [{"t": "strong", "c": ["slow"]}, " one"]}]
    assert last == {"done": {"answered": 3, "seats": 3}}
    body = f"collection=core&prompt=hello&merged=1&csrf={bench.csrf}".encode()
    lines = ndjson(bench.request("POST", "/ask/stream", body, {"Content-Type": "application/x-www-form-urlencoded"})[2])
    merged = next(x["merged"] for x in lines if "merged" in x)
    assert merged["status"] == "ok" and merged["nodes"] and any("merge" in x for x in lines)
    status, _, text = bench.request("POST", "/ask/stream", f"collection=nope&prompt=x&csrf={bench.csrf}".encode(),
                                    {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 404 and "nope" in json.loads(text)["error"]["message"]


def test_verdicts_by_form_save_in_place_and_revise(bench):
    call = bench.json(f"/calls/{bench.panel}.json")["seats"][0]["call"]
    status, _, d = bench.form("/calls/verdict", {"call": call, "useful": "yes", "real": "the race\nthe leak",
                                                 "false": "", "note": "good"}, script=True)
    assert status == 200 and d["message"] == "Verdict saved: useful." and d["verdict"]["real"] == ["the race",
                                                                                                    "the leak"]
    status, headers, _ = bench.form("/calls/verdict", {"call": call, "useful": "no", "false": "the race",
                                                       "back": f"/calls/{bench.panel}"})
    assert status == 303 and headers["location"] == f"/calls/{bench.panel}"
    page = bench.get(headers["location"])[2]
    assert "Verdict saved: not useful (revised)." in page
    seat = bench.json(f"/calls/{bench.panel}.json")["seats"][0]
    assert seat["verdict"]["useful"] is False and seat["verdict"]["false"] == ["the race"]
    status, _, d = bench.form("/calls/verdict", {"call": call}, script=True)
    assert status == 400 and "Choose Useful or Not useful" in d["error"]["message"]
    status, headers, _ = bench.form("/calls/verdict", {"call": call, "useful": "yes", "back": "//evil.example/"})
    assert headers["location"] == "/calls"


def test_home_counts_the_answers_without_a_verdict_and_links_to_them(bench):
    seats = [s for s in bench.json(f"/calls/{bench.panel}.json")["seats"] if s["status"] == "ok"]
    assert bench.json("/.json")["counts"]["answers_unjudged"] == len(seats) == 3
    page = bench.get("/")[2]
    assert "3 answers wait for a verdict" in page and 'href="/calls?verdict=missing">Judge them on Calls</a>' in page
    calls_page = bench.get("/calls?verdict=missing")[2]
    assert f'href="/calls/{bench.panel}"' in calls_page          # the link lands on the ask that waits
    for seat in seats[1:]:
        bench.form("/calls/verdict", {"call": seat["call"], "useful": "yes"}, script=True)
    assert "1 answer waits for a verdict" in bench.get("/")[2]
    bench.form("/calls/verdict", {"call": seats[0]["call"], "useful": "no"}, script=True)
    assert bench.json("/.json")["counts"]["answers_unjudged"] == 0 and "for a verdict" not in bench.get("/")[2]


def test_calls_filter_and_page(bench):
    for i in range(3):
        bench.form("/ask", {"collection": "core", "prompt": f"question {i}"})
    d = bench.json("/calls.json?per_page=2")
    assert d["total"] == 4 and [i["prompt"] for i in d["items"]] == ["question 2", "question 1"] and d["next"]
    older = bench.json(f"/calls.json?per_page=2&before={d['next']}")
    assert [i["prompt"] for i in older["items"]] == ["question 0", "Where is the bug?"] and older["next"] is None
    newer = bench.json(f"/calls.json?per_page=2&after={older['newer']}")
    assert [i["prompt"] for i in newer["items"]] == ["question 2", "question 1"]
    html = bench.get("/calls?per_page=2")[2]
    assert "Older →" in html and "4 asks" in html and "Newer" not in html
    assert bench.json("/calls.json?verdict=given")["total"] == 0
    page = bench.get("/calls?verdict=missing")[2]
    assert "question 2" in page and 'href="/calls.json?verdict=missing"' in page


def test_model_actions_by_form(bench, fake):
    status, _, _ = bench.form("/models/a/retire", {"reason": ""})
    assert "A reason is required" in bench.get("/models/a")[2]
    bench.form("/models/a/retire", {"reason": "too <slow>"})
    page = bench.get("/models/a")[2]
    assert "Retired a: too &lt;slow&gt;." in page and "Restore" in page
    bench.form("/models/a/restore", {})
    assert "Restored a" in bench.get("/models/a")[2]
    status, _, d = bench.form("/models/a/probe", {}, script=True)
    assert status == 200 and "answered" in d["message"]
    assert bench.json("/models/a.json")["model"]["probes"][0]["kind"] == "probe"


def test_a_resting_model_says_until_when_in_words(bench, fake):
    """"resting until T" is text beside the chip, on the Models page and the model's own page, not a tooltip."""
    fake.script("m-a", Reply.error(429, style="openai", retry_after=600))
    bench.form("/ask", {"collection": "core", "prompt": "Again?"})
    until = bench.json("/models/a.json")["model"]["status_text"]
    assert until.startswith("resting until ")
    words = f'<span class="chip chip-resting">resting</span> <span class="reason">{until[len("resting "):]}</span>'
    assert words in bench.get("/models")[2] and words in bench.get("/models/a")[2]
    assert " title=" not in bench.get("/models")[2]


def card_of(page: str, title: str) -> str:
    """The card whose heading is `title`."""
    start = page.index(f"<h2>{title}</h2>")
    return page[start:page.index("</section>", start)]


def test_the_charts_and_their_number_tables_come_from_the_record(bench):
    """Home's calls per day, and a model's latency and useful rate: an SVG each, drawn from the asks made, with a
    table of the same numbers."""
    today = bench.json("/.json")["daily"][-1]
    assert today["calls"] == today["by_status"]["ok"] == 3                      # the fixture's ask: three seats
    daily = card_of(bench.get("/")[2], "Calls per day")
    assert '<svg class="chart"' in daily and f"<title>{today['day']}: 3 ok</title>" in daily
    assert (f'<td data-label="Day">{today["day"]}</td><td data-label="ok">3</td><td data-label="failed">0</td>'
            in daily)
    call = bench.json("/models/a.json")["calls"][0]["id"]
    assert bench.form("/calls/verdict", {"call": call, "useful": "yes", "back": "/models/a"})[0] == 303
    day = bench.json("/models/a.json")["daily"][-1]
    page = bench.get("/models/a")[2]
    latency, useful = card_of(page, "Latency per day"), card_of(page, "Useful rate over time")
    assert '<svg class="chart"' in latency and day["mean_seconds"] is not None
    assert (f'<td data-label="Day">{day["day"]}</td><td data-label="Mean">{secs(day["mean_seconds"])}</td>'
            f'<td data-label="Answers">1</td>' in latency)
    assert '<svg class="chart"' in useful and '<polygon class="band"' in useful            # the interval, drawn
    assert f'<td data-label="Day">{day["day"]}</td><td data-label="Useful so far">100%</td>' in useful
    assert '<td data-label="Judged so far">1</td>' in useful and f"<title>{day['day']}: 100%</title>" in useful


def test_settings_keys_shown_once_and_values(bench, home):
    status, headers, _ = bench.form("/settings/keys", [("name", "app"), ("collections", "core"), ("rpm", "30")])
    assert status == 303
    page = bench.get("/settings")[2]
    secret = re.search(r'<pre id="new-key">(bw-[^<]+)</pre>', page).group(1)
    assert "shown once" in page
    again = bench.get("/settings")[2]
    assert secret not in again and secret not in json.dumps(bench.json("/settings.json"))
    assert bench.json("/settings.json")["gateway_keys"]["keys"][0]["rpm"] == 30
    bench.form("/settings/keys/app/revoke", {})
    assert bench.json("/settings.json")["gateway_keys"]["keys"][0]["revoked"]
    bench.form("/settings/values", {"seat_timeout": "120", "merge_model": "", "panel_workers": "256"})
    assert "Saved: seat_timeout." in bench.get("/settings")[2]
    saved = json.loads((home / "config" / "settings.json").read_text())
    assert saved.pop("scheduler")["jobs"]["probe"]["at"]       # the jobs' times, chosen once when first shown
    assert saved == {"seat_timeout": 120.0}
    bench.form("/settings/values", {"seat_timeout": "-5"})
    assert "cannot be" in bench.get("/settings")[2]


def test_settings_say_when_keys_are_not_enforced_and_turn_require_keys_on(bench, home):
    page = bench.get("/settings")[2]
    assert "not enforced" in page and "a revoked or narrower key still works" in page
    assert '<option value="false" selected>false</option>' in page      # a yes/no setting is a choice, not text
    bench.form("/settings/keys", [("name", "app"), ("collections", "core")])
    bench.form("/settings/keys/app/revoke", {})
    assert "apps using it are refused once keys are enforced" in bench.get("/settings")[2]
    bench.form("/settings/values", {"require_keys": "true", "seat_timeout": "300.0"})
    assert json.loads((home / "config" / "settings.json").read_text())["require_keys"] is True
    page = bench.get("/settings")[2]
    assert "Gateway keys are not enforced" not in page and '<option value="true" selected>true</option>' in page
    assert bench.json("/settings.json")["server"]["gateway_keys"]["enforced"] is True
    status, _, _ = bench.get("/v1/models")
    assert status == 401                                                  # enforced on loopback from now on
    status, headers, _ = bench.form("/ask", {"collection": "core", "prompt": "Still there?"})
    assert status == 303 and headers["location"].startswith("/calls/p_")  # the dashboard's own calls need no key
    assert bench.get("/collections")[0] == 200
    bench.form("/settings/values", {"require_keys": "false"})
    assert "require_keys" not in json.loads((home / "config" / "settings.json").read_text()) or \
        json.loads((home / "config" / "settings.json").read_text())["require_keys"] is False


def test_with_an_admin_token_every_page_needs_the_session(home, make_service):
    svc = make_service(admin_token=TOKEN)
    s = Session(svc.url)
    for path in PAGES:
        status, headers, _ = s.get(path)
        assert status == 303 and headers["location"].startswith("/login"), path
        twin = "/.json" if path == "/" else path + ".json"
        assert s.get(twin)[0] == 401, twin
    assert s.get("/bench/onboard")[0] == 401
    status, headers, _ = s.form("/login", {"token": TOKEN, "next": "/settings"})
    assert status == 303 and headers["location"] == "/settings"
    status, _, page = s.get("/settings")
    assert status == 200 and "Log out" in page and TOKEN not in page
    assert s.get("/settings.json")[0] == 200 and s.get("/bench/onboard")[0] == 200
    status, headers, _ = s.form("/logout", {})
    assert status == 303 and headers["location"] == "/login" and "bw_session" not in s.cookies
    assert s.get("/settings")[0] == 303


def test_the_settings_switch_for_free_models_only_their_own_app_can_use(bench, home):
    _, _, page = bench.get("/settings")
    assert 'id="app_only"' in page and 'name="use_free" value="opencode">' in page
    assert [p["provider"] for p in bench.json("/settings.json")["app_only"]] == ["opencode", "github-copilot"]
    status, headers, _ = bench.form("/settings/app-only", [("use_free", "opencode")])
    assert status == 303 and headers["location"] == "/settings#app_only"
    assert json.loads((home / "config" / "overrides.json").read_text())["providers"] == {"opencode": {"use_free": True}}
    _, _, page = bench.get("/settings")
    assert "Saved: OpenCode Zen on." in page and 'value="opencode" checked>' in page
    bench.form("/settings/app-only", [])
    assert [p["use_free"] for p in bench.json("/settings.json")["app_only"]] == [False, False]
