"""A hostile hub: its admin answer is a third party's words. The keys it lists (Open WebUI's OPENAI_API_KEYS, CLI
Proxy API's api-key-entries) once joined redaction as they were, ordinary words and model names included, with no
cap: they were cut from every answer and from the record, a served name equal to one could not be onboarded, a
list of 350,000 strings made every panel take half a minute, and opening Discover read them all again. Its odd
answers (nested past Python's stack, URLs that are not text, bodies of many MB) were a 500 with a traceback."""
from __future__ import annotations

import json
import logging
import random
import string
import sys
from pathlib import Path

import pytest

from benchwarmers import keys, redaction
from tests.fakes import Reply
from tests.fakes.hubs import API_KEY, HUB_FAKES, UPSTREAM_KEY, FakeCLIProxy, FakeOpenWebUI
from tests.helpers.http import Http
from tests.helpers.panel import wait_for
from tests.security.attack import bench_data

ADMIN = "admin-key-0123"
OR_BASE = "https://openrouter.ai/api/v1"
SERVED = "llama-3.3-70b-versatile"          # a model's name the hub also lists as a "key"
WORDS = ["member", "return", "the answer is", "function", "because", SERVED, "meta-llama/Llama-3.3-70B-Instruct",
         "Qwen2.5-Coder-32B-Instruct", "internationalization", "gpt-4o-mini-2024-07-18"]
ANSWER = ("Each member must return the answer is 42, because the function of llama-3.3-70b-versatile and "
          "meta-llama/Llama-3.3-70B-Instruct is internationalization.")
SPARE = "spare-key-from-keys-json-0123456789"     # a key the user configured: cut from answers and record as ever


def hub_listing(kind: str, listed: list) -> FakeOpenWebUI | FakeCLIProxy:
    """A hub of `kind` whose admin answer lists `listed` as its upstream's keys, serving SERVED."""
    if kind == "open-webui":
        fake = FakeOpenWebUI(admin_key=ADMIN).start()
        fake.connection(OR_BASE, [SERVED, "qwen/qwen3-coder:free"])
        fake.keys = list(listed)
    else:
        fake = FakeCLIProxy(admin_key=ADMIN).start()
        fake.entry("openrouter", OR_BASE, [SERVED])
        fake.entries[0]["api-key-entries"] = [{"api-key": k} for k in listed]
    return fake


def add_hub(http: Http, fake, kind: str, name: str = "myhub"):
    return http("POST", "/bench/endpoints", {"name": name, "base_url": fake.url, "key": API_KEY, "hub": kind,
                                             "admin_key": ADMIN})


def ask(http: Http, stream: bool) -> tuple[str, str]:
    """(what the client read, the panel's id) of one panel on collection core asking about the hub's words."""
    status, _, reply = http("POST", "/v1/chat/completions", {"model": "bench/core", "stream": stream, "messages": [
        {"role": "user", "content": f"Does each member return {SERVED}? My key is {SPARE}."}]})
    assert status == 200, reply
    if not stream:
        return json.dumps(reply), reply["bench"]["panel"]
    chunks = [json.loads(line[6:]) for line in reply.splitlines() if line.startswith("data: {")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
    return text, next(c["bench"]["panel"] for c in chunks if c.get("bench", {}).get("panel"))


def recorded(http: Http, panel: str) -> list[dict]:
    """Each seat's call of the panel as the record serves it."""
    _, _, item = http("GET", f"/bench/history/{panel}")
    return [http("GET", f"/bench/calls/{s['call']}")[2] for s in item["seats"]]


def onboard(http: Http, served: str) -> dict:
    status, _, d = http("POST", "/bench/onboard", {"models": [{"served": served, "endpoint": "myhub"}],
                                                   "mode": "adhoc"})
    assert status == 202, d
    return wait_for(lambda: (lambda i: i if i["state"] in ("done", "failed") else None)(
        http("GET", f"/bench/onboard/{d['items'][0]['id']}")[2]), timeout=60)


def work(fn, *args) -> int:
    """How many built-in calls (each dict lookup, search, replace or comparison the matcher asks of C) running
    `fn(*args)` takes: the matcher's work, counted rather than timed."""
    count = 0

    def seen(frame, event, arg):
        nonlocal count
        count += event == "c_call"
    sys.setprofile(seen)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return count


# ---- words and model names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["open-webui", "cliproxy"])
def test_a_hubs_list_of_words_cuts_nothing_from_answers_or_the_record(home, fake, make_service, kind):
    bench_data(home, fake)
    keys.store("spare", SPARE)
    fake.script("*", Reply(text=f"{ANSWER} Your key: {SPARE}.", chunk_chars=7))
    hub = hub_listing(kind, [*WORDS, UPSTREAM_KEY])
    try:
        svc = make_service()
        http = Http(svc.url)
        status, _, d = add_hub(http, hub, kind)
        assert status == 201, d
        for stream in (False, True):
            read, panel = ask(http, stream)
            assert ANSWER in read and SPARE not in read and "[redacted]" in read, read[:600]
            for call in recorded(http, panel):
                assert call["answer"] == f"{ANSWER} Your key: [redacted].", call["answer"]
                asked = call["request"]["messages"][0]["content"]
                assert asked == f"Does each member return {SERVED}? My key is [redacted].", asked
        svc.bench.db.sync()
        assert not svc.bench.db.query("SELECT id FROM calls WHERE answer LIKE ?", (f"%{SPARE}%",))
        # the hub's key-shaped key is still cut from messages; its words are not
        assert redaction.redact(f"the upstream said {UPSTREAM_KEY}: member") == "the upstream said [redacted]: member"
        assert len(redaction._listed) == 1 and not set(WORDS) & redaction._known
        item = onboard(http, SERVED)                  # a served name the hub listed, not shaped like a key
        assert item["state"] == "done", (item["reason"], item["log_lines"])
    finally:
        hub.stop()


def test_only_key_shaped_strings_are_taken_for_keys():
    """The rule of SECURITY.md: words, sentences and model names are no keys; keys of the common shapes are."""
    names = [*WORDS, "claude-3-5-sonnet-20241022", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "gemini-2.0-flash-001",
             "accounts/fireworks/models/llama-v3p1-405b-instruct", "mistralai/Mixtral-8x22B-Instruct-v0.1",
             "Meta-Llama-3.1-405B-Instruct-FP8", "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
             "anthropic.claude-3-5-sonnet-20241022-v2:0", "supercalifragilisticexpialidocious", "x" * 600,
             "a key with spaces 0123456789abcdef", "sk-short", "", 12345678901234567890, None, *catalog_model_ids()]
    assert [n for n in names if redaction.key_shaped(n)] == []
    rng = random.Random(7)
    alnum = string.ascii_letters + string.digits
    pick = lambda chars, n: "".join(rng.choice(chars) for _ in range(n))     # noqa: E731
    shaped = [UPSTREAM_KEY, "sk-proj-" + pick(alnum + "-_", 120), "gsk_" + pick(alnum, 52), "AIzaSy" + pick(alnum, 33),
              "sk-or-v1-" + pick("0123456789abcdef", 64), "q8Rt2LmX9vZp4KwN7cYb"]
    assert [k for k in shaped if not redaction.key_shaped(k)] == []


def catalog_model_ids() -> list[str]:
    """Every model id of the catalog copies shipped with the package and of the tests' OpenRouter list."""
    root = Path(__file__).resolve().parent.parent.parent
    shipped = json.loads((root / "benchwarmers/catalog/data/models.dev.json").read_text(encoding="utf-8"))
    free = json.loads((root / "benchwarmers/catalog/data/freellmapi.json").read_text(encoding="utf-8"))
    routed = json.loads((root / "tests/catalog_fixtures/openrouter-models.json").read_text(encoding="utf-8"))
    ids = [m for provider in shipped["data"].values() for m in provider.get("models", {})]
    ids += [m["id"] for m in free["data"]["models"]] + [m["id"] for m in routed["data"]]
    assert len(ids) > 100
    return ids


# ---- a flood ---------------------------------------------------------------------------------------------

def flood(count: int = 350_000) -> list[str]:
    """`count` strings, about 3.8 MB as JSON: words and pieces of model names, one in a thousand a random key."""
    rng = random.Random(11)
    alnum = string.ascii_letters + string.digits
    out = []
    for i in range(count):
        out.append("".join(rng.choice(alnum) for _ in range(24)) if i % 1000 == 0 else WORDS[i % len(WORDS)][:7])
    return out


def test_a_flood_of_350000_strings_keeps_the_set_bounded_and_a_panel_does_the_same_work(home, fake, make_service):
    bench_data(home, fake)
    fake.script("*", Reply(text=ANSWER, chunk_chars=7))
    text = (ANSWER + " " + "".join(random.Random(3).choice(string.ascii_letters) for _ in range(40)) + "\n") * 400
    pieces = [text[i:i + 7] for i in range(0, 20_000, 7)]
    hub = hub_listing("open-webui", [UPSTREAM_KEY])
    try:
        svc = make_service()
        http = Http(svc.url)
        for n in range(3):
            assert add_hub(http, hub, "open-webui", name=f"hub{n}")[0] == 201
        assert len(redaction._listed) == 1
        # what a panel does with a text (its errors, its stream, its record), counted with one key listed ...
        before = {"redact": work(redaction.redact, text), "name": work(redaction.names_a_key, text),
                  "record": work(redaction.forget_known, text), "stream": work(stream_through, pieces)}
        listed = flood()
        assert len(json.dumps(listed)) > 3_000_000
        hub.keys = listed
        for n in range(3):              # three hubs list the flood; Discover reads them all again
            status, _, d = http("GET", f"/bench/endpoints/hub{n}/hub")
            assert status == 200, d
        svc.bench.registry._sources.clear()
        assert http("GET", "/bench/discover")[0] == 200
        kept = len(redaction._listed)
        assert 1 < kept <= 3 * redaction.LISTED_PER_SOURCE + 1 and kept <= redaction.LISTED_MOST
        assert redaction._listed.chars() <= redaction.LISTED_MOST * redaction.MAX_KEY
        assert max(map(len, redaction._listed._anchors.values())) <= redaction.LISTED_BUCKET
        rng = random.Random(5)
        for n in range(40):             # many hubs, each listing 100 keys: the set stays within its bound
            redaction.note_listed(f"more{n}", ["".join(rng.choice(string.ascii_letters + string.digits)
                                                       for _ in range(30)) for _ in range(100)])
        assert len(redaction._listed) == redaction.LISTED_MOST
        # ... and with the set full: the same work, whatever it holds
        after = {"redact": work(redaction.redact, text), "name": work(redaction.names_a_key, text),
                 "record": work(redaction.forget_known, text), "stream": work(stream_through, pieces)}
        assert after == before
        read, _ = ask(http, stream=True)
        assert ANSWER in read
    finally:
        hub.stop()


def stream_through(pieces: list[str]) -> str:
    """A streamed answer through the scrubber every seat's stream passes."""
    scrub = redaction.Scrubber(API_KEY)
    return "".join(scrub.feed(p) for p in pieces) + scrub.flush()


def test_opening_discover_after_a_restart_does_not_poison_again(home, fake, make_service, monkeypatch):
    bench_data(home, fake)
    hub = hub_listing("open-webui", [*WORDS, UPSTREAM_KEY])
    try:
        svc = make_service()
        http = Http(svc.url)
        assert add_hub(http, hub, "open-webui")[0] == 201
        for _ in range(3):              # as after a restart: nothing known, the hub's sources not read yet
            redaction._known.clear()
            monkeypatch.setattr(redaction, "_listed", redaction.ListedKeys())
            svc.bench.registry._sources.clear()
            status, _, d = http("GET", "/bench/discover")           # reads the hub again
            assert status == 200 and d["hub_errors"] == []
            assert not set(WORDS) & redaction._known and len(redaction._listed) == 1
            assert redaction.redact(" ".join(WORDS)) == " ".join(WORDS) and not redaction.names_a_key(SERVED)
            assert redaction.redact(UPSTREAM_KEY) == "[redacted]"
    finally:
        hub.stop()


# ---- odd answers -----------------------------------------------------------------------------------------

def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


ODD = {   # what the hub's admin read answers -> the words the error must hold
    "nested past the stack": (nested(200_000), "nested"),
    "nested within the stack": (b'{"OPENAI_API_BASE_URLS": ' + nested(200) + b', "openai-compatibility": '
                                + nested(200) + b', "data": ' + nested(200) + b"}", "nested"),
    "more than 4 MiB": (json.dumps({"pad": "x" * (5 << 20)}).encode(), "MiB"),
    "not JSON": (b"<html>hello</html>", "something other than"),
    "a bare number": (b"5", "something other than"),
}
KINDS = HUB_FAKES
URLS = {   # each kind's answer with URLs that are not text
    "open-webui": {"OPENAI_API_BASE_URLS": [5, {"url": "http://x"}, None], "OPENAI_API_KEYS": 7},
    "cliproxy": {"openai-compatibility": [{"name": "or", "base-url": {"url": "http://x"}, "api-key-entries": "k"}]},
    "litellm": {"data": [{"model_name": "m", "litellm_params": {"model": "openrouter/m", "api_base": [1]}}]},
}


def odd(kind: str, case: str) -> tuple[bytes, str]:
    """(the answer, the words its error must hold) of one case for a hub of `kind`."""
    return (json.dumps(URLS[kind]).encode(), "text") if case == "URLs not text" else ODD[case]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("case", [*ODD, "URLs not text"])
def test_odd_admin_answers_are_a_clear_error_for_that_hub(home, fake, make_service, caplog, kind, case):
    caplog.set_level(logging.ERROR)
    bench_data(home, fake)
    hub = KINDS[kind](admin_key=ADMIN).start()
    hub.raw, words = odd(kind, case)
    try:
        svc = make_service()
        http = Http(svc.url)
        status, _, d = add_hub(http, hub, kind)                   # adding it
        assert status == 502 and words in d["error"]["message"], (status, str(d)[:500])
        assert "myhub" not in [e["name"] for e in http("GET", "/bench/endpoints")[2]["endpoints"]]
        hub.raw = None
        if kind == "litellm":
            hub.deploy("m", "openrouter/m")
        elif kind == "open-webui":
            hub.connection(OR_BASE, ["m"])
        else:
            hub.entry("or", OR_BASE, ["m"])
        assert add_hub(http, hub, kind)[0] == 201
        hub.raw = odd(kind, case)[0]
        status, _, d = http("GET", "/bench/endpoints/myhub/hub")     # reading its sources
        assert status == 502 and words in d["error"]["message"], (status, str(d)[:500])
        svc.bench.registry._sources.clear()
        status, _, d = http("GET", "/bench/discover")                # Discover names it and goes on
        assert status == 200 and [e["endpoint"] for e in d["hub_errors"]] == ["myhub"], str(d)[:500]
        item = onboard(http, "qwen/qwen3-coder:free")                # the queue fails the item with the words
        assert item["state"] == "failed" and words in item["reason"], item
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-2000:]
    finally:
        hub.stop()
