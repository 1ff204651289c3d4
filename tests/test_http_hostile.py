"""Hostile bytes on the wire, sent raw to the real service: request smuggling through conflicting framing headers,
request lines http.server would answer without a status line, vague error bodies, and slow clients (slowloris)
that once held a thread for as long as they liked."""
from __future__ import annotations

import json
import select
import socket
import ssl
import time
from urllib.parse import urlsplit

import pytest

from benchwarmers.server import handler, requestbody

WAIT = 10.0   # how long a test waits for an answer it expects; generous, never a speed claim


def send(url: str, data: bytes, *, shut: bool = False, wait: float = WAIT) -> tuple[bytes, bool]:
    """Send these exact bytes; (everything that came back, whether the service closed the connection) after
    `wait` seconds at most. `shut` ends our side of the connection after sending."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=wait) as s:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        return read_all(s, wait)


def read_all(s: socket.socket, wait: float) -> tuple[bytes, bool]:
    got, end = b"", time.monotonic() + wait
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return got, False
        except ConnectionResetError:
            return got, True
        if not chunk:
            return got, True
        got += chunk
    return got, False


def answers(data: bytes) -> list[tuple[int, dict, bytes]]:
    """Each response in a byte stream of Content-Length-framed responses: (status, headers, body)."""
    found = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"a response without the blank line after its head: {data[:200]!r}"
        lines = head.decode("iso-8859-1").split("\r\n")
        assert lines[0].startswith("HTTP/1.1 "), f"no status line: {data[:200]!r}"
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers["content-length"])
        found.append((int(lines[0].split()[1]), headers, rest[:length]))
        data = rest[length:]
    return found


def only_answer(data: bytes, closed: bool) -> tuple[int, dict, dict]:
    """The one response, with Connection: close and the connection closed after it: (status, headers, error)."""
    got = answers(data)
    assert len(got) == 1, f"expected one answer, got {len(got)}: {data[:400]!r}"
    status, headers, body = got[0]
    assert headers.get("connection") == "close" and closed, "the connection must close after this answer"
    assert headers["content-type"].startswith("application/json")
    return status, headers, json.loads(body)["error"]


def host(service) -> str:
    return f"Host: 127.0.0.1:{urlsplit(service.url).port}\r\n"


def smuggled(service) -> bytes:
    """A second request hidden in the first one's body: it must never be answered."""
    return f"GET /bench/status HTTP/1.1\r\n{host(service)}\r\n".encode()


# ---- 1. framing headers that disagree: request smuggling --------------------------------------------------

@pytest.mark.parametrize("first, second", [("own", "2"), ("2", "own")])
def test_conflicting_content_lengths_are_400_and_the_smuggled_request_is_never_answered(service, first, second):
    body = b"{}" + smuggled(service)
    values = {"own": str(len(body)), "2": "2"}
    request = (f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}Content-Type: application/json\r\n"
               f"Content-Length: {values[first]}\r\nContent-Length: {values[second]}\r\n\r\n").encode() + body
    status, _, error = only_answer(*send(service.url, request))
    assert status == 400 and "Content-Length" in error["message"] and "one" in error["message"]


def test_identical_content_lengths_count_as_one(service):
    request = (f"GET /healthz HTTP/1.1\r\n{host(service)}Content-Length: 0\r\nContent-Length: 0\r\n\r\n"
               f"GET /healthz HTTP/1.1\r\n{host(service)}Connection: close\r\n\r\n").encode()
    got = answers(send(service.url, request)[0])
    assert [status for status, _, _ in got] == [200, 200]          # both answered, on one connection


@pytest.mark.parametrize("hosts", [["evil.example", "OWN"], ["OWN", "evil.example"], ["OWN", "OWN"]])
def test_more_than_one_host_header_is_400(service, hosts):
    own = host(service)[len("Host: "):-2]
    lines = "".join(f"Host: {own if h == 'OWN' else h}\r\n" for h in hosts)
    status, _, error = only_answer(*send(service.url, f"GET /healthz HTTP/1.1\r\n{lines}\r\n".encode()))
    assert status == 400 and "Host" in error["message"] and "one" in error["message"]


@pytest.mark.parametrize("framing", [
    "Content-Length: {n}\r\nTransfer-Encoding: chunked\r\n",
    "Transfer-Encoding: chunked\r\nContent-Length: {n}\r\n",
    "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",      # read as one list: gzip, chunked
    "Content-Length : {n}\r\n",                                          # a space before the colon (RFC 9112 5.1)
])
def test_framing_the_service_cannot_be_sure_of_is_400_and_nothing_smuggled_is_answered(service, framing):
    body = b"0\r\n\r\n" + smuggled(service)
    head = f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}{framing.format(n=len(body))}\r\n"
    status, _, error = only_answer(*send(service.url, head.encode() + body))
    assert status == 400 and ("Transfer-Encoding" in error["message"] or "colon" in error["message"])


@pytest.mark.parametrize("fold", ["X-Note: a\r\n b\r\n", "X-Note: a\r\n\tTransfer-Encoding: chunked\r\n",
                                  "Content-Length: 5\r\n  0\r\n"])
def test_a_folded_header_line_is_400_and_nothing_after_it_is_answered(service, fold):
    """A line starting with a space or tab continued the header before it; a proxy in front may read it as a header
    of its own (Transfer-Encoding) or drop it, and frame the body otherwise than the service did."""
    body = b"0\r\n\r\n" + smuggled(service)
    head = f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}{fold}Content-Type: application/json\r\n\r\n"
    status, _, error = only_answer(*send(service.url, head.encode() + body))
    assert status == 400 and "folded header" in error["message"]


@pytest.mark.parametrize("target", ["http://evil.example/bench/status", "http://evil.example:80/healthz",
                                    "ftp://OWN/healthz", "http://127.0.0.1:1/healthz"])
def test_an_absolute_form_target_must_name_this_services_own_host(service, target):
    """The target's host is the one a proxy routes by, and RFC 9112 3.2.2 has it win over Host: one naming another
    host was served as if it named this one."""
    own = host(service)[len("Host: "):-2]
    status, _, error = only_answer(*send(service.url, f"GET {target.replace('OWN', own)} HTTP/1.1\r\n"
                                                      f"{host(service)}\r\n".encode()))
    assert status == 400 and "names a host other than" in error["message"]


def test_an_absolute_form_target_naming_this_service_is_served(service):
    own = host(service)[len("Host: "):-2]
    got = send(service.url, f"GET http://{own}/healthz HTTP/1.1\r\n{host(service)}Connection: close\r\n\r\n"
               .encode())[0]
    assert answers(got)[0][0] == 200


# ---- 2. bad request lines: always a well-formed HTTP/1.1 answer, then closed ----------------------------

def client_hello() -> bytes:
    """The first bytes a TLS client sends (a client speaking https to the plain HTTP port)."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@pytest.mark.parametrize("line, status, words", [
    (b"GET /healthz HTTP/2.0\r\n\r\n", 505, "Invalid HTTP version (2.0)"),
    (b"GET /healthz HTTP/0.9\r\n\r\n", 505, "Invalid HTTP version (0.9)"),
    (b"GET /healthz HTTP/1.x\r\n\r\n", 400, "HTTP/1.1"),
    (b"GET /healthz HTTP/1.1.1\r\n\r\n", 400, "HTTP/1.1"),
    (b"POST /x\r\n\r\n", 400, "METHOD PATH HTTP/1.1"),
    (b"GET /healthz\r\n", 400, "METHOD PATH HTTP/1.1"),          # HTTP/0.9: once answered with nothing at all
    (b"GET HTTP/1.1\r\n\r\n", 400, "METHOD PATH HTTP/1.1"),
    (b"GET\r\n\r\n", 400, "METHOD PATH HTTP/1.1"),
    (None, 400, "HTTP/1.1"),                                    # a TLS ClientHello
])
def test_a_bad_request_line_gets_a_status_line_and_json(service, line, status, words):
    data, closed = send(service.url, line or client_hello(), shut=line is None)
    got, _, error = only_answer(data, closed)
    assert got == status and words in error["message"]
    assert error["code"] == ("http_version_not_supported" if status == 505 else "bad_request")


# ---- 3. error bodies that say what is wrong -----------------------------------------------------------

def test_a_url_too_long_says_so_and_names_the_limit(service):
    data, closed = send(service.url, b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\n" + host(service).encode() + b"\r\n")
    status, _, error = only_answer(data, closed)
    assert status == 414 and error["code"] == "uri_too_long"
    assert "too long" in error["message"] and "65536" in error["message"]


def test_headers_too_large_have_their_own_code(service):
    many = "".join(f"X-{i}: {i}\r\n" for i in range(101))
    status, _, error = only_answer(*send(service.url, f"GET /healthz HTTP/1.1\r\n{host(service)}{many}\r\n".encode()))
    assert status == 431 and error["code"] == "headers_too_large"
    assert "Too many headers" in error["message"] and "100" in error["message"]


@pytest.mark.parametrize("method", ["get", "G3T", "Get"])
def test_a_method_that_is_not_upper_case_letters_is_400_naming_the_methods(service, method):
    data, closed = send(service.url, f"{method} /healthz HTTP/1.1\r\n{host(service)}\r\n".encode())
    status, _, error = only_answer(data, closed)
    assert status == 400 and error["code"] == "bad_request"
    assert repr(method) in error["message"] and "GET" in error["message"] and "POST" in error["message"]


def test_an_unknown_upper_case_method_still_goes_to_the_routes(service):
    data, _ = send(service.url, f"TRACE /healthz HTTP/1.1\r\n{host(service)}Connection: close\r\n\r\n".encode())
    (status, headers, _), = answers(data)
    assert status == 405 and "GET" in headers["allow"]


# ---- 4. slow clients: deadlines for the whole head and the whole body -----------------------------------

@pytest.fixture
def quick(monkeypatch):
    """Deadlines of about a second, so a slow client is cut off within the test's patience."""
    monkeypatch.setattr(handler, "HEAD_SECONDS", 1.0)
    monkeypatch.setattr(requestbody, "BODY_SECONDS", 1.0)


def trickle(url: str, start: bytes, drip: bytes, every: float = 0.3) -> tuple[bytes, bool]:
    """Send `start`, then `drip` a byte at a time, one every `every` seconds, until the service answers or closes."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=WAIT) as s:
        s.sendall(start)
        end = time.monotonic() + WAIT
        for i in range(len(drip)):
            if time.monotonic() > end or select.select([s], [], [], every)[0]:
                break                                            # an answer (or the close) has come
            try:
                s.send(drip[i:i + 1])
            except OSError:
                break
        return read_all(s, max(0.5, end - time.monotonic()))


def test_a_head_trickled_a_byte_at_a_time_is_cut_off_with_408(service, quick):
    started = time.monotonic()
    data, closed = trickle(service.url, b"GET /healthz HTTP/1.1\r\n", (host(service) + "X-Slow: " + "a" * 200).encode())
    status, _, error = only_answer(data, closed)
    assert status == 408 and error["code"] == "request_timeout"
    assert "1 second" in error["message"] and "head" in error["message"]
    assert time.monotonic() - started < WAIT


def test_a_head_that_never_ends_is_answered_408(service, quick):
    status, _, error = only_answer(*send(service.url, f"GET /healthz HTTP/1.1\r\n{host(service)}".encode()))
    assert status == 408 and "head" in error["message"]


def test_a_request_line_that_never_ends_is_answered_408(service, quick):
    status, _, _ = only_answer(*send(service.url, b"GET /healthz HTT"))
    assert status == 408


def test_a_body_shorter_than_its_content_length_is_answered_408_in_the_api_shape(service, quick):
    head = f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}Content-Type: application/json\r\n"
    data, closed = send(service.url, f"{head}Content-Length: 100\r\n\r\n{{\"model\": ".encode())
    status, _, error = only_answer(data, closed)
    assert status == 408 and error["code"] == "request_timeout"
    assert "10 of 100 bytes" in error["message"] and "body" in error["message"]


@pytest.mark.parametrize("framing, drip", [("Content-Length: 200\r\n", b"x" * 200),
                                           ("Transfer-Encoding: chunked\r\n", b"c8\r\n" + b"x" * 200)])
def test_a_body_trickled_a_byte_at_a_time_is_cut_off_with_408(service, quick, framing, drip):
    head = f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}Content-Type: application/json\r\n{framing}\r\n"
    status, _, error = only_answer(*trickle(service.url, head.encode(), drip))
    assert status == 408 and "body" in error["message"]


def read_one(s: socket.socket) -> int:
    """The status of the one response to come on a kept-alive connection, read to the end of its body."""
    got = b""
    while b"\r\n\r\n" not in got or len(got.partition(b"\r\n\r\n")[2]) < int(
            got.lower().partition(b"content-length:")[2].split(b"\r\n")[0] or 0):
        chunk = s.recv(65536)
        assert chunk, f"the connection closed: {got!r}"
        got += chunk
    return answers(got)[0][0]


def test_the_head_deadline_starts_at_the_first_byte_not_while_a_connection_idles(service, quick):
    parts = urlsplit(service.url)
    ask = f"GET /healthz HTTP/1.1\r\n{host(service)}\r\n".encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=WAIT) as s:
        s.sendall(ask)
        assert read_one(s) == 200
        time.sleep(2.5)                                        # idle past the (patched) deadlines, twice over
        s.sendall(ask[:10])
        time.sleep(0.2)                                        # a head in two pieces, well within its deadline
        s.sendall(ask[10:])
        assert read_one(s) == 200


def test_a_large_body_sent_at_once_is_read_whole_under_the_deadlines(service, quick):
    body = json.dumps({"model": "nosuch", "messages": [{"role": "user", "content": "x" * 2_000_000}]}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\n{host(service)}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    (status, _, answer), = answers(send(service.url, head + body)[0])
    assert status != 408 and "model" in json.loads(answer)["error"]["message"]
