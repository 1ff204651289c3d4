"""Rate-limit signals of every provider style, normalised; the per-connection book of facts."""
from __future__ import annotations

import threading
from datetime import datetime, timezone
from email.utils import formatdate

import pytest

from benchwarmers.providers.ratelimits import (RateLimitBook, gemini_retry_delay, parse_duration,
                                               parse_rate_limit_headers, reset_time)

NOW = 1_800_000_000.0


@pytest.mark.parametrize("text, seconds", [
    ("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5s", 0.5), ("7", 7.0), ("2.5", 2.5),
    ("1m30s", 90.0), ("", None), ("soon", None), ("5x", None), ("1s garbage", None),
])
def test_durations(text, seconds):
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_openai_headers():
    facts = parse_rate_limit_headers({
        "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-tokens": "150000",
        "x-ratelimit-remaining-tokens": "149984", "x-ratelimit-reset-tokens": "6m0s"}, NOW)
    assert facts == {"requests_limit": 60, "requests_remaining": 59, "requests_reset_at": NOW + 1,
                     "tokens_limit": 150000, "tokens_remaining": 149984, "tokens_reset_at": NOW + 360}


def test_header_names_are_case_insensitive():
    facts = parse_rate_limit_headers({"X-RateLimit-Remaining-Requests": "3", "Retry-After": "4"}, NOW)
    assert facts == {"requests_remaining": 3, "retry_after": 4.0}


def test_retry_after_seconds_date_and_ms():
    assert parse_rate_limit_headers({"retry-after": "30"}, NOW) == {"retry_after": 30.0}
    dated = parse_rate_limit_headers({"retry-after": formatdate(NOW + 120, usegmt=True)}, NOW)
    assert dated["retry_after"] == pytest.approx(120, abs=1)
    assert parse_rate_limit_headers({"retry-after": formatdate(NOW - 60, usegmt=True)}, NOW) == {"retry_after": 0.0}
    # retry-after-ms is the more precise of the two when both are present
    assert parse_rate_limit_headers({"retry-after-ms": "1500", "retry-after": "2"}, NOW) == {"retry_after": 1.5}
    assert parse_rate_limit_headers({"retry-after": "whenever"}, NOW) == {}


def test_anthropic_headers():
    facts = parse_rate_limit_headers({
        "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2027-01-15T08:00:30Z",
        "anthropic-ratelimit-tokens-limit": "40000", "anthropic-ratelimit-tokens-remaining": "39000",
        "anthropic-ratelimit-tokens-reset": "2027-01-15T08:00:00+00:00",
        "anthropic-ratelimit-input-tokens-remaining": "30000",
        "anthropic-ratelimit-output-tokens-reset": "2027-01-15T08:00:05.5Z",
        "retry-after": "30"}, NOW)
    assert facts["requests_limit"] == 50 and facts["requests_remaining"] == 0
    at = datetime(2027, 1, 15, 8, 0, 0, tzinfo=timezone.utc).timestamp()
    assert facts["requests_reset_at"] == at + 30
    assert facts["tokens_reset_at"] == at
    assert facts["tokens_limit"] == 40000 and facts["tokens_remaining"] == 39000
    assert facts["input_tokens_remaining"] == 30000
    assert facts["output_tokens_reset_at"] == at + 5.5
    assert facts["retry_after"] == 30.0


def test_openrouter_headers_epoch_ms():
    facts = parse_rate_limit_headers({"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
                                      "X-RateLimit-Reset": str(int((NOW + 42) * 1000))}, NOW)
    assert facts == {"requests_limit": 20, "requests_remaining": 0, "requests_reset_at": NOW + 42}


def test_reset_given_as_epoch_seconds_or_delta():
    assert parse_rate_limit_headers({"x-ratelimit-reset": str(int(NOW + 9))}, NOW)["requests_reset_at"] == NOW + 9
    assert parse_rate_limit_headers({"x-ratelimit-reset": "9"}, NOW)["requests_reset_at"] == NOW + 9


def test_nothing_to_say():
    assert parse_rate_limit_headers({"content-type": "application/json"}, NOW) == {}
    assert parse_rate_limit_headers({}, NOW) == {}


def test_gemini_retry_delay():
    body = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]}}
    assert gemini_retry_delay(body) == 30.0
    body["error"]["details"][1]["retryDelay"] = "1.5s"
    assert gemini_retry_delay(body) == 1.5
    assert gemini_retry_delay([body]) == 1.5                  # streamed errors arrive wrapped in a list
    assert gemini_retry_delay({"error": {"code": 429}}) is None
    assert gemini_retry_delay("quota exceeded") is None


def test_reset_time_picks_the_exhausted_limit():
    assert reset_time({"retry_after": 5.0, "requests_reset_at": NOW + 60}, NOW) == NOW + 5
    facts = {"requests_remaining": 10, "requests_reset_at": NOW + 1, "tokens_remaining": 0, "tokens_reset_at": NOW + 30}
    assert reset_time(facts, NOW) == NOW + 30
    assert reset_time({"requests_reset_at": NOW + 7, "tokens_reset_at": NOW + 3}, NOW) == NOW + 3
    assert reset_time({}, NOW) is None


def test_book_merges_per_name_and_is_thread_safe():
    book = RateLimitBook()
    book.record("openrouter", {"requests_limit": 20, "requests_remaining": 5})
    book.record("openrouter", {"requests_remaining": 4, "retry_after": 3.0})
    book.record("openrouter", {"requests_remaining": 3})
    book.record("groq", {})                                     # nothing learned: nothing recorded
    got = book.get("openrouter")
    assert got["requests_limit"] == 20 and got["requests_remaining"] == 3
    assert "retry_after" not in got                             # a retry-after belongs to its own response
    assert "updated_at" in got
    assert book.get("groq") == {} and set(book.snapshot()) == {"openrouter"}
    got["requests_limit"] = 0
    assert book.get("openrouter")["requests_limit"] == 20        # callers get copies

    def hammer(n):
        for i in range(500):
            book.record(f"ep{n % 3}", {"requests_remaining": i})
    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {book.get(f"ep{i}")["requests_remaining"] for i in range(3)} == {499}
