"""Conversations with the panel: `bench.continue` rebuilds each seat's thread from the record (and `bench.seat` asks
one seat), explore seats stay for the conversation, a chat UI's background task is answered by one member; the
Gemini and Ollama SDKs' histories. What each seat was sent is read from the fakes' logs."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.fakes import FakeOpenAI, Reply
from tests.helpers.compat import ADMIN, keyed_panel, panel  # noqa: F401 (fixtures)
from tests.helpers.data import configure
from tests.helpers.threads import threads, users_sent

openai = pytest.importorskip("openai")
SERVED = ("gpt-alpha", "claude-x", "gemini-x", "gpt-scout")
TITLE = ("### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n"
         "### Output:\nJSON format: { \"title\": \"your concise title here\" }\n### Chat History:\n<chat_history>\n"
         "USER: what is a prime\nASSISTANT: a number\n</chat_history>")


def own(prompts: list[str], models=SERVED) -> dict[str, list[str]]:
    return {m: [f"{m} says: {p}" for p in prompts] for m in models}


@pytest.fixture
def oa(panel):
    return openai.OpenAI(base_url=panel.url + "/v1", api_key="x", max_retries=0, timeout=30)


def ask(client, prompt: str, bench: dict | None = None, stream: bool = False, model: str = "bench/core") -> dict:
    """The reply's `bench` data, with its text as `text`."""
    extra = {"bench": bench} if bench else None
    if stream:
        chunks = list(client.chat.completions.create(model=model, stream=True, extra_body=extra,
                                                     messages=[{"role": "user", "content": prompt}]))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        return dict(chunks[-1].model_extra["bench"], text=text)
    reply = client.chat.completions.create(model=model, extra_body=extra,
                                           messages=[{"role": "user", "content": prompt}])
    return dict(reply.model_extra["bench"], text=reply.choices[0].message.content)


def test_continue_rebuilds_each_seats_thread_from_the_record(oa, panel):
    first = ask(oa, "c one")
    second = ask(oa, "c two", {"continue": first["panel"]}, stream=True)
    third = ask(oa, "c three", {"continue": second["panel"]})
    fakes = list(panel.fakes.values())
    assert threads(fakes, "c two") == own(["c one"])
    assert threads(fakes, "c three") == own(["c one", "c two"])
    assert users_sent(fakes, "c three") == {m: ["c one", "c two", "c three"] for m in SERVED}
    assert second["previous"] == first["panel"] and third["previous"] == second["panel"]


def test_continue_keeps_the_seats_asked_for_by_name(oa, panel):
    first = ask(oa, "w one", {"with": ["mixer"]})
    again = ask(oa, "w two", {"continue": first["panel"]})
    assert [s["model"] for s in again["seats"]] == [s["model"] for s in first["seats"]]
    assert ("mixer", "with") in [(s["model"], s["kind"]) for s in again["seats"]]


def test_continue_with_one_seat_asks_only_its_member_in_its_own_thread(oa, panel):
    first = ask(oa, "s one")
    only = ask(oa, "s two", {"continue": first["panel"], "seat": 2})
    assert [(s["seat"], s["model"]) for s in only["seats"]] == [(2, "claude")]
    assert only["text"].startswith("## Seat 2 · claude")
    assert threads(list(panel.fakes.values()), "s two") == own(["s one"], ["claude-x"])
    after = ask(oa, "s three", {"continue": only["panel"]})   # every seat again: the one answer is the picked one
    sent = threads(list(panel.fakes.values()), "s three")
    assert sent["claude-x"] == ["claude-x says: s one", "claude-x says: s two"]
    assert sent["gpt-alpha"] == ["gpt-alpha says: s one", "claude-x says: s two"]
    assert len(after["seats"]) == 4


def test_continue_refusals_say_what_to_fix(panel):
    def post(bench: dict, model: str = "bench/core") -> tuple[int, dict]:
        body = {"model": model, "messages": [{"role": "user", "content": "x"}], "bench": bench}
        req = urllib.request.Request(panel.url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())
    assert post({"continue": "nope"})[0] == 400
    assert post({"seat": 1})[0] == 400
    status, body = post({"continue": "p_0000000000000000000000"})
    assert status == 404 and "No panel" in body["error"]["message"]
    made = post({})[1]["bench"]["panel"]
    status, body = post({"continue": made}, "bench/spare")
    assert status == 400 and "bench/core" in body["error"]["message"]
    assert post({"continue": made, "seat": 9})[0] == 400
    assert post({"continue": made}, "bench/core:route")[0] == 400


def test_explore_seat_stays_for_the_conversation_and_is_replaced_when_it_keeps_failing(home, make_service):
    fake = FakeOpenAI().start()
    try:
        scouts = {f"e{i}": ("oa", f"gpt-e{i}") for i in range(4)}
        configure(home, {"oa": (fake, "openai")}, {"m1": ("oa", "gpt-m1"), **scouts},
                  {"talk": {"members": ["m1"], "explore": 1}})
        svc = make_service()
        client = openai.OpenAI(base_url=svc.url + "/v1", api_key="x", max_retries=0, timeout=30)

        def explorer(bench: dict) -> str:
            return next(s["model"] for s in bench["seats"] if s["kind"] == "explore")
        first = ask(client, "t1", model="bench/talk")
        scout = explorer(first)
        only = ask(client, "t2", {"continue": first["panel"], "seat": 1}, model="bench/talk")   # m1 alone
        second = ask(client, "t2", {"continue": only["panel"]}, model="bench/talk")
        assert explorer(second) == scout
        other = ask(client, "fresh", model="bench/talk")       # a new conversation: the rotation moved on
        assert explorer(other) != scout
        fake.script(scouts[scout][1], Reply.error(400, "bad request"))
        third = ask(client, "t3", {"continue": second["panel"]}, model="bench/talk")
        assert explorer(third) == scout and [s["status"] for s in third["seats"]] == ["ok", "failed"]
        fourth = ask(client, "t4", {"continue": third["panel"]}, model="bench/talk")   # failed once: kept
        assert explorer(fourth) == scout
        fifth = ask(client, "t5", {"continue": fourth["panel"]}, model="bench/talk")   # failed twice: replaced
        assert explorer(fifth) != scout
    finally:
        fake.stop()


@pytest.mark.parametrize("stream", [False, True])
def test_open_webui_title_task_is_answered_by_one_member_and_set_aside(oa, panel, stream):
    panel.fakes["oa"].script("gpt-alpha", '{"title": "🔢 Primes"}')
    bench = ask(oa, TITLE, stream=stream)
    assert bench["text"] == '{"title": "🔢 Primes"}'
    assert [s["model"] for s in bench["seats"]] == ["alpha"]
    sent = [r for f in panel.fakes.values() for r in f.requests if "Generate a concise" in json.dumps(r.body)]
    assert len(sent) == 1     # one member; no referee, no merge, no explore seat
    with urllib.request.urlopen(panel.url + "/bench/panels/" + bench["panel"], timeout=10) as resp:
        assert json.loads(resp.read())["set_aside"]
    with urllib.request.urlopen(panel.url + "/bench/pending", timeout=10) as resp:
        assert bench["panel"] not in resp.read().decode()


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_sdk_history_follow_up(panel, stream):
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=panel.url, api_version="v1beta"))
    if stream:
        text = "".join(c.text or "" for c in client.models.generate_content_stream(model="bench/core",
                                                                                   contents="g one"))
    else:
        text = client.models.generate_content(model="bench/core", contents="g one").text
    client.models.generate_content(model="bench/core", contents=[
        types.Content(role="user", parts=[types.Part(text="g one")]),
        types.Content(role="model", parts=[types.Part(text=text)]),
        types.Content(role="user", parts=[types.Part(text="g two")])])
    assert threads(list(panel.fakes.values()), "g two") == own(["g one"])


@pytest.mark.parametrize("stream", [False, True])
def test_ollama_sdk_history_follow_up(panel, stream):
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=panel.url, timeout=30)
    user = [{"role": "user", "content": "o one"}]
    if stream:
        text = "".join(p.message.content or "" for p in client.chat(model="bench/core", messages=user, stream=True))
    else:
        text = client.chat(model="bench/core", messages=user).message.content
    client.chat(model="bench/core", messages=user + [{"role": "assistant", "content": text},
                                                     {"role": "user", "content": "o two"}])
    assert threads(list(panel.fakes.values()), "o two") == own(["o one"])


def test_another_keys_panel_is_neither_continued_nor_matched(keyed_panel):
    panel, key = keyed_panel
    req = urllib.request.Request(panel.url + "/bench/keys", json.dumps({"name": "other", "collections": ["core"]})
                                 .encode(), {"Content-Type": "application/json", "Authorization": "Bearer " + ADMIN})
    with urllib.request.urlopen(req, timeout=10) as resp:
        other = json.loads(resp.read())["key"]
    mine = openai.OpenAI(base_url=panel.url + "/v1", api_key=key, max_retries=0, timeout=30)
    theirs = openai.OpenAI(base_url=panel.url + "/v1", api_key=other, max_retries=0, timeout=30)
    first = ask(mine, "k one")
    with pytest.raises(openai.NotFoundError):
        ask(theirs, "k two", {"continue": first["panel"]})
    theirs.chat.completions.create(model="bench/core", messages=[
        {"role": "user", "content": "k one"}, {"role": "assistant", "content": first["text"]},
        {"role": "user", "content": "k three"}])
    assert threads(list(panel.fakes.values()), "k three") == {m: [first["text"]] for m in SERVED}
