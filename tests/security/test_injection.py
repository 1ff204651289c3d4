"""Injection: names with slashes, control characters or markup; header injection and open redirects through the
login form; bodies of every wrong type on every JSON route; hostile file names; hand-broken config files."""
from __future__ import annotations

import json
import os

import pytest

from tests.fakes import FakeOpenAI
from tests.helpers.dashboard import Session
from tests.helpers.data import write
from tests.security.attack import ADMIN_HEADERS, TOKEN, bench_data, cli, concrete, label, raw, routes, takes_json

BAD_NAMES = ["team/app", "a\x00b", "a\r\nSet-Cookie: x=1", "evil\u202etxt.exe", "<script>alert(1)</script>",
             "-starts-with-dash", "", "x" * 65, "spa ce", "../up"]


@pytest.fixture
def app(home, fake, make_app):
    bench_data(home, fake)
    return make_app(admin_token=TOKEN)


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_one_name_rule_for_keys_collections_endpoints_and_aliases(app, name):
    asks = [("/bench/keys", {"name": name, "collections": ["core"]}),
            ("/bench/endpoints", {"name": name, "base_url": "http://127.0.0.1:9", "no_key": True})]
    if name:   # an empty alias means "pick one for me"
        asks.append(("/bench/models", {"served": "m-a", "endpoint": "fake", "alias": name}))
    for path, body in asks:
        status, _, reply = app("POST", path, body, headers=ADMIN_HEADERS)
        assert status == 400 and "not a valid name" in json.dumps(reply), (path, name, status, reply)
    status, _, _ = app("PUT", "/bench/collections/" + name, {"members": ["a"]}, headers=ADMIN_HEADERS)
    assert status in (400, 404, 405), (name, status)
    saved = app.bench.config.read("collections.json")["collections"]
    assert set(saved) == {"core", "secret"}


def test_a_key_whose_name_once_held_a_slash_can_still_be_revoked(app):
    app.bench.db.call(lambda c: c.execute(
        "INSERT INTO gateway_keys (name, hash, prefix, collections, rpm, created) VALUES (?, ?, ?, ?, ?, ?)",
        ("team/app", "0" * 64, "bw-", '["core"]', None, 1.0)))
    status, _, reply = app("DELETE", "/bench/keys/team/app", headers=ADMIN_HEADERS)
    assert status == 200 and reply["revoked"], reply


@pytest.mark.parametrize("nxt", ["/\\evil.example", "/\t/evil.example", "//evil.example", "http://evil.example",
                                 "/ok\r\nSet-Cookie: forged=1", "/ok\nLocation: http://evil.example",
                                 "\\\\evil.example", "/\x00x", "/%09/evil.example"])
def test_the_login_form_sends_only_to_a_local_path(home, make_service, nxt):
    from urllib.parse import quote
    svc = make_service(admin_token=TOKEN)
    browser = Session(svc.url)
    status, headers, _ = browser.request(      # %09 stays: a tab once decoded
        "POST", "/login", f"token={TOKEN}&next={quote(nxt, safe='/%:')}&csrf={browser.csrf}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303
    location = headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location
    assert "evil" not in location and not any(c in location for c in "\r\n\t\\")
    assert set(browser.cookies) == {"bw_csrf", "bw_session"}, browser.cookies      # and no forged one
    status, _, page = raw(svc.url, "GET", "/login?next=" + quote(nxt, safe="/%:"))
    assert b"evil.example" not in page and b"forged" not in page


JUNK = [b"[]", b'"text"', b"42", b"null", b'{"model": 5, "messages": "no"}', b'{"name": {"x": 1}}',
        b"[" * 100_000, b"\xff\xfe not utf-8", b'{"members": [1, 2], "collections": 7, "useful": "yes"}']


@pytest.mark.parametrize("route", [r for r in routes() if takes_json(r)], ids=label)
def test_every_json_route_answers_junk_with_a_4xx(app, route):
    """Never a 5xx or a traceback; a 4xx saying what is wrong wherever the route reads a body."""
    reads_body = bool((route.doc or {}).get("requestBody"))
    for junk in JUNK:
        status, _, reply = app(route.method, concrete(route), raw=junk,
                               headers={**ADMIN_HEADERS, "Content-Type": "application/json"})
        assert status < 500 and "Traceback" not in json.dumps(reply), (label(route), junk[:30], status, reply)
        assert 400 <= status or not reads_body, (label(route), junk[:30], status, reply)


@pytest.mark.parametrize("name", ["a\x00b", "x" * 5000, "..", ".%2e", "%00", "style.css\x00.png"])
def test_hostile_static_file_names_are_404(home, make_app, name):
    app = make_app()
    status, _, _ = app("GET", "/static/" + name)
    assert status == 404, name


def test_an_empty_config_file_is_reported_and_never_written_over(home, make_app):
    (home / "config" / "models.json").write_text("", encoding="utf-8")
    app = make_app()
    status, _, reply = app("POST", "/bench/models", {"served": "m-a", "endpoint": "fake"})
    assert 400 <= status < 600 and "empty" in json.dumps(reply)
    assert (home / "config" / "models.json").read_text(encoding="utf-8") == ""
    assert any("empty" in p for p in app("GET", "/bench/status")[2]["config_problems"])


@pytest.mark.parametrize("path, body", [("/v1/models", None), ("/bench/collections", None),
                                        ("/v1/chat/completions", {"model": "bench/core", "messages": [
                                            {"role": "user", "content": "hi"}]})])
def test_a_config_of_the_wrong_shape_gets_a_message_not_a_bare_500(home, make_app, path, body):
    write(home, "collections.json", {"collections": "notadict"})
    app = make_app()
    status, _, reply = app("POST" if body else "GET", path, body)
    assert "collections.json" in json.dumps(reply) and "must be a JSON object" in json.dumps(reply), reply
    assert "internal error" not in json.dumps(reply)


def test_a_failed_config_write_leaves_no_temp_file(home):
    from benchwarmers.store import Config
    cfg = Config(home)
    with pytest.raises(TypeError):
        cfg.write("models.json", {"models": {"a": object()}})     # not JSON: fails mid-write
    assert not [p.name for p in (home / "config").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_the_data_folder_and_the_database_are_for_their_owner_alone(isolated, make_app):
    from benchwarmers import home as home_mod
    home_mod.init(isolated)
    app = make_app(home=isolated)
    app("GET", "/healthz")
    assert isolated.stat().st_mode & 0o077 == 0
    for path in isolated.glob("bench.db*"):
        assert path.stat().st_mode & 0o077 == 0, path


HOSTILE = "fine\x1b]0;owned title\x07\x1b]52;c;ZXZpbA==\x07\r\x1b[2Kforged line\x9b31m\u202eevil"


@pytest.mark.skipif(os.name == "nt" or not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_the_cli_strips_terminal_escapes_from_upstream_text_on_a_terminal(home, make_service):
    """Upstream text once reached the terminal raw: a title change, a clipboard write, a forged line."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent.parent
    with FakeOpenAI() as fake:
        fake.script("*", HOSTILE)
        bench_data(home, fake)
        svc = make_service()
        master, slave = os.openpty()
        env = {**os.environ, "BENCHWARMERS_URL": svc.url, "PYTHONPATH": str(root), "PYTHONIOENCODING": "utf-8"}
        proc = subprocess.Popen([sys.executable, "-m", "benchwarmers", "ask", "core", "hi"], cwd=str(root), env=env,
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        assert proc.wait(timeout=60) == 0, seen
        piped = cli(svc.url, "ask", "core", "hi")          # a pipe gets exactly what the service said
    text = seen.decode("utf-8", "replace")
    assert "fine" in text and "forged line" in text
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text
    assert "\x1b]52" in piped.stdout.decode("utf-8")
