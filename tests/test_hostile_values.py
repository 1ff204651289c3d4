"""Values Python's json lets through but nothing downstream can use (NaN, infinities, 1e400, true as a number, lone
UTF-16 surrogates), and other well-typed nonsense: each is refused with a 400, mended, or passed over in a hand-edited
file, and none of it stops the service or spoils a record."""
from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchwarmers import strictjson
from benchwarmers.server.messages import Response
from tests.helpers.data import configure, write
from tests.helpers.http import Http
from tests.helpers.panel import fake  # noqa: F401 (a started FakeOpenAI)


@pytest.fixture
def api(home, fake, make_service) -> Http:
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b")},
              {"core": {"members": ["a", "b"], "explore": 0}})
    return Http(make_service().url)


def raw(api: Http, method: str, path: str, text: str):
    return api(method, path, raw=text.encode())


def still_answers(api: Http) -> None:
    assert api("GET", "/healthz")[0] == 200
    status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/core",
                                                         "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200 and len(d["bench"]["seats"]) == 2, d


# ---- numbers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ('{"max_body_mb": Infinity}', "Infinity is not a JSON number"),
    ('{"max_body_mb": NaN}', "NaN is not a JSON number"),
    ('{"default_max_tokens": 1e400}', "too large"),
    ('{"max_body_mb": 1e308}', "at most 4,096"),
    ('{"seat_timeout": 1e22}', "at most 86,400"),
    ('{"seat_timeout": true}', "must be a number"),
    ('{"panel_workers": 1.5}', "must be a whole number"),
    ('{"record_max_kb": -Infinity}', "not a JSON number"),
])
def test_settings_refuse_what_would_break_the_service(api, home, text, words):
    status, _, d = raw(api, "POST", "/bench/settings", text)
    assert status == 400 and words in d["error"]["message"], d
    assert not (home / "config" / "settings.json").exists() or "Infinity" not in \
        (home / "config" / "settings.json").read_text()
    still_answers(api)


def test_a_hand_edited_infinity_falls_back_to_the_default(home, fake, make_service):
    configure(home, {"fake": (fake, "openai")}, {"a": ("fake", "m-a"), "b": ("fake", "m-b")},
              {"core": {"members": ["a", "b"], "explore": 0}})
    (home / "config" / "settings.json").write_text(
        '{"max_body_mb": Infinity, "seat_timeout": 1e300, "record_max_kb": NaN, "panel_workers": 2.5}')
    api = Http(make_service().url)
    still_answers(api)
    by = {s["name"]: s["value"] for s in api("GET", "/bench/settings")[2]["settings"]}
    assert (by["max_body_mb"], by["seat_timeout"], by["record_max_kb"], by["panel_workers"]) == (20.0, 300.0, 256.0,
                                                                                                 256)
    status, _, d = api("POST", "/bench/settings", {"max_body_mb": 30})   # mending it through the API works
    assert status == 200 and json.loads((home / "config" / "settings.json").read_text())["max_body_mb"] == 30.0


@pytest.mark.parametrize("text, words", [
    ('{"name": "fake", "rpm": Infinity}', "not a JSON number"),
    ('{"name": "fake", "rpm": 1e300}', "whole number from 1"),
    ('{"name": "fake", "tpd": true}', "whole number from 1"),
    ('{"name": "fake", "rpd": 1000000000000000000000000}', "whole number from 1"),
])
def test_limits_refuse_what_is_not_a_count(api, text, words):
    status, _, d = raw(api, "POST", "/bench/limits", text)
    assert status == 400 and words in d["error"]["message"], d
    still_answers(api)


@pytest.mark.parametrize("body, words", [
    ({"price_in": 1e30}, "at most 10,000"),
    ({"context_window": 1e300}, "at most 1,000,000,000"),
    ({"max_output": 2.5}, "whole number"),
    ({"price_out": True}, "number of dollars"),
])
def test_model_facts_refuse_absurd_numbers(api, home, body, words):
    status, _, d = api("PUT", "/bench/models/a/facts", body)
    assert status == 400 and words in d["error"]["message"], d
    status, _, d = raw(api, "PUT", "/bench/models/a/facts", '{"price_in": Infinity}')
    assert status == 400 and not (home / "config" / "overrides.json").exists()


def test_hand_edited_absurd_facts_are_passed_over(api, home):
    write(home, "overrides.json", {"models": {"a": {"price_in": 1e30, "context_window": 64000}}})
    status, _, d = api("GET", "/bench/models/a")
    text = json.dumps(d)
    assert status == 200 and "1e+30" not in text and "Infinity" not in text, d
    still_answers(api)


@pytest.mark.parametrize("body, words", [
    ({"name": "kx", "collections": 1}, "collections it may reach"),
    ({"name": "kx", "collections": True}, "collections it may reach"),
    ({"name": "ky", "collections": ["core"], "rpm": 10 ** 24}, "from 1 to"),
])
def test_gateway_keys_refuse_bad_collections_and_rates(api, body, words):
    status, _, d = api("POST", "/bench/keys", body)
    assert status == 400 and words in d["error"]["message"], d


def test_a_reply_never_holds_nan_or_infinity():
    assert Response.json({"cost": math.inf, "n": [math.nan, 1.5], "ok": 2}).body == b'{"cost":null,"n":[null,1.5],"ok":2}'
    assert Response.json({"text": "a\ud800b"}).body == b'{"text":"a?b"}'


# ---- text ---------------------------------------------------------------------------------------

def test_strict_loads_refuses_non_json_numbers_and_mends_lone_surrogates():
    for bad in (b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": 1e400}', b'[Infinity]'):
        with pytest.raises(strictjson.NotJson):
            strictjson.loads(bad)
    assert strictjson.loads(b'{"t": "x\\ud800y", "\\udc00": ["\\ud83d\\ude00"]}') == {"t": "x\ufffdy",
                                                                                    "\ufffd": ["\U0001F600"]}
    assert strictjson.loads('{"t": "\\uD8FF"}') == {"t": "\ufffd"}
    assert strictjson.lenient(b'{"a": NaN, "t": "\\udfff"}')["t"] == "\ufffd"


def test_a_lone_surrogate_is_mended_not_a_500_nor_a_spoiled_record(api):
    body = '{"model": "bench/core", "messages": [{"role": "user", "content": "half an emoji: \\ud83d"}]}'
    status, _, d = raw(api, "POST", "/v1/chat/completions", body)
    assert status == 200, d
    seat = d["bench"]["seats"][0]
    assert "\ufffd" in d["choices"][0]["message"]["content"]
    status, _, v = raw(api, "POST", "/bench/verdict",
                       '{"call": "%s", "useful": false, "false": ["\\ud800 claim"], "note": "\\udfff"}' % seat["call"])
    assert status == 200, v
    status, _, call = api("GET", f"/bench/calls/{seat['call']}")
    assert status == 200 and call["verdicts"][-1]["false"] == ["\ufffd claim"], call
    assert api("GET", f"/bench/history/{d['bench']['panel']}")[0] == 200
    for path, text in (("/v1/messages", '{"model": "bench/core", "max_tokens": 50, "messages": [{"role": "user", '
                                        '"content": "\\ud800"}]}'),
                       ("/api/chat", '{"model": "bench/core", "stream": false, "messages": [{"role": "user", '
                                     '"content": "\\udc00"}]}'),
                       ("/v1beta/models/bench/core:generateContent", '{"contents": [{"role": "user", "parts": '
                                                                     '[{"text": "\\ud800"}]}]}')):
        assert raw(api, "POST", path, text)[0] == 200, path


# ---- collections and upstream answers ------------------------------------------------------------

def test_a_member_named_twice_is_one_member(api, home):
    status, _, d = api("PUT", "/bench/collections/dupe", {"members": ["a", "a", "b", "a"], "explore": 0})
    assert status == 200, d
    stored = json.loads((home / "config" / "collections.json").read_text())["collections"]["dupe"]
    assert stored["members"] == ["a", "b"]
    write(home, "collections.json", {"collections": {"hand": {"members": ["b", "b", "a"], "explore": 0}}})
    status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/hand",
                                                         "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200 and [s["model"] for s in d["bench"]["seats"]] == ["b", "a"], d


class WebPage(BaseHTTPRequestHandler):
    """An upstream that answers every POST with a sign-in page, as a wrong base URL or a proxy's wall does."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"<html><body>Please sign in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_web_page_answered_as_200_is_named_as_such(home, fake, make_service):
    page = ThreadingHTTPServer(("127.0.0.1", 0), WebPage)
    threading.Thread(target=page.serve_forever, daemon=True).start()
    try:
        write(home, "endpoints.json", {"endpoints": {
            "fake": {"base_url": fake.url, "api": "openai", "no_key": True},
            "page": {"base_url": f"http://127.0.0.1:{page.server_address[1]}/v1", "api": "openai", "no_key": True}}})
        write(home, "models.json", {"models": {"a": {"endpoint": "fake", "served": "m-a"},
                                               "w": {"endpoint": "page", "served": "m-w"}}})
        write(home, "collections.json", {"collections": {"core": {"members": ["a", "w"], "explore": 0}}})
        api = Http(make_service().url)
        for stream in (False, True):
            status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/core", "stream": stream,
                                                                 "messages": [{"role": "user", "content": "hi"}]})
            assert status == 200
            if not stream:
                by = {s["model"]: s for s in d["bench"]["seats"]}
                assert by["a"]["status"] == "ok" and "web page" in by["w"]["error"], by["w"]
            else:
                assert "web page" in d and "base URL" in d
    finally:
        page.shutdown()
        page.server_close()


@pytest.mark.parametrize("path, body, words", [
    ("/v1/messages", {"model": "bench/core", "max_tokens": 50, "tool_choice": {"x": 1},
                      "messages": [{"role": "user", "content": "hi"}]}, "`tool_choice.type` is missing"),
    ("/v1/chat/completions", {"model": "bench/core", "messages": [{"role": "user", "content": [
        {"type": "text", "text": 5}]}]}, "messages[0].content[0].text"),
    ("/v1/completions", {"model": "bench/core", "prompt": "hi", "n": "x"}, "`n`"),
])
def test_format_fields_of_the_wrong_type_are_named(api, path, body, words):
    status, _, d = api("POST", path, body)
    assert status == 400 and words in json.dumps(d), d


# ---- the second sweep: form charsets, ids past SQLite's range, endless digits, base URLs, keys in prompts -----

def test_a_form_part_in_an_unknown_charset_is_read_as_utf8():
    from benchwarmers.dashboard.web import read_multipart
    for charset in ("bogus-xx", "idna", "punycode", "utf-8"):
        body = (b'--B\r\nContent-Disposition: form-data; name="prompt"\r\nContent-Type: text/plain; charset='
                + charset.encode() + b'\r\n\r\nh\xc3\xa9\r\n--B--\r\n')
        assert read_multipart("multipart/form-data; boundary=B", body).get("prompt") == "h\u00e9", charset


@pytest.mark.parametrize("path", ["/bench/jobs/9223372036854775808", "/bench/jobs/99999999999999999999999",
                                  "/bench/suite/runs/99999999999999999999999", "/bench/suite/runs/-9223372036854775809",
                                  "/settings/jobs/99999999999999999999999.json"])
def test_an_id_past_sqlites_range_is_no_such_row(api, path):
    status, _, d = api("GET", path)
    assert status == 404, (path, status, d)


def test_a_number_of_thousands_of_digits_is_a_400(api):
    for path in (f"/bench/discover?limit={'9' * 4301}", f"/bench/discover?min_context={'9' * 4301}"):
        assert api("GET", path)[0] == 400, path
    assert api("GET", f"/discover?min_context={'9' * 4301}")[0] == 200    # the page leaves the filter out, says so


@pytest.mark.parametrize("base, words", [
    ("http://[::1", "Invalid IPv6 URL"), ("http://127.0.0.1:99999/v1", "Port out of range"), ("http://:80", "no usable host"),
    ("http://127.0.0.1:1/v1 HTTP/1.1\r\nX-Evil: 1", "control character"), ("http://a b/v1", "space"),
    ("http://" + "a" * 300 + ".com/v1", "no usable host"), ("http://\u65e5\u672c.jp/v1", "xn--wgv71a.jp"),
    ("ftp://example.com", "http:// or https://"), ("http://user:pw@example.com", "user name or password"),
])
def test_a_base_url_no_request_could_be_built_on_is_a_400(api, base, words):
    status, _, d = api("POST", "/bench/endpoints", {"name": "bad", "base_url": base, "api": "openai", "no_key": True})
    assert status == 400 and words in d["error"]["message"], d


def test_a_known_key_pasted_into_a_prompt_is_not_recorded(api):
    from benchwarmers import redaction
    redaction.remember("sk-known-0123456789abcdef")
    status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "why does sk-known-0123456789abcdef fail? (an example: sk-example)"}]})
    assert status == 200
    call = api("GET", f"/bench/calls/{d['bench']['seats'][0]['call']}")[2]
    text = json.dumps(call)
    assert "sk-known-0123456789abcdef" not in text and "[redacted]" in text and "sk-example" in text


def test_a_long_bad_name_is_not_echoed_whole():
    from benchwarmers.errors import BadRequest
    from benchwarmers.names import check_name
    with pytest.raises(BadRequest) as got:
        check_name("x y" * 2000, "Key name")
    assert len(got.value.message) < 150 and "..." in got.value.message


@pytest.mark.parametrize("method, path, body, limit", [
    ("PUT", "/bench/collections/core", {"description": "d" * 1001}, "1,000"),
    ("POST", "/bench/models/a/retire", {"reason": "r" * 501}, "500"),
])
def test_descriptions_and_reasons_have_length_caps(api, method, path, body, limit):
    """A description or reason of megabytes was kept in the config and shown on every page that lists it."""
    status, _, d = api(method, path, body)
    assert status == 400 and f"at most {limit}" in d["error"]["message"], d
    field, text = next(iter(body.items()))
    status, _, d = api(method, path, {field: text[:-1]})
    assert status == 200, d


def test_a_verdict_note_and_claims_have_length_caps(api):
    status, _, d = api("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "hi"}]})
    call = d["bench"]["seats"][0]["call"]
    for extra in ({"note": "n" * 4001}, {"real": ["c" * 1001]}, {"false": ["c"] * 101}):
        status, _, d = api("POST", "/bench/verdict", {"call": call, "useful": True, **extra})
        assert status == 400 and "at most" in d["error"]["message"], extra
    assert api("POST", "/bench/verdict", {"call": call, "useful": True, "note": "n" * 4000, "real": ["c" * 1000],
                                          "false": ["c"] * 100})[0] == 200
