"""Every adapter asked for a whole answer as a panel seat asks now: the request written on a kept-alive connection,
its answer waited for by the waiter's one thread (no thread blocked in recv), read there when it can be read at
once, else by a thread that may block. Every fault the transport handles: timeouts before and inside the body, a
cut body, garbage, a stale pooled connection, errors adapted to and sent again, a proxy, TLS, and the framing of
the bytes themselves (Content-Length, chunked, in pieces)."""
from __future__ import annotations

import gc
import queue
import socket
import threading
import time

import pytest

from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers import Timeouts, Transport, make_provider
from benchwarmers.providers import waiter as waiter_module
from benchwarmers.providers.transport import Sent
from benchwarmers.providers.waiter import Waiter, read_at_once
from benchwarmers.providers.wire import Conn
from tests.fakes import FakeOpenAI, FakeProxy, Reply
from tests.test_providers_common import ASK, KEY, QUICK, pair  # noqa: F401 (pair: the fixture, shared)
from tests.test_providers_whole import upstream_test_resolves  # noqa: F401 (a fixture, shared)
from tests.test_transport import cert, no_proxy_env  # noqa: F401 (fixtures, shared)


@pytest.fixture
def waiter():
    w = Waiter()
    yield w
    w.close()


def warm(p, model: str = "warm") -> None:
    """One blocking call, so a kept-alive connection waits in the pool (a seat only waits without a thread on one)."""
    p.complete(ASK, model, whole=True)


def waited(p, waiter: Waiter, model: str = "m", timeouts: Timeouts | None = None) -> tuple:
    """(where it was read: "waiter" or "thread", the Answer or the UpstreamFailed) as the panel reads a seat."""
    sent = p.send_whole(ASK, model, timeouts=timeouts)
    assert sent is not None, "no kept-alive connection was free"
    box: queue.Queue = queue.Queue()

    def read(where: str, s) -> None:
        try:
            box.put((where, p.complete(ASK, model, timeouts=timeouts, sent=s)))
        except UpstreamFailed as exc:
            box.put((where, exc))

    def heard(s) -> None:
        if read_at_once(s):
            read("waiter", s)
        else:
            threading.Thread(target=read, args=("thread", s)).start()
    assert waiter.watch(sent, heard)
    return box.get(timeout=20)


def test_a_whole_answer_is_read_on_the_waiters_thread_and_its_connection_kept(pair, waiter):
    p, fake = pair
    warm(p)
    where, answer = waited(p, waiter, "m1")
    assert where == "waiter" and answer.text == "m1 says: what is two plus two?"
    assert answer.usage.output_tokens == 7 and answer.ttft is None
    assert waited(p, waiter, "m1")[0] == "waiter"
    assert fake.connections == 1 and p.transport.idle_connections() == 1 and not p.transport.in_flight("bench-ep")


def test_no_free_connection_means_nothing_is_sent(pair):
    p, fake = pair
    assert p.send_whole(ASK, "m") is None and not fake.requests and not p.transport.in_flight("bench-ep")


def test_an_answer_that_arrives_in_pieces_is_read_once_all_of_it_is_in(pair, waiter):
    p, fake = pair
    warm(p)
    fake.script("m", Reply(text="one two three four five", always_stream=True, chunk_delay=0.05))
    where, answer = waited(p, waiter)
    assert where == "waiter" and answer.text == "one two three four five"


@pytest.mark.parametrize("status, kind", [(404, "not_found"), (429, "rate_limited"), (500, "server"),
                                          (400, "bad_request")])
def test_http_errors_are_read_by_a_thread(pair, waiter, status, kind):
    p, fake = pair
    warm(p)
    fake.script("m", Reply.error(status, message="the upstream's own words"))
    where, err = waited(p, waiter)
    assert where == "thread" and isinstance(err, UpstreamFailed)
    assert err.kind == kind and "the upstream's own words" in err.message


def test_nothing_within_the_first_byte_timeout(pair, waiter):
    p, fake = pair
    warm(p)
    fake.script("m", Reply(delay=3))
    started = time.monotonic()
    where, err = waited(p, waiter, timeouts=QUICK)
    assert time.monotonic() - started < 2.5                 # the waiter's timeout, not a second wait after it
    assert where == "waiter" and err.kind == "timeout" and "no response within 0.5s" in err.message
    assert not p.transport.in_flight("bench-ep")


def test_an_answer_that_stops_in_the_middle(pair, waiter):
    p, fake = pair
    warm(p)
    fake.script("m", Reply(stall=True))
    where, err = waited(p, waiter, timeouts=QUICK)
    assert where == "thread" and err.kind == "timeout" and "stopped sending" in err.message


def test_a_cut_body_then_garbage_then_a_good_answer(pair, waiter):
    p, fake = pair
    warm(p)
    fake.script("m", [Reply(drop_after=1), Reply(garbage=True)])
    where, err = waited(p, waiter)
    assert where == "thread" and err.kind == "dropped"
    warm(p)                                                 # the cut connection was closed, not pooled
    assert waited(p, waiter)[1].kind == "bad_response"
    warm(p)
    assert waited(p, waiter)[1].text.startswith("m says")


def test_a_stale_pooled_connection_is_written_again_on_a_fresh_one(waiter):
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p)
        fake.drop_connections()                             # the server closed the idle keep-alive
        where, answer = waited(p, waiter)
        assert where == "thread" and answer.text.startswith("m says")
        assert fake.connections == 2 and p.transport.connections_opened == 2


def test_a_refused_parameter_is_adapted_to_and_sent_again(waiter):
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p, "o-x")
        fake.script("o-x", [Reply.error(400, message="Unsupported parameter: 'max_tokens' is not supported with "
                                                      "this model. Use 'max_completion_tokens' instead."), Reply()])
        ask = ASK.with_max_tokens(100)
        sent = p.send_whole(ask, "o-x")
        box: queue.Queue = queue.Queue()
        waiter.watch(sent, lambda s: box.put(read_at_once(s)))
        assert box.get(timeout=10) is False                 # a 400: for a thread, which may send again
        assert p.complete(ask, "o-x", sent=sent).text.startswith("o-x says")
        bodies = [r.body for r in fake.requests]
        assert bodies[-2]["max_tokens"] == 100 and bodies[-1]["max_completion_tokens"] == 100


def test_through_a_proxy_from_the_environment(no_proxy_env, upstream_test_resolves, waiter):
    with FakeOpenAI() as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        p = make_provider("openai", f"http://upstream.test:{fake.port}/v1", None, transport=Transport())
        warm(p)
        assert waited(p, waiter)[1].text.startswith("m says")   # this proxy closes after each answer: read again
        assert [s["target"] for s in proxy.seen][-1] == f"http://upstream.test:{fake.port}/v1/chat/completions"
        assert all(s["method"] == "POST" for s in proxy.seen) and fake.requests[-1].body["model"] == "m"


def test_over_tls_directly_and_through_a_tunnel(cert, no_proxy_env, waiter):
    no_proxy_env.setenv("SSL_CERT_FILE", cert[0])
    with FakeOpenAI(tls=cert, host_name="localhost") as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p)
        assert waited(p, waiter)[1].text.startswith("m says") and waited(p, waiter)[1].text.startswith("m says")
        fake.script("m", Reply(text="a b c d e f g h", always_stream=True, chunk_delay=0.02))
        assert waited(p, waiter)[1].text == "a b c d e f g h"
        assert fake.connections == 1
    with FakeOpenAI(tls=cert, host_name="upstream.test") as fake, FakeProxy() as proxy:
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p)
        assert waited(p, waiter)[1].text.startswith("m says")
        assert [s["method"] for s in proxy.seen] == ["CONNECT"] and fake.connections == 1


def test_a_full_or_closed_waiter_says_no_and_closing_gives_up_what_it_waits_for(monkeypatch):
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p)
        fake.script("m", Reply(delay=5))
        w = Waiter()
        monkeypatch.setattr(waiter_module, "MOST", 0)
        sent = p.send_whole(ASK, "m")
        assert w.watch(sent, lambda s: None) is False
        monkeypatch.setattr(waiter_module, "MOST", 400)
        heard = []
        assert w.watch(sent, heard.append) and p.transport.in_flight(p.limit_name) == 1
        time.sleep(0.2)
        w.close()
        assert not heard and not p.transport.in_flight(p.limit_name) and sent.conn.sock.fileno() == -1
        assert w.watch(sent, heard.append) is False
        sent.conn.sock.close()
        other = Waiter()
        assert other.watch(sent, heard.append) is False           # a socket it cannot wait on: a worker reads it
        other.close()


# ---- the bytes: is all of a response in? ------------------------------------------------------

def fed(*pieces: bytes, end: bool = False) -> list:
    """Conn.whole() after each piece arrives on a socket (non-blocking, as the waiter holds it)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(0.0)
    conn, seen = Conn(ours), []
    try:
        for piece in pieces:
            theirs.sendall(piece)
            time.sleep(0.01)
            conn.drain()
            seen.append(conn.whole())
        if end:
            theirs.close()
            time.sleep(0.01)
            conn.drain()
            seen.append(conn.whole())
        return seen
    finally:
        ours.close()
        theirs.close()


def test_content_length_in_pieces():
    assert fed(b"HTTP/1.1 200 OK\r\nContent-Le", b"ngth: 5\r\n\r\nab", b"cde") == [None, None, 200]


def test_chunked_with_extensions_and_trailers_in_pieces():
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert fed(head, b"3;x=y\r\nabc\r\n", b"2\r\nde\r\n0\r\n", b"Trailer: 1\r\n", b"\r\n") == \
        [None, None, None, None, 200]


def test_statuses_without_a_body_interim_answers_and_until_close():
    assert fed(b"HTTP/1.1 204 No Content\r\n\r\n") == [204]
    assert fed(b"HTTP/1.1 100 Continue\r\n\r\n") == [100]
    assert fed(b"HTTP/1.0 200 OK\r\n\r\nall of it", end=True) == [None, 200]


def test_what_the_blocking_read_must_judge_is_passed_on():
    assert fed(b"SMTP ready\r\n\r\n") == [0]                            # not HTTP: the read says so
    assert fed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n") == [200]
    assert fed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") == [200]


def test_a_failing_wait_hands_everything_to_the_workers_and_the_waiter_goes_on(waiter):
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        warm(p)
        fake.script("m", Reply(delay=1))
        real, calls = waiter._selector.select, []

        def broken(timeout=None):
            if not calls:
                calls.append(timeout)
                raise OSError("a socket closed under select()")
            return real(timeout)
        waiter._selector.select = broken
        sent = p.send_whole(ASK, "m")
        heard = queue.Queue()
        assert waiter.watch(sent, heard.put)
        got = heard.get(timeout=5)
        assert got is sent and not read_at_once(sent)           # passed on early: a worker reads it, blocking
        assert p.complete(ASK, "m", sent=sent).text.startswith("m says")
        assert waited(p, waiter)[1].text.startswith("m says")   # and the waiter still waits for the next


def test_answered_requests_are_not_kept_by_the_waiter_while_an_earlier_one_is_still_waited_for():
    # each watched request's timeout sits in the waiter's heap, dropped only from its front: behind one request
    # still waited for (a model thinking for minutes), every answered one stayed there, its Sent and connection
    # state with it, for the whole timeout's span; a busy gateway held thousands
    long = Timeouts(connect=5, first_byte=600, idle=600)
    gate = threading.Event()
    with FakeOpenAI() as fake:
        p = make_provider("openai", fake.url, None, transport=Transport())
        w = Waiter()
        try:
            warm(p)
            fake.script("slow", Reply(hold=gate))
            slow = p.send_whole(ASK, "slow", timeouts=long)
            heard = queue.Queue()
            assert w.watch(slow, heard.put)          # the heap's front from now on: due in ten minutes
            warm(p)                                  # a second kept-alive connection for the quick ones
            for _ in range(300):
                assert waited(p, w, "quick", timeouts=long)[0] == "waiter"
            assert w.passed_on == 300 and heard.empty()
            gc.collect()
            # Sent has __slots__ (no weakref to it): the ones of this transport still alive are counted instead
            alive = [o for o in gc.get_objects() if isinstance(o, Sent) and o.transport is p.transport]
            assert any(o is slow for o in alive)
            assert len(alive) <= 70, f"{len(alive)} requests still alive after 300 were answered"
            with w._lock:
                assert len(w._expiries) <= 64 + 2 * len(w._watched)
            gate.set()
            assert heard.get(timeout=10) is slow     # the one still waited for is waited for all the same
            assert p.complete(ASK, "slow", sent=slow, timeouts=long).text.startswith("slow says")
        finally:
            gate.set()
            w.close()
