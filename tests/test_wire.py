"""The lean HTTP/1.1 client (providers/wire.py under the transport), byte by byte: body framings, interim and odd
responses, which connections go back to the pool, and every malformed answer becoming a clear UpstreamFailed."""
from __future__ import annotations

import json

import pytest

from benchwarmers.errors import UpstreamFailed
from benchwarmers.providers.framing import iter_sse
from benchwarmers.providers.transport import Timeouts, Transport
from tests.fakes.raw import RawServer, json_response

QUICK = Timeouts(connect=2, first_byte=1, idle=1)


def get(raw: RawServer, transport: Transport, method: str = "POST", body: bytes | None = b"{}", **kw):
    """(status, headers, body) of one request; the response read whole."""
    with transport.request(method, raw.url + "/v1/x", body=body, timeouts=QUICK, **kw) as response:
        return response.status, response.headers, response.read()


def failure(call) -> UpstreamFailed:
    with pytest.raises(UpstreamFailed) as info:
        call()
    return info.value


def test_content_length_and_chunked_bodies_share_one_connection():
    with RawServer([json_response({"n": 1}), json_response({"n": 2}, chunked=True),
                    json_response({"n": 3}, extra="X-Thing: a\r\n\tfolded\r\n")]) as raw:
        t = Transport()
        assert json.loads(get(raw, t)[2]) == {"n": 1}
        assert json.loads(get(raw, t)[2]) == {"n": 2}                   # chunk extensions ignored
        status, headers, body = get(raw, t)
        assert json.loads(body) == {"n": 3} and headers["x-thing"] == "a folded"
        assert raw.connections == 1 and t.connections_opened == 1 and t.idle_connections() == 1


def test_the_request_goes_out_in_one_piece_with_its_headers():
    with RawServer() as raw:
        get(raw, Transport(), headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
            body=b'{"a": 1}')
        head = raw.requests[0]["head"].split("\r\n")
        assert head[0] == "POST /v1/x HTTP/1.1" and f"Host: 127.0.0.1:{raw.port}" in head
        assert "Authorization: Bearer k" in head and "Content-Length: 8" in head
        assert "Accept-Encoding: identity" in head and raw.requests[0]["body"] == b'{"a": 1}'


def test_trailers_interim_responses_and_bare_newlines():
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: yes\r\n\r\n")
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + json_response({"after": "continue"})
    bare = b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok"
    with RawServer([chunked, interim, bare]) as raw:
        t = Transport()
        assert get(raw, t)[2] == b"hello"
        assert json.loads(get(raw, t)[2]) == {"after": "continue"}
        assert get(raw, t)[2] == b"ok"
        assert raw.connections == 1


def test_a_stream_sent_in_pieces_is_read_across_them():
    pieces = [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
              b"7\r\ndata: 1\r\n", b"8\r\n\ndata: 2\r", b"\n2\r\n\n\n\r\n0\r\n\r\n"]
    with RawServer([pieces, pieces]) as raw:
        t = Transport()
        with t.request("POST", raw.url + "/s", body=b"{}", timeouts=QUICK) as response:
            assert list(response.lines()) == [b"data: 1\n", b"data: 2\n", b"\n"]
        assert t.idle_connections() == 1                     # read to its end: the connection is reused
        with t.request("POST", raw.url + "/s", body=b"{}", timeouts=QUICK) as response:
            pieces = list(response.pieces())                  # runs of whole lines, a line never cut between two
        assert b"".join(pieces) == b"data: 1\ndata: 2\n\n" and all(p.endswith(b"\n") for p in pieces)


def test_server_sent_events_are_read_from_runs_of_lines_as_from_single_lines():
    stream = (b": a comment\r\nevent: delta\r\ndata: {\"a\": 1}\r\n\r\ndata:tight\ndata\ndata:  two spaces\n\n"
              b"id: 7\nretry: 10\ndata: caf\xc3\xa9\n\ndata: never closed\n")
    want = [("delta", '{"a": 1}'), ("message", "tight\n\n two spaces"), ("message", "caf\u00e9")]
    lines = [line + b"\n" for line in stream.split(b"\n")[:-1]]
    assert list(iter_sse(lines)) == want
    assert list(iter_sse([stream])) == want


@pytest.mark.parametrize("answer, pooled", [
    (json_response({"k": 1}, extra="Connection: close\r\n"), False),
    (json_response({"k": 1}, version="HTTP/1.0"), False),
    (json_response({"k": 1}, version="HTTP/1.0", extra="Connection: keep-alive\r\n"), True),
    (json_response({"k": 1}), True),
])
def test_which_connections_go_back_to_the_pool(answer, pooled):
    with RawServer([answer]) as raw:
        t = Transport()
        assert json.loads(get(raw, t)[2]) == {"k": 1}
        assert t.idle_connections() == (1 if pooled else 0)


def test_a_body_read_until_the_server_closes():
    with RawServer([("close", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"all\": 1}")]) as raw:
        t = Transport()
        assert json.loads(get(raw, t)[2]) == {"all": 1} and t.idle_connections() == 0


def test_no_body_for_head_and_204():
    with RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", b"HTTP/1.1 204 No Content\r\n\r\n"]) as raw:
        t = Transport()
        assert get(raw, t, method="HEAD", body=None)[2] == b""
        assert get(raw, t)[:3:2] == (204, b"")
        assert raw.connections == 1


@pytest.mark.parametrize("answer, kind", [
    (b"SMTP ready\r\n\r\n", "bad_response"),
    (b"HTTP/1.1 2OO OK\r\n\r\n", "bad_response"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "bad_response"),
    (("close", b"HTTP/1.1 200 OK\r\nContent-Le"), "bad_response"),             # cut inside the headers
    (("close", b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\""), "dropped"),
    (("close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"), "dropped"),
    (("close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n"), "dropped"),
    (("close", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"), "dropped"),
])
def test_malformed_and_cut_answers(answer, kind):
    with RawServer([answer]) as raw:
        assert failure(lambda: get(raw, Transport())).kind == kind


def test_headers_without_end_are_refused(monkeypatch):
    from benchwarmers.providers import wire
    monkeypatch.setattr(wire, "MAX_HEAD", 64)
    with RawServer([b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"x" * 200 + b"\r\n\r\n"]) as raw:
        err = failure(lambda: get(raw, Transport()))
        assert err.kind == "bad_response" and "headers longer than" in err.message


def test_a_line_break_in_a_header_value_is_never_sent():
    with RawServer() as raw:
        err = failure(lambda: get(raw, Transport(), headers={"Authorization": "Bearer a\r\nX-Evil: 1"}))
        assert err.kind == "bad_request" and "line break" in err.message and "Bearer" not in err.message
        assert raw.requests == []


def test_a_server_that_closes_without_answering():
    with RawServer([RawServer.CLOSE]) as raw:
        err = failure(lambda: get(raw, Transport()))         # a fresh connection: not retried
        assert err.kind == "connection" and "closed the connection before answering" in err.message
        assert len(raw.requests) == 1


def test_a_pooled_connection_the_server_closed_is_retried_once():
    # the first answer closes its connection after sending itself, without saying so
    with RawServer([("close", json_response({"n": 1})), json_response({"n": 2})]) as raw:
        t = Transport()
        assert json.loads(get(raw, t)[2]) == {"n": 1}
        assert json.loads(get(raw, t)[2]) == {"n": 2}        # the dead pooled one failed; a fresh one answered
        assert raw.connections == 2 and len(raw.requests) == 2


def test_a_stall_in_the_body_is_an_idle_timeout():
    with RawServer([[b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\":", b""]]) as raw:
        err = failure(lambda: get(raw, Transport()))
        assert err.kind == "timeout" and "stopped sending for 1s" in err.message


def test_no_head_within_the_first_byte_timeout():
    with RawServer([[b"", b"", b""]]) as raw:      # takes the request, says nothing
        err = failure(lambda: get(raw, Transport()))
        assert err.kind == "timeout" and "no response within 1s" in err.message
