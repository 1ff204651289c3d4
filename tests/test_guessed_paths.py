"""Paths a client builds from a base URL set wrong (its API prefix missing or doubled): a 404 in that API's own
error shape naming the base URL to use; and the gateway alone saying it serves no dashboard."""
from __future__ import annotations

import pytest

from tests.helpers.panel import bench, fake, setup_bench  # noqa: F401

HOST = {"Host": "127.0.0.1:8122"}


@pytest.mark.parametrize("method, path, meant, base", [
    ("POST", "/chat/completions", "/v1/chat/completions", "http://127.0.0.1:8122/v1"),
    ("POST", "/responses", "/v1/responses", "http://127.0.0.1:8122/v1"),
    ("POST", "/messages", "/v1/messages", "http://127.0.0.1:8122/v1"),
    ("POST", "/v1/v1/messages", "/v1/messages", "http://127.0.0.1:8122."),
    ("POST", "/models/bench/core:generateContent", "/v1beta/models/bench/core:generateContent",
     "http://127.0.0.1:8122/v1beta"),
    ("POST", "/v1beta/v1beta/models/bench/core:streamGenerateContent",
     "/v1beta/models/bench/core:streamGenerateContent", "http://127.0.0.1:8122."),
    ("POST", "/api/api/chat", "/api/chat", "http://127.0.0.1:8122."),
    ("POST", "/v1chat/completions", "/v1/chat/completions", "http://127.0.0.1:8122/v1/."),
])
def test_a_path_off_by_its_prefix_names_the_route_and_base_url(app, method, path, meant, base):
    status, _, data = app(method, path, {}, headers=HOST)
    assert status == 404, data
    text = str(data)
    assert f"the route is {method} {meant}" in text and f"base URL to {base}" in text


def test_get_models_is_the_dashboard_page_and_on_the_gateway_alone_a_hint(app, make_app):
    status, headers, _ = app("GET", "/models", headers=HOST)        # the full service: the Models page wins
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    status, _, data = make_app(role="gateway")("GET", "/models", headers=HOST)
    assert status == 404 and "the route is GET /v1/models" in str(data) and "base URL to http://127.0.0.1:8122/v1" \
        in str(data)


def test_each_api_answers_in_its_own_shape(app):
    _, _, openai = app("POST", "/chat/completions", {}, headers=HOST)
    assert openai["error"]["code"] == "wrong_base_url" and openai["error"]["type"]
    _, _, anthropic = app("POST", "/messages", {}, headers=HOST)
    assert anthropic["type"] == "error" and anthropic["error"]["type"] == "not_found_error"
    _, _, gemini = app("POST", "/models/bench/core:generateContent", {}, headers=HOST)
    assert gemini["error"]["code"] == 404 and gemini["error"]["status"] == "NOT_FOUND"
    _, _, ollama = app("GET", "/tags", headers=HOST)
    assert isinstance(ollama["error"], str) and "/api/tags" in ollama["error"]


def test_an_unknown_path_is_still_a_plain_404(app):
    status, _, data = app("GET", "/nothing/here", headers=HOST)
    assert status == 404 and "No route for GET /nothing/here" in data


def test_the_gateway_alone_says_it_serves_no_dashboard(make_app):
    gateway = make_app(role="gateway")
    status, headers, page = gateway("GET", "/", headers=HOST)
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert "No dashboard here" in page and "python serve.py" in page
    assert gateway("HEAD", "/", headers=HOST)[0] == 200                   # Claude Code's warm-up still answered
    assert gateway("GET", "/login", headers=HOST)[0] == 404


def test_the_openai_sdk_with_a_base_url_missing_v1_is_told_the_right_one(bench):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=bench.url, api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="bench/core", messages=[{"role": "user", "content": "hi"}])
    assert f"base URL to {bench.url}/v1" in str(caught.value)


def test_the_anthropic_sdk_with_v1_in_its_base_url_is_told_to_drop_it(bench):
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(base_url=bench.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as caught:
        client.messages.create(model="bench/core", max_tokens=64, messages=[{"role": "user", "content": "hi"}])
    assert f"base URL to {bench.url}." in str(caught.value)
