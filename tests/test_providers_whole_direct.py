"""A whole OpenAI body's Answer is built straight from it (openai.answer): the very Answer its events, scrubbed and
folded by the Collector, make; a body of another shape is left to the events."""
from __future__ import annotations

import pytest

from benchwarmers import redaction
from benchwarmers.providers.collecting import collect, scrubbed
from benchwarmers.providers.openai import OpenAIProvider, answer, whole

KEY = "sk-direct-0123456789"
CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": f'{{"k": "{KEY}"}}'}}
BODIES = [
    {"model": "served", "choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}],
     "usage": {"prompt_tokens": 3, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 1}}},
    {"choices": [{"message": {"content": f"a {KEY} b {KEY}", "reasoning_content": f"think {KEY}"},
                  "finish_reason": "length"}]},
    {"choices": [{"message": {"content": None, "tool_calls": [CALL, {"function": {"name": "g"}}]}}]},
    {"choices": [{"message": {"content": "x", "reasoning": "why"}, "finish_reason": "content_filter"}], "model": ""},
    {"choices": []},
    {},
]
ODD = [[], {"error": {"message": "no"}}, {"choices": "x"}, {"choices": [{"message": {"content": ["part"]}}]},
       {"choices": [{"message": {"tool_calls": [{"function": {"arguments": {"k": 1}}}]}}]}]


def facts(a):
    return (a.text, [(c.id, c.name, c.arguments) for c in a.tool_calls], [(r.text, r.signature) for r in a.reasoning],
            a.usage, a.finish_reason, a.ttft, a.model)


@pytest.mark.parametrize("key", [None, KEY])
@pytest.mark.parametrize("body", BODIES)
def test_the_answer_built_from_a_body_is_the_one_its_events_fold_to(body, key):
    p = OpenAIProvider(None, key)
    meta: dict = {}
    built = answer(p, body, meta)
    assert built is not None
    built.model = meta.get("model") or "asked"
    meta = {}
    folded = collect(scrubbed(whole(p, body, meta), p.key), meta, "asked", timed=False)
    assert facts(built) == facts(folded)
    assert key is None or KEY not in repr(facts(built))


def test_a_known_key_is_scrubbed_from_an_endpoint_without_one():
    redaction.remember(KEY)
    try:
        built = answer(OpenAIProvider(None, None), BODIES[1], {})
        assert built is not None and KEY not in built.text and "[redacted]" in built.reasoning[0].text
    finally:
        redaction._known.discard(KEY)


@pytest.mark.parametrize("body", ODD)
def test_a_body_of_another_shape_is_left_to_the_events(body):
    assert answer(OpenAIProvider(None, None), body, {}) is None
