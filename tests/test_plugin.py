"""The Claude Code marketplace and plugin: manifests with the fields Claude Code requires, and docs that match them."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchwarmers import __version__

ROOT = Path(__file__).resolve().parent.parent
MARKET = ROOT / ".claude-plugin" / "marketplace.json"
PLUGIN = ROOT / "plugins" / "benchwarmers"
PUBLISHED_NPX = "npx -y @wendellresearch-ai/benchwarmers"   # only in the README's "Once published" paragraph
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def front_matter(path: Path) -> tuple[dict, str]:
    """A Markdown file's `---` block as {key: value}, and the body after it."""
    text = path.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert match, f"{path.name} has no front matter"
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        assert sep, f"{path.name}: bad front matter line {line!r}"
        fields[key.strip()] = value.strip()
    return fields, match.group(2)


def test_marketplace_lists_the_plugin():
    market = load(MARKET)
    assert KEBAB.match(market["name"]) and market["name"] == "benchwarmers"
    assert market["owner"]["name"]
    entries = {p["name"]: p for p in market["plugins"]}
    entry = entries["benchwarmers"]
    assert entry["description"] and SEMVER.match(entry["version"])
    assert entry["source"].startswith("./")
    # Relative sources resolve from the folder that holds .claude-plugin/, the repository root here.
    assert (ROOT / entry["source"]).resolve() == PLUGIN.resolve()


def test_plugin_manifest():
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "benchwarmers" and KEBAB.match(manifest["name"])
    assert SEMVER.match(manifest["version"]) and manifest["description"]
    # Claude Code only offers an update when the version changes: keep the three in step.
    assert manifest["version"] == load(MARKET)["plugins"][0]["version"] == __version__
    assert not (PLUGIN / ".claude-plugin" / "commands").exists()   # components live at the plugin root


def test_mcp_json_starts_the_server_with_the_installed_command():
    """The npm name is not published yet: the plugin runs the command `pipx install .` gives."""
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    server = servers["benchwarmers"]
    assert server["command"] == "benchwarmers" and server["args"] == ["mcp"]
    import tomllib
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["benchwarmers"] == "benchwarmers.cli.main:run"
    assert server["env"]["BENCHWARMERS_URL"] == "${BENCHWARMERS_URL:-http://127.0.0.1:8122}"
    for value in server["env"].values():
        assert re.fullmatch(r"\$\{[A-Z_]+:-[^}]*\}", value), "every variable needs a default or Claude Code fails"
    assert "mcp_server.py" in load(ROOT / "package.json")["files"]


def test_the_command_reaches_the_mcp_subcommand():
    from benchwarmers.cli.main import build_parser
    args = build_parser().parse_args(["mcp"])
    assert args.command == "mcp" and args.needs_client is False


def test_ask_command():
    fields, body = front_matter(PLUGIN / "commands" / "ask.md")
    assert fields["description"]
    assert fields["argument-hint"] == "<collection> <what to ask>"
    assert "$ARGUMENTS" in body
    for word in ("list_collections", "`ask`", "`verdict`", "every seat", "call id"):
        assert word in body


def test_skill():
    fields, body = front_matter(PLUGIN / "skills" / "benchwarmers" / "SKILL.md")
    assert fields["name"] == "benchwarmers"
    assert 0 < len(fields["description"]) <= 1024
    text = (fields["description"] + body).lower()
    for topic in ("adversarial", "enumeration", "disagree", "against the code", "verdict", "every seat"):
        assert topic in text


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in
                                        [MARKET, *PLUGIN.rglob("*.json")]))
def test_manifests_are_strict_json(path):
    raw = (ROOT / path).read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")      # no BOM
    json.loads(raw.decode("utf-8"))


def test_docs_show_the_install_and_client_config():
    doc = (ROOT / "README.md").read_text(encoding="utf-8")
    usage = (ROOT / "USAGE.md").read_text(encoding="utf-8")      # the client settings live in its "MCP"
    assert "/plugin marketplace add WendellResearch-AI/benchwarmers" in doc
    assert "/plugin install benchwarmers@benchwarmers" in doc
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", usage, re.S)]
    assert len(blocks) == 3
    installed, checkout, http = (b["mcpServers"]["benchwarmers"] for b in blocks)
    assert installed["command"] == "benchwarmers" and installed["args"] == ["mcp"]
    assert checkout["args"][0].endswith("/mcp_server.py") and (ROOT / "mcp_server.py").exists()
    check_http_server(http)
    # registry forms live in one marked paragraph, and name the package as package.json does
    published = doc[doc.index("**Once published**"):]
    published = published[:published.index("\n\n")]
    assert PUBLISHED_NPX in published and load(ROOT / "package.json")["name"] in PUBLISHED_NPX
    assert doc.count("npx -y @wendellresearch-ai") == published.count("npx -y @wendellresearch-ai")
    assert "uvx benchwarmers" not in doc.replace(published, "")
    assert "uvx benchwarmers" not in usage
    for name in ("BENCHWARMERS_URL", "BENCHWARMERS_KEY", "BENCHWARMERS_TIMEOUT"):
        assert f"`{name}`" in usage


def check_http_server(server: dict) -> None:
    """MCP over HTTP: the service's /mcp, the key taken from the environment and never written in."""
    assert server["type"] == "http" and server["url"].endswith(":8122/mcp")
    assert server["headers"] == {"Authorization": "Bearer ${BENCHWARMERS_KEY:-}"}


def test_plugin_readme_shows_both_ways():
    doc = (PLUGIN / "README.md").read_text(encoding="utf-8")
    assert "`.mcp.json` starts `benchwarmers mcp`" in doc
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", doc, re.S)]
    assert len(blocks) == 1
    check_http_server(blocks[0]["mcpServers"]["benchwarmers-http"])
    assert "pending_verdicts" in doc and "Stop hook" in doc
    assert not re.search(r"bw-[A-Za-z0-9_-]{8,}", doc)       # no key written into a committed file


def test_stop_hook_runs_the_installed_command():
    """Like .mcp.json, the hook runs the command `pipx install .` gives: the plugin needs no Node."""
    hooks = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    assert set(hooks) == {"Stop"}
    (entry,) = hooks["Stop"]
    (hook,) = entry["hooks"]
    assert hook["type"] == "command" and 0 < hook["timeout"] <= 60
    assert hook["command"] == "benchwarmers verdicts stop-hook"
    from benchwarmers.cli.main import build_parser
    args = build_parser().parse_args(hook["command"].split()[1:])
    assert args.action == "stop-hook" and args.needs_client is False
    assert not [p for p in PLUGIN.rglob("*") if p.suffix in (".js", ".mjs", ".cjs")]
