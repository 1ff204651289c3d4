"""A provider key appears nowhere but keys.json: not in responses, CLI output, --json, the data folder or logs."""
from __future__ import annotations

import io
import json
import logging

from benchwarmers.cli.main import main
from tests.fakes.canned import Canned
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply

KEY = "sk-test-LEAKCHECK-1234567890"


def echoing_refusal() -> Canned:
    """An upstream that refuses the key and quotes it back, the way some providers do in their 401s."""
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error",
                                 "code": "invalid_api_key"}}).encode()
    return Canned(401, body, {"Content-Type": "application/json"})


def test_the_key_never_leaks(service, http, isolated, capsys, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []      # every response body and CLI output, checked at the end
    fake = FakeOpenAI().start().set_models(["m-one", "m-two"]).expect_key(KEY)
    echo = echoing_refusal()

    def call(method, path, body=None):
        status, _, d = http(method, path, body)
        seen.append(json.dumps(d) if not isinstance(d, str) else d)
        return status, d

    def cli(*argv, stdin=""):
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(["--url", service.url, *argv])
        out, err = capsys.readouterr()
        seen.extend([out, err])
        return code, out, err

    try:
        # a wrong endpoint that quotes the key back in its 401, over the API and the CLI
        status, d = call("POST", "/bench/endpoints", {"name": "echo", "base_url": echo.url, "key": KEY})
        assert status == 502 and "[redacted]" in d["error"]["message"]
        code, _, err = cli("endpoint", "add", "echo", "--base", echo.url, "--key-stdin", stdin=KEY)
        assert code == 1 and "key was refused" in err
        code, _, err = cli("endpoint", "add", "echo", "--base", echo.url, "--key-stdin", "--json", stdin=KEY)
        assert code == 1
        # the real one, then everything a user does with it
        code, out, _ = cli("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", "--json", stdin=KEY + "\n")
        assert code == 0 and json.loads(out)["endpoint"]["key_source"] == "keys.json"
        cli("endpoint", "list")
        cli("endpoint", "list", "--json")
        call("GET", "/bench/endpoints")
        call("GET", "/bench/candidates")
        cli("candidates", "--json")
        assert cli("onboard", "m-one", "--alias", "uno", "--quick", "--json", "--wait")[0] == 0
        call("GET", "/bench/models")
        cli("models", "--json")
        cli("model", "show", "uno", "--json")
        # upstream errors that quote the key, on a probe and on an onboarding
        fake.script("*", Reply.error(401, message=f"Incorrect API key provided: {KEY}"))
        status, d = call("POST", "/bench/models/uno/probe")
        assert status == 200 and d["probe"]["status"] == "failed" and "[redacted]" in d["probe"]["error"]
        code, out, _ = cli("onboard", "m-two", "--json", "--wait")
        assert code == 1 and "Nothing was registered" in out
        call("GET", "/bench/onboard")
        call("GET", f"/bench/onboard/{json.loads(out)['items'][0]['id']}")
        call("GET", "/bench/models/uno")
        cli("model", "show", "uno")
        fake.script("*", Reply.error(429, message=f"too fast for key {KEY}"))
        call("POST", "/bench/models", {"served": "m-two"})
        # a key typed as an argument is refused without repeating it
        code, _, err = cli("endpoint", "add", "x", KEY, "--base", fake.url)
        assert code == 2
        call("DELETE", "/bench/endpoints/oa")
        cli("endpoint", "remove", "echo", "--yes")
    finally:
        fake.stop()
        echo.stop()
    service.bench.db.sync()

    assert len(seen) > 20 and all(KEY not in s for s in seen), [s for s in seen if KEY in s][:1]
    assert KEY not in caplog.text and caplog.records is not None
    leaks = [p for p in isolated.rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
    assert leaks == []
    keys_json = isolated.parent / "llm" / "keys.json"
    assert json.loads(keys_json.read_text())["oa"] == KEY       # the one place it lives
    # the fake did receive it (so the test exercised a real key path)
    assert any(r.headers.get("authorization") == f"Bearer {KEY}" for r in fake.requests)
