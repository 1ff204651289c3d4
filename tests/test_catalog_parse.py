"""The catalog's parsers, name matching, provider matching and merge order, on the recorded samples."""
from __future__ import annotations

import pytest

from benchwarmers.catalog import parse, store, vendors
from benchwarmers.catalog.merge import Indexed, merge
from benchwarmers.catalog.names import NameIndex
from benchwarmers.catalog.roles import auto, unfit
from tests.helpers.catalog import sample


def test_models_dev_sample_gives_the_facts_used():
    p = parse.modelsdev(sample("models.dev-api.json"))["providers"]
    assert p["groq"]["api"] is None and p["openrouter"]["api"] == "https://openrouter.ai/api/v1"
    oss = p["groq"]["models"]["openai/gpt-oss-120b"]
    assert oss == {"name": "GPT OSS 120B", "context_window": 131072, "max_output": 65536, "tools": True,
                   "reasoning": True, "released": "2025-08-05", "price_in": 0.15, "price_out": 0.6,
                   "vision": False, "image_out": False, "text_out": True}
    image = p["openai"]["models"]["gpt-image-1-mini"]
    assert image["image_out"] is True and image["text_out"] is False and "context_window" not in image   # 0: unknown
    assert p["mistral"]["models"]["devstral-small-2507"]["deprecated"] is True
    assert p["openrouter"]["models"]["google/gemma-3-27b-it:free"]["vision"] is True


def test_openrouter_sample_prices_per_million_and_flags():
    m = parse.openrouter(sample("openrouter-models.json"))["models"]
    assert m["openai/gpt-4"]["price_in"] == 30.0 and m["openai/gpt-4"]["price_out"] == 60.0   # "0.00003" per token
    assert m["openai/gpt-4"]["tools"] is False and m["openai/gpt-4"]["released"] == "2023-08-24"
    assert (m["qwen/qwen3-coder:free"]["price_in"], m["qwen/qwen3-coder:free"]["price_out"]) == (0.0, 0.0)
    assert m["qwen/qwen3-coder"]["price_out"] == 1.8 and m["qwen/qwen3-coder"]["max_output"] == 65536
    assert m["google/gemma-3-27b-it:free"]["vision"] is True and m["google/gemma-3-27b-it:free"]["tools"] is False


@pytest.mark.parametrize("source, name", [("models.dev", "models.dev-api.json"),
                                          ("openrouter", "openrouter-models.json")])
def test_a_trimmed_copy_parses_the_same_and_keeps_only_the_fields_used(source, name):
    raw = sample(name)
    trimmed = parse.trim(raw, parse.KEEP[source])
    assert parse.PARSERS[source](trimmed) == parse.PARSERS[source](raw)
    text = str(trimmed)
    assert "knowledge" not in text and "cache_read" not in text and "description" not in text
    assert len(text) < len(str(raw))


@pytest.mark.parametrize("source, data", [
    ("models.dev", []), ("models.dev", {"groq": {"name": "Groq"}}), ("models.dev", {"x": {"models": {}}}),
    ("openrouter", {"models": []}), ("openrouter", {"data": []}), ("openrouter", {"data": [{"name": "no id"}]}),
    ("freellmapi", {"models": [{"id": "no platform"}]}),
])
def test_anything_but_the_documented_shape_is_refused(source, data):
    with pytest.raises(ValueError):
        parse.PARSERS[source](data)


def test_served_names_match_exactly_or_by_the_documented_fallbacks():
    index = NameIndex(["openai/gpt-oss-120b", "qwen/qwen3-coder", "qwen/qwen3-coder:free", "llama3.2"])
    assert index.find("qwen/qwen3-coder:free") == ("qwen/qwen3-coder:free", True)
    assert index.find("QWEN/Qwen3-Coder") == ("qwen/qwen3-coder", True)                 # case only: exact
    assert index.find("gpt-oss-120b") == ("openai/gpt-oss-120b", False)                 # vendor prefix dropped
    assert index.find("llama3.2:latest") == ("llama3.2", False)                         # Ollama's tag dropped
    assert index.find("qwen/qwen3-coder:beta") == ("qwen/qwen3-coder", False)           # the untagged one first
    assert index.find("mistral-large") == (None, False)


@pytest.mark.parametrize("url, provider", [
    ("https://api.groq.com/openai/v1", "groq"), ("https://openrouter.ai/api/v1/", "openrouter"),
    ("https://generativelanguage.googleapis.com", "google"), ("https://api.deepseek.com/v1", "deepseek"),
    ("https://open.bigmodel.cn/api/paas/v4", "zai"), ("https://models.github.ai/inference", "github-models"),
    ("http://127.0.0.1:11434", vendors.LOCAL), ("http://localhost:8000/v1", vendors.LOCAL),
    ("https://llm.example.com/v1", None),
])
def test_an_endpoint_is_matched_to_its_provider_by_base_url(url, provider):
    pairs = vendors.prefixes(parse.modelsdev(sample("models.dev-api.json"))["providers"])
    assert vendors.match(url, pairs) == provider


def indexed() -> Indexed:
    copies = {"models.dev": store.Copy("models.dev", "fetched", "2026-12-01", "", "",
                                       parse.modelsdev(sample("models.dev-api.json"))),
              "openrouter": store.Copy("openrouter", "fetched", "2026-12-01", "", "",
                                       parse.openrouter(sample("openrouter-models.json"))),
              "freellmapi": store.Copy("freellmapi", "shipped", "2026-06-09", "", "", parse.freellmapi({"models": [
                  {"platform": "groq", "id": "openai/gpt-oss-120b", "context_window": 100000, "tools": 1}]}))}
    return Indexed(copies)


def sources_of(facts: dict) -> dict:
    return {k: v["source"] for k, v in facts.items()}


def test_each_fact_comes_from_the_first_source_that_states_it():
    ix = indexed()
    listed = {"context_window": 8000, "vision": True, "max_output": 999}
    facts = merge(ix, "groq", "openai/gpt-oss-120b", listed, {"context_window": 64000})
    assert facts["context_window"] == {"value": 64000, "source": "override"}
    assert facts["vision"] == {"value": False, "source": "models.dev/groq"}               # beats the endpoint list
    assert facts["price_in"] == {"value": 0.15, "source": "models.dev/groq"}
    # a model models.dev does not list at that provider: OpenRouter's list, then the endpoint's own list
    facts = merge(ix, "groq", "qwen/qwen3-coder", {"vision": True}, {})
    assert facts["context_window"]["source"] == "openrouter" and facts["vision"]["source"] == "openrouter"
    assert "price_in" not in facts                    # OpenRouter's price is not Groq's
    facts = merge(ix, "groq", "unlisted-model", {"context_window": 4096}, {})
    assert sources_of(facts) == {"context_window": "endpoint list"}


def test_freellmapi_fills_in_after_openrouter_and_a_free_tier_is_a_zero_price():
    ix = indexed()
    facts = merge(ix, "groq", "openai/gpt-oss-120b", {}, {})
    assert facts["context_window"]["source"] == "models.dev/groq"    # models.dev first
    ix.providers["groq"]["models"].clear()
    ix.by_provider["groq"] = NameIndex([])
    facts = merge(ix, "groq", "openai/gpt-oss-120b", {}, {})
    assert facts["context_window"] == {"value": 100000, "source": "FreeLLMAPI (2026-06)"}
    assert facts["tools"]["source"] == "FreeLLMAPI (2026-06)"
    assert facts["price_in"] == {"value": 0.0, "source": "FreeLLMAPI (2026-06)"}


def test_a_price_needs_the_serving_provider_and_the_exact_served_name():
    ix = indexed()
    free = merge(ix, "openrouter", "qwen/qwen3-coder:free", {}, {})
    paid = merge(ix, "openrouter", "qwen/qwen3-coder", {}, {})
    assert (free["price_in"]["value"], paid["price_out"]["value"]) == (0.0, 1.8)
    tagged = merge(ix, "openrouter", "qwen/qwen3-coder:nitro", {}, {})      # a fallback match: facts, no price
    assert tagged["context_window"]["value"] == 1048576 and "price_in" not in tagged
    elsewhere = merge(ix, None, "gpt-5-nano", {}, {})                        # unknown endpoint: facts only
    assert elsewhere["vision"]["source"] == "models.dev/openai (same model, another provider)"
    assert "price_in" not in elsewhere


def test_a_local_server_costs_nothing_and_its_names_prove_nothing():
    facts = merge(indexed(), vendors.LOCAL, "gpt-5-nano", {"context_window": 32768}, {})
    assert sources_of(facts) == {"context_window": "endpoint list", "price_in": "local endpoint",
                                 "price_out": "local endpoint"}


def test_roles_come_from_facts_and_names_and_decide_what_fits_a_purpose():
    assert auto("gpt-image-1-mini", {"image_out": True}) == ["image"]
    assert auto("nvidia/nemotron-nano-12b-v2-vl:free", {"vision": True, "reasoning": True}) == \
        ["vision-only", "light", "reasoning"]
    assert auto("qwen/qwen3-coder", {"vision": False}) == ["general", "code"]
    assert auto("meta-llama/llama-3.2-3b-instruct:free", {}) == ["general", "light"]
    assert auto("qwen/qwen3-235b-a22b", {}) == ["general"]          # 'a22b' counts active weights, not size
    assert auto("gemini-2.5-flash-lite", {"vision": True}) == ["general", "light"]
    assert unfit(["image"], "review") == "role image does not fit purpose 'review'"
    assert unfit(["general", "light"], "design") == "role light does not fit purpose 'design'"
    assert unfit(["general", "light"], "review") is None
    assert unfit(["general"], "image") == "roles general do not fit purpose 'image' (it wants image)"
    assert unfit(["image"], "") == "role image does not fit a collection with no purpose"
    assert unfit(["vision-only"], "") is None
