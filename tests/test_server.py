"""The HTTP layer: bind refusal, Host/Origin guards, body limits, error shapes, 404/405, login, clean shutdown."""
from __future__ import annotations

import http.client
import inspect
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from benchwarmers.errors import MethodNotAllowed, NotFound
from benchwarmers.server import guard
from benchwarmers.server.messages import Request
from benchwarmers.server.routes import PUBLIC, Route, RouteTable
from benchwarmers.service.app import App
from benchwarmers.service.lifecycle import BindRefused, Service
from benchwarmers.service.table import build_table

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "server-tests-Kq8vZ2mX4pR7nL"   # generated-looking: a public bind refuses a guessable one

# One JSON route of each API, the shape its errors must take, and a check of that shape.
API_PATHS = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/x:generateContent",
    "ollama": "/api/chat",
    "bench": "/bench/models",
}


def assert_shape(api: str, body, status: int) -> str:
    """The error body is in the API's own shape; returns its message."""
    assert isinstance(body, dict), body
    if api in ("openai", "bench"):
        err = body["error"]
        assert isinstance(err, dict) and isinstance(err["message"], str) and "type" in err
        return err["message"]
    if api == "anthropic":
        assert body["type"] == "error"
        assert isinstance(body["error"]["type"], str)
        return body["error"]["message"]
    if api == "gemini":
        assert body["error"]["code"] == status and body["error"]["status"].isupper()
        return body["error"]["message"]
    if api == "ollama":
        assert isinstance(body["error"], str)
        return body["error"]
    raise AssertionError(api)


def raw(url: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """One request with exactly these headers, no redirects followed: (status, headers, body)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def csrf_pair(url: str) -> tuple[str, str]:
    """The dashboard's CSRF cookie (as a Cookie header) and the token forms carry, from the login page."""
    _, headers, _ = raw(url, "GET", "/login")
    pair = headers["set-cookie"].split(";")[0]
    return pair, pair.split("=", 1)[1]


def login_post(url: str, fields: str, headers: dict | None = None):
    cookie, token = csrf_pair(url)
    hdrs = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie, **(headers or {})}
    return raw(url, "POST", "/login", f"{fields}&csrf={token}".encode(), hdrs)


def as_json(data: bytes):
    return json.loads(data)


def no_traceback(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    assert "Traceback" not in text and 'File "' not in text, text


# ---- bind refusal --------------------------------------------------------------------------------

def test_non_loopback_bind_without_token_is_refused(home):
    with pytest.raises(BindRefused) as err:
        Service(home, host="0.0.0.0")
    assert "BENCHWARMERS_ADMIN_TOKEN" in str(err.value)


def test_short_token_is_refused_too(home):
    with pytest.raises(BindRefused):
        Service(home, host="0.0.0.0", admin_token="too-short")


def test_loopback_names_need_no_token(home, make_service):
    for host in ("127.0.0.1", "localhost"):
        svc = make_service(host=host)
        status, _, _ = raw(svc.url, "GET", "/healthz")
        assert status == 200


def read_lines(stream, into: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        into.put(line)
    into.put(None)


def start_serve(args: list[str], env: dict, script: str = "serve.py") -> tuple[subprocess.Popen, queue.Queue]:
    flags = subprocess.CREATE_NEW_PROCESS_GROUP if os.name == "nt" else 0
    proc = subprocess.Popen([sys.executable, str(ROOT / script), *args], cwd=str(ROOT), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, creationflags=flags)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(proc.stderr, lines), daemon=True).start()
    return proc, lines


def wait_for_url(proc: subprocess.Popen, lines: queue.Queue, seen: list, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            break
        seen.append(line)
        m = re.search(r"at (http://\S+)", line)
        if m:
            return m.group(1)
    proc.kill()
    raise AssertionError("no URL printed: " + "".join(seen))


def drain(lines: queue.Queue, seen: list) -> str:
    while True:
        try:
            line = lines.get(timeout=10)
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
    return "".join(seen)


def serve_env(data: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "BENCHWARMERS_ADMIN_TOKEN"}
    env.update(BENCHWARMERS_HOME=str(data), PYTHONPATH=str(ROOT), **extra)
    return env


def stop(proc: subprocess.Popen) -> int:
    if os.name == "nt":
        proc.send_signal(signal.CTRL_BREAK_EVENT)
    else:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_py_refuses_a_public_bind_without_token(home):
    out = subprocess.run([sys.executable, str(ROOT / "serve.py"), "--host", "0.0.0.0", "--port", "0"],
                         cwd=str(ROOT), env=serve_env(home), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "BENCHWARMERS_ADMIN_TOKEN" in out.stderr
    assert "Traceback" not in out.stderr


def test_serve_py_starts_on_a_public_bind_with_a_token(home):
    proc, lines = start_serve(["--host", "0.0.0.0", "--port", "0", "--no-browser"],
                              serve_env(home, BENCHWARMERS_ADMIN_TOKEN=TOKEN))
    seen: list = []
    try:
        url = wait_for_url(proc, lines, seen)
        status, _, body = raw(url, "GET", "/healthz")
        assert status == 200 and as_json(body)["status"] == "ok"
        status, _, _ = raw(url, "GET", "/bench/status")
        assert status == 401
    finally:
        stop(proc)
    assert TOKEN not in drain(lines, seen)


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is a POSIX signal")
def test_serve_py_stops_cleanly_on_sigterm(home):
    proc, lines = start_serve(["--port", "0", "--no-browser"], serve_env(home))
    seen: list = []
    url = wait_for_url(proc, lines, seen)
    assert raw(url, "GET", "/healthz")[0] == 200
    code = stop(proc)
    text = drain(lines, seen)
    assert code == 0, text
    assert "Stopped" in text
    assert "Traceback" not in text
    with pytest.raises(OSError):
        socket.create_connection((urlsplit(url).hostname, urlsplit(url).port), timeout=2).close()


# ---- Host and Origin ---------------------------------------------------------------------------

def test_foreign_host_is_refused(service):
    status, _, body = raw(service.url, "GET", "/healthz", headers={"Host": "evil.example"})
    assert status == 403
    assert "evil.example" in assert_shape("bench", as_json(body), 403)
    status, _, _ = raw(service.url, "GET", "/", headers={"Host": "evil.example:8122"})
    assert status == 403


def test_own_hosts_pass(service):
    port = urlsplit(service.url).port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        assert raw(service.url, "GET", "/healthz", headers={"Host": host})[0] == 200


def test_public_hosts_are_allowed_when_listed(make_service):
    svc = make_service(public_hosts=("bench.example.org", "proxy.example.org:9000"))
    assert raw(svc.url, "GET", "/healthz", headers={"Host": "bench.example.org"})[0] == 200
    assert raw(svc.url, "GET", "/healthz", headers={"Host": "other.example.org"})[0] == 403
    assert raw(svc.url, "GET", "/healthz", headers={"Host": "proxy.example.org:9000"})[0] == 200   # as the hint says
    assert raw(svc.url, "GET", "/healthz", headers={"Host": "proxy.example.org:9001"})[0] == 403


def test_cross_origin_post_is_refused(service):
    form = b"token=x&next=/"
    hdrs = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}
    status, _, body = raw(service.url, "POST", "/login", form, hdrs)
    assert status == 403
    no_traceback(body)
    hdrs = {"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}
    assert raw(service.url, "POST", "/v1/chat/completions", b"{}", hdrs)[0] == 403
    hdrs = {"Content-Type": "application/json", "Origin": "null"}
    assert raw(service.url, "POST", "/v1/chat/completions", b"{}", hdrs)[0] == 403


def test_own_origin_passes_the_guard(service):
    status, headers, _ = login_post(service.url, "token=x&next=/", {"Origin": service.url})
    assert status == 303                          # no token set: login just goes home
    assert headers["location"] == "/"
    status, _, body = raw(service.url, "POST", "/login", b"token=x&next=/",
                          {"Content-Type": "application/x-www-form-urlencoded", "Origin": service.url})
    assert status == 403 and b"expired" in body   # the origin is ours, but there is no CSRF token


# ---- body limits and malformed bodies, in each API's shape -------------------------------------

def small_limit(home: Path) -> None:
    (home / "config" / "settings.json").write_text('{"max_body_mb": 0.001}\n', encoding="utf-8")   # ~1 KB


@pytest.mark.parametrize("api", sorted(API_PATHS))
def test_oversized_body_is_413_in_the_api_shape(home, service, api):
    small_limit(home)
    big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]}).encode()
    status, headers, body = raw(service.url, "POST", API_PATHS[api], big, {"Content-Type": "application/json"})
    assert status == 413
    message = assert_shape(api, as_json(body), 413)
    assert "limit" in message
    assert headers.get("connection", "").lower() == "close"
    assert raw(service.url, "GET", "/healthz")[0] == 200            # the service is fine after


def test_oversized_chunked_body_is_413(home, service):
    small_limit(home)
    parts = urlsplit(service.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        conn.request("POST", "/v1/chat/completions", body=iter([b"x" * 800] * 4),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        resp = conn.getresponse()
        assert resp.status == 413
        assert_shape("openai", json.loads(resp.read()), 413)
    finally:
        conn.close()


def test_bad_content_length_is_400(service):
    status, _, body = raw(service.url, "POST", "/api/chat", None,
                          {"Content-Length": "lots", "Content-Type": "application/json"})
    assert status == 400
    assert_shape("ollama", as_json(body), 400)


def route_exists(method: str, path: str) -> bool:
    try:
        build_table().match(method, path)
        return True
    except (NotFound, MethodNotAllowed):
        return False


@pytest.mark.parametrize("api", sorted(API_PATHS))
def test_malformed_json_is_400_in_the_api_shape(service, api):
    path = API_PATHS[api]
    if not route_exists("POST", path):
        pytest.skip(f"POST {path} is not routed yet")
    status, _, body = raw(service.url, "POST", path, b'{"model": "m", "messages": [', {"Content-Type": "application/json"})
    assert status == 400
    no_traceback(body)
    assert "JSON" in assert_shape(api, as_json(body), 400)


# ---- 404, 405, HEAD /, healthz -----------------------------------------------------------------

@pytest.mark.parametrize("api,path", [("openai", "/v1/no-such-thing"), ("anthropic", "/v1/messages/zz-nope"),
                                      ("gemini", "/v1beta/zz-nope"), ("ollama", "/api/zz-nope"),
                                      ("bench", "/bench/zz-nope")])
def test_unknown_path_is_404_in_the_api_shape(http, api, path):
    status, _, body = http("GET", path)
    assert status == 404
    assert path in assert_shape(api, body, 404)


def test_unknown_page_is_an_html_404(service):
    status, headers, body = raw(service.url, "GET", "/zz-nope")
    assert status == 404
    assert headers["content-type"].startswith("text/html")
    assert b"<h1>404</h1>" in body


def test_wrong_method_is_405_with_allow(service):
    status, headers, body = raw(service.url, "POST", "/healthz", b"{}", {"Content-Type": "application/json"})
    assert status == 405
    assert {m.strip() for m in headers["allow"].split(",")} == {"GET", "HEAD"}
    assert_shape("bench", as_json(body), 405)
    status, headers, _ = raw(service.url, "DELETE", "/login")
    assert status == 405 and "POST" in headers["allow"] and "GET" in headers["allow"]


def test_the_route_table_keeps_its_order_between_literal_and_patterned_routes():
    def named(name):
        return lambda req, ctx: name
    table = RouteTable([Route("GET", "/v1/models/{model}", named("patterned"), "openai", PUBLIC),
                        Route("GET", "/v1/models/special", named("literal"), "openai", PUBLIC),
                        Route("POST", "/v1/models/special", named("literal post"), "openai", PUBLIC),
                        Route("GET", "/v1/{rest:path}", named("catch-all"), "openai", PUBLIC)])
    assert table.match("GET", "/v1/models/special")[0].handler(None, None) == "patterned"   # first in the table
    assert table.match("POST", "/v1/models/special")[0].handler(None, None) == "literal post"
    assert table.match("GET", "/v1/a/b")[0].handler(None, None) == "catch-all"
    assert table.match("GET", "/v1/models/x")[1] == {"model": "x"}
    with pytest.raises(MethodNotAllowed) as info:
        table.match("DELETE", "/v1/models/special")
    assert set(info.value.allow) == {"GET", "HEAD", "POST"}


def test_head_root_answers_without_a_body(make_service):
    for svc in (make_service(), make_service(admin_token=TOKEN)):
        status, _, body = raw(svc.url, "HEAD", "/")
        assert status == 200 and body == b""


def test_healthz_needs_no_auth(make_service):
    svc = make_service(admin_token=TOKEN)
    status, _, body = raw(svc.url, "GET", "/healthz")
    assert status == 200 and as_json(body)["status"] == "ok"


def exchange(service, data: bytes) -> bytes:
    parts = urlsplit(service.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    return got


def test_request_headers_folded_repeated_and_too_many(service):
    port = urlsplit(service.url).port
    got = exchange(service, f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                            "Connection: keep-alive\r\nConnection: close\r\n\r\n".encode())
    assert b" 200 " in got.split(b"\r\n")[0]                 # the last Connection header counts: closed after
    got = exchange(service, f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Long: a\r\n b\r\n\r\n".encode())
    assert b" 400 " in got.split(b"\r\n")[0] and b"folded header" in got    # obs-fold is refused (RFC 9112 5.2)
    many = "".join(f"X-{i}: {i}\r\n" for i in range(101))
    got = exchange(service, f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{many}\r\n".encode())
    assert b" 431 " in got.split(b"\r\n")[0] and b"Too many headers" in got
    got = exchange(service, f"GET /healthz HTTP/1.1\r\nX-Big: {'x' * 70000}\r\n\r\n".encode())
    assert b" 431 " in got.split(b"\r\n")[0] and b"Line too long" in got and b"<html" not in got.lower()
    got = exchange(service, b"GET /healthz HTTP/2.0\r\n\r\n")   # a status line too, not http.server's JSON alone
    assert got.startswith(b"HTTP/1.1 505 ")
    assert json.loads(got.split(b"\r\n\r\n")[-1])["error"]["message"] == "Invalid HTTP version (2.0)"


def test_garbage_request_line_gets_json_not_html(service):
    parts = urlsplit(service.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as s:
        s.sendall(b"GET /a b HTTP/1.1\r\nHost: localhost\r\n\r\n")   # four words: bad syntax
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.") and b" 400 " in head.split(b"\r\n")[0]
    assert b"<html" not in body.lower()
    json.loads(body)


# ---- the admin token: bearer, login page, session cookie ---------------------------------------

def test_status_needs_the_bearer_token(make_service):
    svc = make_service(admin_token=TOKEN)
    status, _, body = raw(svc.url, "GET", "/bench/status")
    assert status == 401
    assert_shape("bench", as_json(body), 401)
    assert TOKEN not in body.decode()
    assert raw(svc.url, "GET", "/bench/status", headers={"Authorization": "Bearer wrong-token-000000000"})[0] == 401
    status, _, body = raw(svc.url, "GET", "/bench/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200
    data = as_json(body)
    assert data["admin_token_set"] is True
    assert TOKEN not in body.decode()


def test_dashboard_redirects_to_login_then_the_cookie_opens_it(make_service):
    svc = make_service(admin_token=TOKEN)
    status, headers, _ = raw(svc.url, "GET", "/")
    assert status == 303 and headers["location"].startswith("/login")

    status, _, body = login_post(svc.url, "token=not-the-token&next=/")
    assert status == 401
    assert b"not the admin token" in body

    status, headers, _ = login_post(svc.url, f"token={TOKEN}&next=/")
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    flags = {p.strip().lower() for p in cookie.split(";")}
    assert "httponly" in flags and "samesite=strict" in flags
    assert TOKEN not in cookie
    pair = cookie.split(";")[0]
    status, headers, _ = raw(svc.url, "GET", "/", headers={"Cookie": pair})
    assert status == 303 and headers["location"] == "/endpoints"      # the first run opens on Endpoints
    status, _, body = raw(svc.url, "GET", "/endpoints", headers={"Cookie": pair})
    assert status == 200 and b"Benchwarmers" in body
    assert TOKEN.encode() not in body
    status, headers, _ = raw(svc.url, "GET", "/endpoints", headers={"Cookie": pair[:-4] + "0000"})
    assert status == 303 and headers["location"].startswith("/login")


def test_login_refuses_an_offsite_next(make_service):
    svc = make_service(admin_token=TOKEN)
    status, headers, _ = login_post(svc.url, f"token={TOKEN}&next=//evil.example/")
    assert status == 303 and headers["location"] == "/"


def test_token_comparisons_are_constant_time():
    from benchwarmers.dashboard.pages import login
    assert "hmac.compare_digest" in inspect.getsource(guard.admin_proof)
    assert "hmac.compare_digest" in inspect.getsource(login.submit)
    assert "==" not in inspect.getsource(guard.admin_proof).split('"""')[-1].replace("!=", "")


# ---- no traceback reaches a client -------------------------------------------------------------

def test_an_unexpected_error_is_a_clean_500_in_the_api_shape(service):
    def boom(req, ctx):
        raise RuntimeError("secret internals at /srv/app.py line 3")
    app = App(service.bench, RouteTable([Route("GET", "/v1/boom", boom, "openai", PUBLIC),
                                       Route("GET", "/boom", boom, "html", PUBLIC)]))
    for path in ("/v1/boom", "/boom"):
        resp = app.handle(Request("GET", path, headers={"host": "127.0.0.1"}))
        assert resp.status == 500
        no_traceback(resp.body)
        assert b"secret internals" not in resp.body
    resp = app.handle(Request("GET", "/v1/boom", headers={"host": "127.0.0.1"}))
    assert json.loads(resp.body)["error"]["type"] == "server_error"


def test_a_broken_settings_file_does_not_take_the_service_down(home, service):
    (home / "config" / "settings.json").write_text('{"max_body_mb": 1,,}', encoding="utf-8")
    assert raw(service.url, "GET", "/healthz")[0] == 200
    status, _, body = raw(service.url, "GET", "/bench/status")
    assert status == 200
    problems = as_json(body)["config_problems"]
    assert len(problems) == 1 and "settings.json:1:" in problems[0]


def test_error_messages_never_carry_a_key(service):
    from benchwarmers.redaction import remember
    remember("sk-live-abcdefghijklmnop")
    status, _, body = raw(service.url, "GET", "/v1/sk-live-abcdefghijklmnop")
    assert status == 404
    assert b"sk-live-abcdefghijklmnop" not in body


def test_json_nested_too_deeply_is_a_400_not_a_500(http):
    status, _, body = http("POST", "/v1/chat/completions", raw=b"[" * 200000 + b"]" * 200000)
    assert status == 400 and "nested too deeply" in body["error"]["message"]
