"""The transport: keep-alive reuse, stale connections, timeouts, faults, proxies, TLS, rate-limit facts."""
from __future__ import annotations

import shutil
import socket
import subprocess

import pytest

from benchwarmers.canonical import Ask, Message, Text, TextDelta
from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import make_provider, response as response_mod, transport as transport_mod
from benchwarmers.providers.connecting import proxy_for
from benchwarmers.providers.transport import Timeouts, Transport, default_transport
from tests.fakes import FakeGemini, FakeOpenAI, FakeProxy, Reply

ASK = Ask(messages=[Message("user", [Text("hello")])])
QUICK = Timeouts(connect=2, first_byte=0.5, idle=0.5)


@pytest.fixture
def fake():
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
def no_proxy_env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def provider(fake, transport=None, **kw):
    return make_provider("openai", fake.url, "sk-test", name="ep", transport=transport or Transport(), **kw)


def failure(call) -> UpstreamFailed:
    with pytest.raises(UpstreamFailed) as info:
        call()
    return info.value


# ---- keep-alive -------------------------------------------------------------------------------

def test_sequential_calls_share_one_connection(fake):
    p = provider(fake)
    for i in range(5):
        assert p.complete(ASK, f"m{i}").text == f"m{i} says: hello"
    p.list_models()
    fake.script("bad", Reply.error(404))                   # an error body is read whole: the connection survives
    with pytest.raises(UpstreamFailed):
        p.complete(ASK, "bad")
    assert p.complete(ASK, "again").text == "again says: hello"
    assert fake.connections == 1 and p.transport.connections_opened == 1
    assert len(fake.requests) == 8


def test_providers_share_the_process_transport(fake):
    a = make_provider("openai", fake.url, None)
    b = make_provider("openai", fake.url, None, name="other")
    assert a.transport is b.transport is default_transport()


def test_abandoned_stream_closes_its_connection(fake):
    p = provider(fake)
    fake.script("long", Reply(text="one two three four five"))
    events = p.stream(ASK, "long")
    assert isinstance(next(e for e in events if isinstance(e, TextDelta)), TextDelta)
    events.close()                                          # the caller stopped reading mid-stream
    assert p.transport.idle_connections() == 0
    assert p.complete(ASK, "m").text == "m says: hello"    # a fresh connection, and all is well
    assert fake.connections == 2


def test_server_closed_keepalive_is_detected_before_use(fake, monkeypatch):
    monkeypatch.setattr(transport_mod, "FRESH", 0)          # the check runs however briefly it was idle
    p = provider(fake)
    p.complete(ASK, "m")
    fake.drop_connections()
    assert p.complete(ASK, "m").text == "m says: hello"
    assert fake.connections == 2


def test_dead_pooled_connection_is_retried_once_on_a_fresh_one(fake, monkeypatch):
    p = provider(fake)
    p.complete(ASK, "m")
    fake.drop_connections()
    monkeypatch.setattr(transport_mod, "_still_open", lambda sock: True)   # the check misses it: must retry
    assert p.complete(ASK, "m").text == "m says: hello"
    assert fake.connections == 2 and p.transport.connections_opened == 2


def test_streaming_yields_before_the_body_ends(fake):
    fake.script("slow", Reply(text="first words then a stall", stall=True, stall_after=2))
    events = provider(fake).stream(ASK, "slow", timeouts=Timeouts(first_byte=5, idle=30))
    first = next(e for e in events if isinstance(e, TextDelta))  # arrives while the upstream is stalled
    assert first.text.strip() == "first"
    events.close()


# ---- timeouts and faults ----------------------------------------------------------------------

def test_first_byte_timeout(fake):
    fake.script("m", Reply(delay=3))
    err = failure(lambda: provider(fake).complete(ASK, "m", timeouts=QUICK))
    assert err.kind == "timeout" and "no response within 0.5s" in err.message and err.status == 504


def test_idle_timeout_between_chunks(fake):
    fake.script("m", Reply(stall=True))
    err = failure(lambda: provider(fake).complete(ASK, "m", timeouts=QUICK))
    assert err.kind == "timeout" and "stopped sending" in err.message


def test_refused_connection():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]                          # bound, never listening: refused
        p = make_provider("openai", f"http://127.0.0.1:{port}/v1", None, name="dead", transport=Transport())
        err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "connection" and "refused" in err.message and err.hint


def test_dns_failure(monkeypatch, no_proxy_env):
    def no_dns(*a, **kw):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    p = make_provider("openai", "https://api.nowhere.invalid/v1", None, transport=Transport())
    err = failure(lambda: p.complete(ASK, "m"))
    assert err.kind == "connection" and "cannot resolve api.nowhere.invalid" in err.message


def test_connect_timeout(monkeypatch, no_proxy_env):
    def slow(*a, **kw):
        raise TimeoutError("timed out")
    monkeypatch.setattr(socket, "create_connection", slow)
    p = make_provider("openai", "http://10.255.255.1/v1", None, transport=Transport())
    err = failure(lambda: p.complete(ASK, "m", timeouts=QUICK))
    assert err.kind == "timeout" and "could not connect" in err.message


def test_not_an_http_url():
    err = failure(lambda: make_provider("openai", "ftp://example.com/v1", None).complete(ASK, "m"))
    assert err.kind == "connection"


# ---- rate-limit facts -------------------------------------------------------------------------

def test_rate_limit_facts_recorded_from_every_response(fake):
    p = provider(fake)
    fake.script("m", [Reply(headers={"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "41"}),
                      Reply.error(429, style="openrouter", retry_after=30)])
    p.complete(ASK, "m")
    assert p.transport.limits.get("ep")["requests_remaining"] == 41
    err = failure(lambda: p.complete(ASK, "m"))
    facts = p.transport.limits.get("ep")
    assert facts["requests_remaining"] == 0 and facts["requests_limit"] == 20
    assert err.kind == "rate_limited" and err.reset_at == pytest.approx(facts["requests_reset_at"])


def test_facts_kept_under_the_host_when_the_endpoint_has_no_name(fake):
    p = make_provider("openai", fake.url, None, transport=Transport())
    fake.script("m", Reply(headers={"x-ratelimit-remaining-tokens": "999"}))
    p.complete(ASK, "m")
    assert p.transport.limits.get(f"127.0.0.1:{fake.port}")["tokens_remaining"] == 999


def test_gemini_body_retry_delay_recorded():
    with FakeGemini() as fake:
        fake.script("g", Reply.error(429, retry_after=17))
        p = make_provider("gemini", fake.url, "k", name="gem", transport=Transport())
        err = failure(lambda: p.complete(ASK, "g"))
        assert err.retry_after == 17 and p.transport.limits.get("gem")["retry_after"] == 17


# ---- proxies and TLS --------------------------------------------------------------------------

def test_proxy_choice_follows_env(no_proxy_env):
    no_proxy_env.setenv("HTTPS_PROXY", "http://user:p%40ss@proxy.corp:3128")
    no_proxy_env.setenv("HTTP_PROXY", "proxy.corp:8080")
    host, port, auth = proxy_for("https", "api.openai.com")
    assert (host, port) == ("proxy.corp", 3128) and auth == "Basic dXNlcjpwQHNz"      # user:p@ss
    assert proxy_for("http", "example.com") == ("proxy.corp", 8080, None)
    assert proxy_for("https", "localhost") is None                         # loopback: never
    assert proxy_for("http", "127.0.0.1") is None
    no_proxy_env.setenv("NO_PROXY", "internal.example,.corp.lan")
    assert proxy_for("https", "internal.example") is None
    assert proxy_for("https", "llm.corp.lan") is None
    assert proxy_for("https", "api.openai.com") is not None
    no_proxy_env.setenv("NO_PROXY", "*")
    assert proxy_for("https", "api.openai.com") is None


def test_http_through_a_forward_proxy(fake, no_proxy_env):
    with FakeProxy(auth=("bench", "s3cret")) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        p = make_provider("openai", f"http://upstream.test:{fake.port}/v1", "sk-test", transport=Transport())
        assert p.complete(ASK, "m").text == "m says: hello"
        seen = proxy.seen[0]
        assert seen["target"] == f"http://upstream.test:{fake.port}/v1/chat/completions"
        assert seen["headers"]["proxy-authorization"].startswith("Basic ")
        assert fake.last.headers["host"] == f"upstream.test:{fake.port}"
        assert "proxy-authorization" not in fake.last.headers


def test_proxy_that_wants_credentials(fake, no_proxy_env):
    with FakeProxy(auth=("bench", "s3cret")) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url.replace("bench:s3cret@", ""))
        p = make_provider("openai", f"http://upstream.test:{fake.port}/v1", None, transport=Transport())
        err = failure(lambda: p.complete(ASK, "m"))
        assert err.kind == "connection" and err.upstream_status == 407


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
                    "-subj", "/CN=upstream.test", "-addext", "subjectAltName=DNS:upstream.test,DNS:localhost"],
                   check=True, capture_output=True)
    return str(folder / "cert.pem"), str(folder / "key.pem")


def test_https_through_a_connect_tunnel_trusting_ssl_cert_file(cert, no_proxy_env):
    with FakeOpenAI(tls=cert, host_name="upstream.test") as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        no_proxy_env.setenv("SSL_CERT_FILE", cert[0])
        p = make_provider("openai", fake.url, "sk-test", transport=Transport())
        assert fake.url.startswith("https://upstream.test:")
        for _ in range(3):
            assert p.complete(ASK, "m").text == "m says: hello"
        assert [s["method"] for s in proxy.seen] == ["CONNECT"]      # one tunnel, kept alive
        assert proxy.seen[0]["target"] == f"upstream.test:{fake.port}"
        assert fake.connections == 1


def test_untrusted_certificate_is_refused(cert, no_proxy_env):
    with FakeOpenAI(tls=cert, host_name="upstream.test") as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        no_proxy_env.delenv("SSL_CERT_FILE", raising=False)
        p = make_provider("openai", fake.url, "sk-test", transport=Transport())
        err = failure(lambda: p.complete(ASK, "m"))
        assert err.kind == "connection" and "not trusted" in err.message and "SSL_CERT_FILE" in err.hint


def test_an_endless_line_is_refused(fake, monkeypatch):
    monkeypatch.setattr(response_mod, "MAX_LINE", 64)
    fake.script("m", Reply(text="x" * 200, chunk_chars=200))       # one SSE line far longer than the cap
    err = failure(lambda: provider(fake).complete(ASK, "m"))
    assert err.kind == "bad_response" and "longer than" in err.message


def test_a_hangup_shuts_the_held_connection_and_refuses_later_writes():
    """A panel's hang-up reaches the connection its call writes on, never one let go (back in the pool)."""
    from benchwarmers.errors import UpstreamFailed
    from benchwarmers.providers.hangup import Hangup

    class Sock:
        def __init__(self):
            self.shut = False

        def shutdown(self, how):
            self.shut = True

    class Conn:
        def __init__(self):
            self.sock = Sock()

    held, pooled = Conn(), Conn()
    h = Hangup()
    h.hold(pooled)
    h.let_go(pooled)                      # read to its end: back in the pool
    h.hold(held)
    assert h.hang_up("the client went away", "cancelled") and not h.hang_up("again")
    assert held.sock.shut and not pooled.sock.shut and (h.reason, h.tag) == ("the client went away", "cancelled")
    with pytest.raises(UpstreamFailed, match="the call was closed: the client went away"):
        h.hold(Conn())
    assert h.refused and not h.sent
