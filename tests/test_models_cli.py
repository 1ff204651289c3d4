"""The CLI for endpoints and models, run in-process against a real service and fake upstreams."""
from __future__ import annotations

import io
import json

import pytest

from benchwarmers.cli.main import main
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.openai import FakeOpenAI
from tests.fakes.server import Reply

KEY = "sk-test-cli-0123456789abcdef"


@pytest.fixture
def fake():
    f = FakeOpenAI().start().set_models(["m-one", {"id": "vendor/m-two", "context_length": 8192}]).expect_key(KEY)
    yield f
    f.stop()


@pytest.fixture
def bench(service, capsys, monkeypatch):
    """Run `bench ARGS...` with `stdin` text; returns (exit code, stdout, stderr)."""
    def run(*argv, stdin: str = ""):
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(["--url", service.url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_endpoint_add_list_remove(bench, fake, isolated):
    code, out, err = bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY + "\n")
    assert code == 0, err
    assert "Added endpoint oa" in out and "serves 2 models" in out and "keys.json" in out
    code, out, _ = bench("endpoint", "list")
    assert code == 0 and "oa" in out and "openai" in out and "keys.json" in out and KEY not in out
    code, out, _ = bench("endpoint", "list", "--json")
    assert json.loads(out)["endpoints"][0]["key_source"] == "keys.json"
    code, out, err = bench("endpoint", "remove", "oa")          # no terminal, no --yes: refused
    assert code == 1 and "--yes" in err
    code, out, _ = bench("endpoint", "remove", "oa", "--yes")
    assert code == 0 and "Removed endpoint oa" in out
    code, _, err = bench("endpoint", "remove", "oa", "--yes")
    assert code == 1 and "No endpoint named 'oa'" in err


def test_no_key_for_a_local_server(bench):
    local = FakeOpenAI().start().set_models(["local-m"])
    try:
        code, out, err = bench("endpoint", "add", "local", "--base", local.url, "--no-key")
        assert code == 0 and "no key." in out, err
        assert "authorization" not in local.last.headers
        code, out, _ = bench("endpoint", "list")
        assert "no key (local)" in out
    finally:
        local.stop()


@pytest.mark.parametrize("argv", [["oa", KEY, "--base", "http://x/v1"], ["oa", "--base", "http://x/v1", "--key", KEY],
                                  ["oa", "--base", "http://x/v1", f"--key={KEY}"]])
def test_key_as_argument_is_refused_without_echo(argv, bench, fake):
    code, out, err = bench("endpoint", "add", *argv)
    assert code == 2 and "never command-line arguments" in err and "--key-stdin" in err
    assert KEY not in out + err
    assert fake.requests == []


def test_endpoint_add_failure_is_one_line(bench, fake, isolated):
    code, out, err = bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin="sk-wrong-0000000000\n")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "key was refused" in err and "not added" in err
    code, out, _ = bench("endpoint", "list", "--json")
    assert json.loads(out) == {"endpoints": []}


def test_candidates_onboard_models_retire_restore(bench, fake):
    bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY)
    code, out, _ = bench("candidates")
    assert code == 0 and "m-one" in out and "vendor/m-two" in out and "ctx 8192" in out
    code, out, err = bench("onboard", "vendor/m-two", "--quick", "--wait")
    assert code == 0, err
    assert "Onboarded m-two (vendor/m-two); suite owed" in out and "done" in err
    code, out, _ = bench("candidates", "--new")
    assert "m-one" in out and "vendor/m-two" not in out
    code, out, _ = bench("candidates", "--new", "--json")
    assert [c["served"] for c in json.loads(out)["candidates"]] == ["m-one"]
    code, out, _ = bench("models")
    assert code == 0 and "m-two" in out and "active" in out and "8k ctx" in out and "ok" in out
    code, out, _ = bench("models", "--find", "nothing-like-it")
    assert code == 0 and out == ""
    code, _, err = bench("model", "retire", "m-two", "--reason", "too chatty")   # no terminal to ask on, no --yes
    assert code == 1 and "--yes" in err
    code, out, _ = bench("models", "--json", "--find", "m-two")
    assert json.loads(out)["models"][0]["status"] == "active"
    code, out, _ = bench("model", "retire", "m-two", "--reason", "too chatty", "--yes")
    assert code == 0 and "retired: too chatty" in out
    code, out, _ = bench("models", "--json", "--find", "m-two")
    assert json.loads(out)["models"][0]["status"] == "retired"
    code, out, _ = bench("model", "restore", "m-two")
    assert code == 0 and "Restored: m-two is now active." in out
    code, out, _ = bench("model", "show", "m-two")
    assert code == 0 and "onboard" in out and "vendor/m-two" in out
    code, _, err = bench("model", "retire", "m-two")
    assert code == 2 and "--reason" in err


def test_onboard_failures_name_the_fix(bench, fake):
    other = FakeAnthropic().start().set_models(["m-one"]).expect_key(KEY)
    try:
        bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY)
        bench("endpoint", "add", "an", "--base", other.url, "--api", "anthropic", "--key-stdin", stdin=KEY)
        code, out, _ = bench("onboard", "m-one", "--wait")
        assert code == 1 and "--endpoint" in out and "an, oa" in out
        fake.script("m-one", Reply.error(500))
        code, out, err = bench("onboard", "m-one", "--endpoint", "oa", "--wait")
        assert code == 1 and "Nothing was registered" in out and out.count("\n") == 1
        code, _, err = bench("onboard", "m-one", "--endpoint", "nope")
        assert code == 1 and "No endpoint named 'nope'" in err
        code, out, _ = bench("models", "--json")
        assert json.loads(out)["models"] == []
    finally:
        other.stop()


def test_probe_command_and_exit_codes(bench, fake):
    bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY)
    bench("onboard", "m-one", "--alias", "uno", "--quick", "--wait")
    code, out, _ = bench("model", "probe", "uno")
    assert code == 0 and "probe ok" in out
    fake.script("m-one", Reply.error(500))
    code, out, _ = bench("model", "probe", "uno")
    assert code == 1 and "Retired:" in out


def test_no_service_is_exit_3(capsys):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    assert main(["--url", f"http://127.0.0.1:{port}", "models"]) == 3
    assert "No Benchwarmers service" in capsys.readouterr().err


def test_help_has_examples(capsys):
    for argv in (["endpoint", "add", "--help"], ["onboard", "--help"], ["models", "--help"],
                 ["candidates", "--help"], ["model", "retire", "--help"], ["endpoint", "--help"]):
        assert main(argv) == 0
        assert "example" in capsys.readouterr().out, argv


def test_models_show_the_record_with_the_counts_it_rests_on(bench, fake):
    bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY)
    bench("onboard", "m-one", "--alias", "uno", "--quick", "--wait")
    bench("onboard", "vendor/m-two", "--alias", "dos", "--quick", "--wait")
    calls = [json.loads(bench("ask", "uno", f"question {i}", "--json")[1])["bench"]["seats"][0]["call"]
             for i in range(3)]
    code, out, _ = bench("models")
    assert code == 0 and "RECORD" in out and "none judged of 3 asks" in out and "no calls yet" in out
    for call, judged in ((calls[0], ["--useful", "--real", "r1", "--false", "f1"]),
                         (calls[1], ["--not-useful", "--false", "f2", "--false", "f3"])):
        code, _, err = bench("verdict", call, *judged)
        assert code == 0, err
    code, out, _ = bench("models")
    assert code == 0 and "confidently wrong, 50% useful of 2 judged, 3/4 claims false" in out
    code, out, _ = bench("model", "show", "uno")
    assert "Record:   confidently wrong, 50% useful of 2 judged" in out
    record = json.loads(bench("models", "--json", "--find", "uno")[1])["models"][0]["record"]
    assert (record["judged"], record["useful_rate"], record["judged_claims"], record["false_claim_rate"]) == \
        (2, 0.5, 4, 0.75)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_models_fit_a_100_column_terminal_and_print_reasons_whole(bench, fake, service, monkeypatch):
    fake.set_models(["m-one", "vendor/a-rather-long-served-model-name-for-a-table:free"])
    bench("endpoint", "add", "oa", "--base", fake.url, "--key-stdin", stdin=KEY)
    bench("onboard", "m-one", "--alias", "uno", "--quick", "--wait")
    bench("onboard", "vendor/a-rather-long-served-model-name-for-a-table:free", "--alias", "long", "--quick", "--wait")
    reason = "it answers every review with the same paragraph, whatever the diff says, for a week now"
    bench("model", "retire", "long", "--reason", reason, "--yes")
    code, piped, _ = bench("models")
    assert code == 0 and f"long: retired: {reason}" in piped and "a-rather-long-served-model-name-for-a-table:free" \
        in piped                                                            # piped: nothing is cut
    monkeypatch.setenv("COLUMNS", "100")
    screen = Terminal()
    monkeypatch.setattr("sys.stdout", screen)
    assert main(["--url", service.url, "models"]) == 0
    lines = screen.getvalue().splitlines()
    width = lambda text_lines: max(len(line) for line in text_lines if not line.startswith("long: "))
    assert width(lines) <= 100 < width(piped.splitlines())
    assert any("vendor/a-rather-long" in line and "…" in line for line in lines)   # cut to fit, marked
    assert f"long: retired: {reason}" in lines and lines[0].split() == \
        ["ALIAS", "ENDPOINT", "SERVED", "STATUS", "FACTS", "(PRICE", "$/M", "IN/OUT)"]
    assert [line.split()[:2] for line in lines if line.startswith(("uno ", "long "))][2:] == \
        [["long", "ok"], ["uno", "ok"]]                                   # the second table: how each does
