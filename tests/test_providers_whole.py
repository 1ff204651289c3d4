"""Every adapter asked for a whole answer (stream off; Gemini's generateContent), as panel seats ask: what is sent,
what comes back, and every fault a whole body can have, through a proxy and over TLS too."""
from __future__ import annotations

import json
import socket

import pytest

from benchwarmers.canonical import LENGTH, STOP, TOOL_CALLS, Ask, Message, Text
from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import Transport, make_provider
from tests.fakes import FakeOpenAI, FakeProxy, Reply
from tests.test_providers_common import APIS, ASK, KEY, QUICK, pair  # noqa: F401 (pair: the fixture, shared)
from tests.test_transport import cert, no_proxy_env  # noqa: F401 (fixtures, shared)


def whole(p, model: str = "m", **kw):
    return p.complete(ASK, model, whole=True, **kw)


def failure(call) -> UpstreamFailed:
    with pytest.raises(UpstreamFailed) as info:
        call()
    return info.value


def asked_whole(fake) -> bool:
    """The last call asked for one body: no stream flag set, Gemini's non-streaming method."""
    rec = [r for r in fake.requests if r.method == "POST"][-1]
    if fake.protocol == "gemini":
        return rec.path.endswith(":generateContent") and "alt" not in rec.query
    return rec.body.get("stream") is False and "stream_options" not in rec.body


def test_a_whole_answer_is_asked_and_read_whole(pair):
    p, fake = pair
    answer = whole(p, "m1")
    assert asked_whole(fake)
    assert answer.text == "m1 says: what is two plus two?" and answer.finish_reason == STOP
    assert answer.usage.input_tokens == 5 and answer.usage.output_tokens == 7 and answer.model == "m1"
    assert answer.ttft is None and answer.seconds > 0     # one body: no time to a first token to speak of
    whole(p, "m1")
    assert fake.connections == 1                           # read to its end: the connection is reused


def test_tool_calls_reasoning_and_finish(pair):
    p, fake = pair
    args = {"city": "Zürich", "days": [1, 2]}
    fake.script("m", [Reply(tool_calls=[("weather", args), ("clock", {})]), Reply(text="four", reasoning="2+2"),
                      Reply(text="cut", finish="length")])
    calls = whole(p)
    assert [c.name for c in calls.tool_calls] == ["weather", "clock"] and calls.finish_reason == TOOL_CALLS
    assert json.loads(calls.tool_calls[0].arguments) == args and all(c.id for c in calls.tool_calls)
    thought = whole(p)
    assert thought.text == "four" and thought.reasoning[0].text == "2+2"
    assert whole(p).finish_reason == LENGTH


def test_a_server_that_streams_anyway_is_read_as_a_stream(pair):
    p, fake = pair
    fake.script("m", Reply(text="a b c", always_stream=True))
    assert whole(p).text == "a b c"


@pytest.mark.parametrize("status, kind", [(404, "not_found"), (429, "rate_limited"), (500, "server"),
                                          (400, "bad_request")])
def test_http_errors(pair, status, kind):
    p, fake = pair
    fake.script("m", Reply.error(status, message="the upstream's own words"))
    err = failure(lambda: whole(p))
    assert err.kind == kind and "the upstream's own words" in err.message


def test_an_error_in_a_200_body(pair):
    p, fake = pair
    fake.script("m", Reply(stream_error=f"Overloaded, key {KEY}"))
    err = failure(lambda: whole(p))
    assert "Overloaded" in err.message and KEY not in str(err)


def test_timeouts_before_and_inside_the_body(pair):
    p, fake = pair
    fake.script("m", [Reply(delay=2), Reply(stall=True)])
    err = failure(lambda: whole(p, timeouts=QUICK))
    assert err.kind == "timeout" and "no response within 0.5s" in err.message
    err = failure(lambda: whole(p, timeouts=QUICK))
    assert err.kind == "timeout" and "stopped sending" in err.message


def test_a_cut_body_and_garbage(pair):
    p, fake = pair
    fake.script("m", [Reply(drop_after=1), Reply(garbage=True)])
    assert failure(lambda: whole(p)).kind == "dropped"
    assert failure(lambda: whole(p)).kind == "bad_response"
    assert whole(p).text.startswith("m says")             # and the next call is fine


def test_a_stale_pooled_connection_is_retried_once():
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        whole(p)
        fake.drop_connections()                           # the server closed the idle keep-alive
        assert whole(p).text.startswith("m says")
        assert fake.connections == 2 and p.transport.connections_opened == 2


@pytest.fixture
def upstream_test_resolves(monkeypatch):
    """The name upstream.test resolves to 127.0.0.1 (this machine has no DNS for it), as a real host name would."""
    real = socket.getaddrinfo

    def resolve(host, *args, **kw):
        return real("127.0.0.1" if host == "upstream.test" else host, *args, **kw)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)


def test_proxies_from_the_environment(no_proxy_env, upstream_test_resolves):
    with FakeOpenAI() as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        url = f"http://upstream.test:{fake.port}/v1"
        assert whole(make_provider("openai", url, None, transport=Transport())).text.startswith("m says")
        assert proxy.seen[0]["target"] == f"http://upstream.test:{fake.port}/v1/chat/completions"
        no_proxy_env.setenv("NO_PROXY", "upstream.test")   # named in NO_PROXY: asked directly
        assert whole(make_provider("openai", url, None, transport=Transport())).text.startswith("m says")
        assert len(proxy.seen) == 1 and len(fake.requests) == 2


def test_over_tls_directly_and_through_a_tunnel(cert, no_proxy_env):
    no_proxy_env.setenv("SSL_CERT_FILE", cert[0])
    with FakeOpenAI(tls=cert, host_name="localhost") as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        assert fake.url.startswith("https://localhost:")
        assert whole(p).text.startswith("m says") and whole(p).text.startswith("m says")
        assert fake.connections == 1
    with FakeOpenAI(tls=cert, host_name="upstream.test") as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        p = make_provider("openai", fake.url, None, transport=Transport())
        assert whole(p).text.startswith("m says") and whole(p).text.startswith("m says")
        assert [s["method"] for s in proxy.seen] == ["CONNECT"] and fake.connections == 1
