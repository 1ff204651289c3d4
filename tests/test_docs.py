"""GATEWAY.md against the code: every route is documented, and every curl command in it works on a live service.
(Commands, settings, environment variables, pages, links and paths: tests/test_docs_coverage.py.)"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from benchwarmers.service.table import build_routes
from tests.fakes import FakeAnthropic, FakeGemini, FakeOllama, FakeOpenAI
from tests.helpers.catalog import catalog_host  # noqa: F401 (fixture: the catalog refresh goes to a fake host)
from tests.helpers import shell
from tests.helpers.data import configure

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "GATEWAY.md"
TOKEN = "doc-admin-token-0123456789"
EXPECT = re.compile(r"\s+#\s*->\s*(\d{3})\s*$")
TOKEN_MARK = "<!-- doc-test: admin-token -->"


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_route_in_the_table_is_in_gateway_md():
    text = doc_text()
    missing = []
    for route in build_routes():
        path = re.sub(r"\{(\w+):path\}", r"{\1}", route.pattern)
        if f"{route.method} {path}" not in text:
            missing.append(f"{route.method} {path}")
    assert not missing, ("routes GATEWAY.md does not mention; add each, written `METHOD /path` as here, to the "
                         "table of its section (and to \"## Every route\"):\n" + "\n".join(f"  {m}" for m in missing))


def test_gateway_md_keeps_the_contract_headings():
    text = doc_text()
    for heading in ("## Asking a panel", "## Who may call", "## The admin API", "## Other API formats",
                    "## Route mode", "## Every route"):
        assert f"\n{heading}\n" in text, heading
    assert "## Seat 1 · deepseek · member" in text


# ---- the curl commands ---------------------------------------------------------------------------

def doc_commands(text: str) -> list[tuple[bool, str]]:
    """(needs the admin-token service, command) for each curl command of the ```sh blocks, in order."""
    out, keyed, block, buffer = [], False, None, ""
    previous = ""
    for line in text.splitlines():
        if block is None:
            if line.startswith("```sh"):
                block, keyed = [], previous.strip() == TOKEN_MARK
            previous = line
            continue
        if line.startswith("```"):
            block = None
            continue
        if not buffer and line.lstrip().startswith("#"):
            continue                   # a comment line, whose apostrophes are no quotes
        buffer = f"{buffer}\n{line}" if buffer else line
        if buffer.rstrip().endswith("\\") or buffer.count("'") % 2:
            continue                   # a continued line, or a quoted argument that goes on
        command, buffer = buffer.strip(), ""
        if command.startswith("curl "):
            out.append((keyed, command))
    return out


def run_command(command: str, env: dict, cwd: Path) -> tuple[int, str]:
    """Run one documented command with bash: (HTTP status, body)."""
    expected = EXPECT.search(command)
    command = EXPECT.sub("", command)
    out = cwd / "out.txt"
    command = command.replace("curl ", f"curl -o '{out.as_posix()}' -w '%{{http_code}}' ", 1)
    done = subprocess.run([shell.bash(), "-c", command], env=env, cwd=str(cwd), capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=60)
    assert done.returncode == 0, (command, done.stderr)
    body = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    return int(done.stdout.strip()[-3:]), body, int(expected.group(1)) if expected else None


def latest_call(url: str) -> str:
    with urllib.request.urlopen(url + "/bench/calls?limit=1", timeout=10) as resp:
        return json.loads(resp.read())["calls"][0]["id"]


def latest_panel(url: str) -> str:
    with urllib.request.urlopen(url + "/bench/calls?limit=100", timeout=10) as resp:
        return next(c["panel"] for c in json.loads(resp.read())["calls"] if c["panel"])


def make_key(url: str) -> str:
    req = urllib.request.Request(url + "/bench/keys", json.dumps({"name": "doc", "collections": ["core"]}).encode(),
                                 {"Content-Type": "application/json", "Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["key"]


def doc_setup(home: Path) -> tuple[list, dict]:
    """The fakes and data folder the examples name: deepseek, claude, gemini-flash, qwen; collection core."""
    oa, an, gm, ol = FakeOpenAI().start(), FakeAnthropic().start(), FakeGemini().start(), FakeOllama().start()
    ol.set_models(["llama3.2", "qwen3"])
    configure(home, {"oa": (oa, "openai"), "an": (an, "anthropic"), "gm": (gm, "gemini")},
              {"deepseek": ("oa", "deepseek-chat"), "claude": ("an", "claude-x"),
               "gemini-flash": ("gm", "gemini-flash-x"), "qwen": ("oa", "qwen-x")},
              {"core": {"members": ["deepseek", "claude", "gemini-flash"], "explore": 1, "merge_model": "deepseek"}})
    # the examples' upstream URLs, pointed at fakes
    urls = {"http://localhost:11434": ol.root, "https://openrouter.ai/api/v1": oa.url}
    return [oa, an, gm, ol], urls


def run_doc(text: str, plain_url: str, token_url: str, key: str, cwd: Path, urls: dict) -> list[str]:
    """Every documented curl command, in order; the problems found."""
    (cwd / "keyfile").write_text("sk-or-doc-test-123456", encoding="utf-8")
    problems, call = [], None
    for keyed, command in doc_commands(text):
        for doc_url, real in urls.items():
            command = command.replace(doc_url, real)
        env = {**os.environ, "J": "Content-Type: application/json", "B": token_url if keyed else plain_url,
               "BENCHWARMERS_ADMIN_TOKEN": TOKEN if keyed else "", "KEY": key}
        env["H"] = f"Authorization: Bearer {env['BENCHWARMERS_ADMIN_TOKEN']}"
        if "$CALL" in command:
            call = call or latest_call(plain_url)
            env["CALL"] = call
        if "$PANEL" in command:
            env["PANEL"] = latest_panel(plain_url)
        status, body, expected = run_command(command, env, cwd)
        if (expected and status != expected) or (not expected and not 200 <= status < 300):
            problems.append(f"{status} for {command}\n{body[:300]}")
        elif not expected and ("Every seat failed" in body or '"error"' in body[:20]):
            problems.append(f"an error in the answer of {command}\n{body[:300]}")
    return problems


@pytest.mark.skipif(not (shell.bash() and shutil.which("curl")), reason=shell.WHY)
def test_every_curl_command_in_gateway_md_works(home, make_service, tmp_path, catalog_host):
    fakes, urls = doc_setup(home)
    try:
        plain = make_service()
        keyed = make_service(admin_token=TOKEN)
        problems = run_doc(doc_text(), plain.url, keyed.url, make_key(keyed.url), tmp_path, urls)
        assert not problems, "\n\n".join(problems)
        assert len(doc_commands(doc_text())) > 50
    finally:
        for fake in fakes:
            fake.stop()
