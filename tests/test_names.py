"""Names a new user types: Ollama's `:latest`, close matches for an onboard typo, a duplicate refused before any
endpoint is asked, retired members marked, counted nouns (one helper, words.plural), one list of known names, a
description on every help."""
from __future__ import annotations

import argparse
import io

import pytest

from benchwarmers.cli.main import build_parser, main
from benchwarmers.words import plural
from tests.fakes.ollama import FakeOllama
from tests.fakes.openai import FakeOpenAI
from tests.helpers.dashboard import Session
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.jobs import run_job


@pytest.fixture
def ollama():
    fake = FakeOllama().start()
    fake.set_models(["llama3.2:latest", "qwen3:8b"])
    yield fake
    fake.stop()


@pytest.fixture
def local(app, ollama):
    assert app("POST", "/bench/endpoints", {"name": "local", "base_url": ollama.root, "api": "ollama",
                                            "no_key": True})[0] == 201
    return app


def tags_asked(fake) -> int:
    return sum(1 for r in fake.requests if r.path == "/api/tags")


def test_a_name_without_a_tag_onboards_its_latest(local):
    status, _, data = local("POST", "/bench/models", {"served": "llama3.2", "quick": True})
    assert status == 201, data
    assert data["model"]["served"] == "llama3.2:latest" and data["model"]["alias"] == "llama3.2"
    status, _, data = local("POST", "/bench/models", {"served": "qwen3"})        # only :latest stands in
    assert status == 404


def test_an_onboard_typo_gets_the_close_names(local):
    status, _, data = local("POST", "/bench/models", {"served": "lama3.2"})
    assert status == 404 and "Did you mean 'llama3.2:latest'" in data["error"]["message"]
    status, _, data = local("POST", "/bench/models", {"served": "qwen3:9b", "endpoint": "local"})
    assert status == 404 and "Did you mean 'qwen3:8b'" in data["error"]["message"]


def test_a_duplicate_is_refused_before_any_endpoint_is_asked(local, ollama):
    assert local("POST", "/bench/models", {"served": "llama3.2", "quick": True})[0] == 201
    before = tags_asked(ollama)
    for served in ("llama3.2", "llama3.2:latest"):
        status, _, data = local("POST", "/bench/models", {"served": served})
        assert status == 409 and "already on the bench as 'llama3.2'" in data["error"]["message"]
    assert tags_asked(ollama) == before


def run_cli(url: str, *argv, capsys) -> tuple[int, str, str]:
    code = main(["--url", url, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_refuses_a_duplicate_before_any_progress(service, ollama, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, _ = run_cli(service.url, "endpoint", "add", "local", "--base", ollama.root, "--api", "ollama",
                           "--no-key", capsys=capsys)
    assert code == 0 and "serves 2 models" in out
    code, out, err = run_cli(service.url, "onboard", "llama3.2", "--quick", "--wait", capsys=capsys)
    assert code == 0 and "Onboarded llama3.2" in out and "llama3.2 " in err     # progress lines on stderr
    _, _, item = Http(service.url)("GET", "/bench/onboard/1")
    asked = tags_asked(ollama)
    assert any("found llama3.2:latest on endpoint local" in line for line in item["log_lines"])
    for served in ("llama3.2", "llama3.2:latest"):
        code, _, err = run_cli(service.url, "onboard", served, "--wait", capsys=capsys)
        assert code == 1 and "already on the bench as 'llama3.2'" in err
        assert "queued" not in err and "probing" not in err                     # refused before any progress
    assert tags_asked(ollama) == asked


def test_plural_counts_a_noun():
    assert [plural(n, "model") for n in (0, 1, 2)] == ["0 models", "1 model", "2 models"]
    assert plural(None, "call") == "an unknown number of calls" and plural(1, "entry", "entries") == "1 entry"
    assert plural(3, "explore seat") == "3 explore seats" and plural(2, "entry", "entries") == "2 entries"


def test_one_served_model_is_one_model(service, capsys, monkeypatch):
    """One of each: the CLI, a dashboard note, a job's outcome and the CLI's view of it."""
    fake = FakeOpenAI().start().set_models(["only-one"])
    try:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code, out, _ = run_cli(service.url, "endpoint", "add", "one", "--base", fake.url, "--no-key",
                               capsys=capsys)
        assert code == 0 and "serves 1 model;" in out
        code, out, _ = run_cli(service.url, "endpoint", "test", "one", capsys=capsys)
        assert code == 0 and "it serves 1 model (e.g. only-one)" in out
        page = Session(service.url)
        _, _, d = page.form("/endpoints/one/test", {}, script=True)
        assert d["message"] == "Endpoint one answers: it serves 1 model."
        assert run_cli(service.url, "onboard", "only-one", "--quick", "--wait", capsys=capsys)[0] == 0
        page.form("/collections/save", [("name", "solo"), ("members", "only-one"), ("explore", "0"), ("shadow", "0"),
                                        ("merge_model", "")])
        # a new collection shows its contested points: its referee's call counts too
        assert "Saved collection solo: one ask makes 2 calls." in page.get("/collections/solo")[2]
        assert run_job(service, "probe")["outcome"] == "probed 1 model: 1 answered"
        code, out, _ = run_cli(service.url, "jobs", "show", "1", capsys=capsys)
        assert code == 0 and "1 model, 2 calls: probed 1 model: 1 answered" in out
    finally:
        fake.stop()


def test_bench_collections_marks_retired_and_gone_members(home, service, capsys):
    fake = FakeOpenAI().start()
    try:
        configure(home, {"fake": (fake, "openai")},
                  {"a": ("fake", "m-a"), "old": {"endpoint": "fake", "served": "m-old", "status": "retired",
                                                 "reason": "too slow"}},
                  {"core": {"members": ["a", "old", "lost"], "explore": 0}})
        code, out, err = run_cli(service.url, "collections", capsys=capsys)
        assert code == 0 and "a,old (retired),lost (gone)" in out and "bench model restore" in err
    finally:
        fake.stop()


def test_several_unknown_members_list_the_known_models_once(app):
    configure(app.bench.home, {}, {"alpha": ("x", "m-alpha"), "beta": ("x", "m-beta")})
    status, _, data = app("PUT", "/bench/collections/core", {"members": ["zzz", "qqq", "alpah"]})
    message = data["error"]["message"]
    assert status == 400 and message.count("Known models") == 1 and "did you mean 'alpha'" in message


def test_an_unknown_collection_lists_the_collections_once(app):
    configure(app.bench.home, {}, {"alpha": ("x", "m-alpha")}, {"core": {"members": ["alpha"]}})
    status, _, data = app("POST", "/v1/chat/completions", {"model": "bench/cor",
                                                             "messages": [{"role": "user", "content": "hi"}]})
    message = data["error"]["message"]
    assert status == 404 and "Did you mean 'bench/core'" in message and message.count("core") == 2


def test_every_help_page_opens_with_a_description():
    missing = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    if not sub.description:
                        missing.append(f"{name} {sub_name}")
                    walk(sub, f"{name} {sub_name}")
    walk(build_parser(), "bench")
    assert not missing
