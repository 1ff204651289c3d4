"""Follow-ups through the official SDKs the way chat UIs send them (the gateway's reply back as the assistant turn):
each seat is sent its own earlier answers, never another seat's, the headings or the points block; whole and
streamed, trimmed, two and three turns. What each seat was sent is read from the fakes' logs."""
from __future__ import annotations

import pytest

from tests.helpers.compat import panel  # noqa: F401 (fixture)
from tests.helpers.threads import threads

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
SERVED = ("gpt-alpha", "claude-x", "gemini-x", "gpt-scout")


def own(prompts: list[str]) -> dict[str, list[str]]:
    """What each seat should have been sent as its assistant turns: its own answers to the earlier prompts."""
    return {m: [f"{m} says: {p}" for p in prompts] for m in SERVED}


@pytest.fixture
def oa(panel):
    return openai.OpenAI(base_url=panel.url + "/v1", api_key="x", max_retries=0, timeout=30)


@pytest.fixture
def an(panel):
    return anthropic.Anthropic(base_url=panel.url, api_key="x", max_retries=0, timeout=30)


def chat_text(client, messages, stream: bool) -> tuple[str, str]:
    """(the reply's text, its panel id), asked whole or streamed."""
    if not stream:
        reply = client.chat.completions.create(model="bench/core", messages=messages)
        return reply.choices[0].message.content, reply.model_extra["bench"]["panel"]
    chunks = list(client.chat.completions.create(model="bench/core", messages=messages, stream=True))
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices), \
        chunks[-1].model_extra["bench"]["panel"]


@pytest.mark.parametrize("stream", [False, True])
def test_openai_chat_three_turns_each_seat_its_own_thread(oa, panel, stream):
    history = [{"role": "user", "content": "first question"}]
    text1, p1 = chat_text(oa, history, stream)
    assert "## Seat 4" in text1
    history += [{"role": "assistant", "content": text1}, {"role": "user", "content": "second question"}]
    text2, p2 = chat_text(oa, history, stream)
    fakes = list(panel.fakes.values())
    assert threads(fakes, "second question") == own(["first question"])
    history += [{"role": "assistant", "content": text2.strip()}, {"role": "user", "content": "third question"}]
    _, p3 = chat_text(oa, history, stream)
    sent = threads(fakes, "third question")
    assert sent == own(["first question", "second question"])
    assert not any("## Seat" in t for texts in sent.values() for t in texts)
    view = oa.get(f"/../bench/panels/{p3}", cast_to=object)
    assert view["previous"] == p2 and view["conversation"]["id"] == p1
    assert [t["panel"] for t in view["conversation"]["turns"]] == [p1, p2, p3]
    assert [t["prompt"] for t in view["conversation"]["turns"]] == ["first question", "second question",
                                                                    "third question"]


def test_openai_trimmed_and_rewrapped_history_still_matches(oa, panel):
    text1, _ = chat_text(oa, [{"role": "user", "content": "q one"}], False)
    squeezed = "\n".join(line.strip() for line in text1.strip().splitlines() if line.strip())
    chat_text(oa, [{"role": "user", "content": "q one"}, {"role": "assistant", "content": squeezed},
                   {"role": "user", "content": "q two"}], False)
    assert threads(list(panel.fakes.values()), "q two") == own(["q one"])


@pytest.mark.parametrize("stream", [False, True])
def test_openai_responses_follow_up(oa, panel, stream):
    if stream:
        events = list(oa.responses.create(model="bench/core", input="r one", stream=True))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    else:
        text = oa.responses.create(model="bench/core", input="r one").output_text
    oa.responses.create(model="bench/core", input=[
        {"role": "user", "content": "r one"},
        {"role": "assistant", "content": [{"type": "output_text", "text": text}]},
        {"role": "user", "content": "r two"}])
    assert threads(list(panel.fakes.values()), "r two") == own(["r one"])


def test_an_unmatched_history_goes_to_every_seat_as_it_is(oa, panel):
    edited = "## Seat 1 · alpha · member\n\nsomething the user wrote"
    text, _ = chat_text(oa, [{"role": "user", "content": "u one"}, {"role": "assistant", "content": edited},
                             {"role": "user", "content": "u two"}], False)
    assert "## Seat 4" in text
    assert threads(list(panel.fakes.values()), "u two") == {m: [edited] for m in SERVED}


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_two_turns_each_seat_its_own_thread(an, panel, stream):
    user = [{"role": "user", "content": "a one"}]
    if stream:
        with an.messages.stream(model="bench/core", max_tokens=200, messages=user) as s:
            text = s.get_final_text()
    else:
        text = an.messages.create(model="bench/core", max_tokens=200, messages=user).content[0].text
    follow = user + [{"role": "assistant", "content": [{"type": "text", "text": text}]},
                     {"role": "user", "content": "a two"}]
    reply = an.messages.create(model="bench/core", max_tokens=200, messages=follow)
    assert "## Seat 4" in reply.content[0].text
    assert threads(list(panel.fakes.values()), "a two") == own(["a one"])
    assert reply.model_extra["bench"]["previous"]


@pytest.mark.parametrize("stream", [False, True])
def test_points_block_and_merged_reply_never_reach_a_seat(home, make_service, stream):
    from tests.fakes import FakeOpenAI
    from tests.fakes.referee import FakeReferee
    from tests.helpers.data import configure
    fake = FakeOpenAI().start()
    try:
        configure(home, {"fake": (fake, "openai")},
                  {"a": ("fake", "m-a"), "b": ("fake", "m-b"),
                   "judge": {"endpoint": "fake", "served": "m-judge", "ad_hoc": True, "facts": {}}},
                  {"core": {"members": ["a", "b"], "explore": 0, "referee": "judge", "merge_model": "judge"}})
        fake.script("m-a", ["The cache is stale.", "The cache is stale.", "a again"])
        fake.script("m-b", ["The cache is fresh.", "The cache is fresh.", "b again"])
        fake.script("m-judge", FakeReferee().reply())
        client = openai.OpenAI(base_url=make_service().url + "/v1", api_key="x", max_retries=0, timeout=30)
        first = [{"role": "user", "content": "is the cache fresh"}]
        text, _ = chat_text_points(client, first, stream, "bench/core")
        assert "Where they disagree" in text
        chat_text_points(client, first + [{"role": "assistant", "content": text},
                                          {"role": "user", "content": "why"}], stream, "bench/core")
        assert threads([fake], "why") == {"m-a": ["The cache is stale."], "m-b": ["The cache is fresh."]}
        fake.script("m-judge", "Merged: they differ on the cache.")
        merged, _ = chat_text_points(client, [{"role": "user", "content": "merge q"}], stream, "bench/core:merged",
                                     points="off")
        chat_text_points(client, [{"role": "user", "content": "merge q"}, {"role": "assistant", "content": merged},
                                  {"role": "user", "content": "merge why"}], stream, "bench/core:merged", "off")
        assert threads([fake], "merge why") == {"m-a": ["a again"], "m-b": ["b again"]}
    finally:
        fake.stop()


def chat_text_points(client, messages, stream: bool, model: str, points: str = "all") -> tuple[str, str]:
    """(the reply's text, its panel id), with the points the request asks for."""
    extra = {"bench": {"points": points}}
    if not stream:
        reply = client.chat.completions.create(model=model, messages=messages, extra_body=extra)
        return reply.choices[0].message.content, reply.model_extra["bench"]["panel"]
    chunks = list(client.chat.completions.create(model=model, messages=messages, stream=True, extra_body=extra))
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices), \
        chunks[-1].model_extra["bench"]["panel"]
