"""bench status against a real service, exit 3 when none runs, and an example in every --help."""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchwarmers import __version__
from benchwarmers.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "status-admin-token-9876543210"


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def seed_counts(home: Path) -> None:
    cfg = home / "config"
    (cfg / "endpoints.json").write_text(json.dumps({"endpoints": {
        "a": {"base_url": "http://127.0.0.1:9/v1", "api": "openai"},
        "b": {"base_url": "http://127.0.0.1:9", "api": "ollama"}}}), encoding="utf-8")
    (cfg / "models.json").write_text(json.dumps({"models": {
        m: {"endpoint": "a", "served": m} for m in ("m1", "m2", "m3")}}), encoding="utf-8")
    (cfg / "collections.json").write_text(json.dumps({"collections": {
        "core": {"members": ["m1", "m2"]}}}), encoding="utf-8")


def lines_of(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def test_status_prints_what_runs_and_where(home, service, capsys):
    seed_counts(home)
    assert main(["status", "--url", service.url]) == 0
    out = capsys.readouterr().out
    facts = lines_of(out)
    assert service.url in facts["Service"]
    assert facts["Version"] == __version__
    assert facts["Data folder"] == str(home)
    assert facts["Admin token"] == "not set"
    assert (facts["Endpoints"], facts["Models"], facts["Collections"]) == ("2", "3", "1")


def test_status_with_a_token_says_set_and_never_shows_it(home, make_service, monkeypatch, capsys):
    svc = make_service(admin_token=TOKEN)
    monkeypatch.setenv("BENCHWARMERS_ADMIN_TOKEN", TOKEN)
    assert main(["status", "--url", svc.url]) == 0
    assert main(["status", "--url", svc.url, "--json"]) == 0
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert lines_of(captured.out.split("{")[0])["Admin token"] == "set"
    assert json.loads(captured.out[captured.out.index("{"):])["admin_token_set"] is True


def test_status_without_the_token_is_refused(make_service, capsys):
    svc = make_service(admin_token=TOKEN)
    assert main(["status", "--url", svc.url]) == 1
    assert "admin token" in capsys.readouterr().err


def test_status_reports_a_broken_config_file(home, service, capsys):
    (home / "config" / "models.json").write_text("{oops", encoding="utf-8")
    assert main(["status", "--url", service.url]) == 0
    assert "models.json:1:2" in capsys.readouterr().out


def test_status_with_no_service_exits_3_and_says_what_to_do(capsys):
    url = closed_port_url()
    assert main(["status", "--url", url]) == 3
    err = capsys.readouterr().err
    assert url in err and "No Benchwarmers service answers" in err and "BENCHWARMERS_URL" in err


def test_status_reads_the_url_from_the_environment(service, monkeypatch, capsys):
    monkeypatch.setenv("BENCHWARMERS_URL", service.url + "/v1")
    assert main(["status"]) == 0
    assert service.url in capsys.readouterr().out


def test_python_m_benchwarmers_runs_the_same_cli(service):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "benchwarmers", "status", "--url", service.url, "--json"],
                         capture_output=True, text=True, encoding="utf-8", errors="replace", env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["version"] == __version__
    out = subprocess.run([sys.executable, "-m", "benchwarmers", "status", "--url", closed_port_url()],
                         capture_output=True, text=True, encoding="utf-8", errors="replace", env=env, timeout=60)
    assert out.returncode == 3


# ---- --help -----------------------------------------------------------------------------------

def command_paths(parser: argparse.ArgumentParser, prefix: tuple = ()) -> list[tuple]:
    """Every sub-command (and sub-sub-command) path, e.g. ('status',), ('collection', 'save')."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(prefix + (name,))
                found.extend(command_paths(sub, prefix + (name,)))
    return found


def test_top_level_help_has_examples(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "example" in out.lower() and "bench status" in out


def test_every_sub_command_help_shows_an_example(capsys):
    paths = command_paths(build_parser())
    assert ("status",) in paths and ("serve",) in paths and ("init",) in paths
    missing = []
    for path in paths:
        assert main([*path, "--help"]) == 0
        out = capsys.readouterr().out
        if "example" not in out.lower() or "bench " not in out:
            missing.append(" ".join(path))
    assert not missing, f"--help without an example: {missing}"


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
    assert "--help" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--version"]])
def test_version(argv, capsys):
    assert main(argv) == 0
    assert __version__ in capsys.readouterr().out


def test_a_reader_that_leaves_early_gets_no_complaint(home, service):
    """`bench models | head -1`: the pipe closes under a long listing; the command stops quietly, no 'Failed'."""
    cfg = home / "config"
    (cfg / "endpoints.json").write_text(json.dumps({"endpoints": {
        "a": {"base_url": "http://127.0.0.1:9/v1", "api": "openai"}}}), encoding="utf-8")
    (cfg / "models.json").write_text(json.dumps({"models": {
        f"model-{i:04d}": {"endpoint": "a", "served": f"m{i}"} for i in range(3000)}}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "benchwarmers", "models", "--url", service.url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout.readline()
    proc.stdout.close()                                   # the reader leaves, as `head -1` does
    _, err = proc.communicate(timeout=60)
    assert b"Failed" not in err and b"Traceback" not in err, err
    assert proc.returncode in (0, 1)
