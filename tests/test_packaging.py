"""Packaging: pyproject and package.json agree; the sdist, wheel and npm tarball hold everything and run a panel."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import benchwarmers
from tests.helpers.install import (NODE, NPM, bin_dir, built, check_installed, clean_env, exe, npm_tarball,
                                   once_per_run, run)

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT / "bin" / "benchwarmers.js"
needs_node = pytest.mark.skipif(not NODE, reason="node is not installed")
needs_npm = pytest.mark.skipif(not (NODE and NPM), reason="node and npm are not installed")
# `bench suite fetch` in any install: the shipped picks, and the code that fetches and builds them
REAL_BUGS = ("benchwarmers/suite/data/rebench-picks.json", "benchwarmers/suite/fetch.py",
             "benchwarmers/suite/fetchjob.py", "benchwarmers/suite/history.py", "benchwarmers/suite/rebench.py",
             "benchwarmers/cli/suitefetch.py", "benchwarmers/api/suitefetch.py")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_json() -> dict:
    return json.loads((ROOT / "package.json").read_text(encoding="utf-8"))


# ---- fast consistency checks -------------------------------------------------------------------

def test_pyproject_declares_the_commands_and_no_runtime_dependencies():
    project = pyproject()["project"]
    assert project["name"] == "benchwarmers"
    assert project.get("dependencies", []) == []
    assert project["requires-python"] == ">=3.11"
    assert project["scripts"] == {"benchwarmers": "benchwarmers.cli.main:run", "bench": "benchwarmers.cli.main:run"}
    assert {"pytest", "openai", "anthropic", "google-genai", "ollama", "mcp"} <= set(
        project["optional-dependencies"]["test"])
    assert "slow" in " ".join(pyproject()["tool"]["pytest"]["ini_options"]["markers"])


def test_package_json_matches_the_python_package():
    pkg = package_json()
    assert pkg["name"] == "@wendellresearch-ai/benchwarmers"
    assert pkg["version"] == benchwarmers.__version__
    assert pkg["bin"] == {"benchwarmers": "bin/benchwarmers.js", "bench": "bin/benchwarmers.js"}
    assert pkg["engines"]["node"] == ">=18"
    assert not pkg.get("dependencies")
    for wanted in ("serve.py", "gateway.py", "mcp_server.py", "scripts/init.py", "bin/", "examples/", "plugins/",
                   ".claude-plugin/", "suite/", "NOTICE"):
        assert wanted in pkg["files"]


def test_every_folder_of_python_code_is_a_package():
    """setup.py finds packages by their __init__.py: a folder without one would be left out of the wheel."""
    for folder in (ROOT / "benchwarmers").rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"


def test_python_m_benchwarmers_exists():
    assert (ROOT / "benchwarmers" / "__main__.py").is_file()


# ---- the sdist and the wheel (python -m build) ------------------------------------------------

@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict:
    return built(tmp_path_factory)


@pytest.fixture(scope="module")
def wheel(dists) -> Path:
    return dists["wheel"]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed, once per run (its tests only run what it installed)."""
    def make(folder: Path) -> dict:
        venv = folder / "v"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        done = run([exe(bin_dir(venv), "python")], "-m", "pip", "install", "--no-index", "--no-deps", "-q",
                   str(wheel), env=clean_env(), cwd=venv, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return {"venv": venv}
    return once_per_run(tmp_path_factory, "installed", make)["venv"]


def shipped(root: Path, folder: str) -> set[str]:
    """Every file under ROOT/folder, as paths relative to that folder (dot-files included)."""
    base = root / folder
    return {p.relative_to(base).as_posix() for p in base.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


@pytest.mark.slow
def test_sdist_carries_what_a_source_install_needs(dists):
    with tarfile.open(dists["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for wanted in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "NOTICE", "BENCHMARKS.md", "CHANGELOG.md",
                   "HOSTING.md", "RELEASING.md", "USAGE.md", "GATEWAY.md", "AGENTS.md", "TERMS.md", "PRIVACY.md",
                   "SECURITY.md", "serve.py", "bench.py", "Dockerfile", "compose.yaml", ".env.example",
                   ".claude-plugin/marketplace.json", "benchwarmers/__main__.py",
                   "benchwarmers/dashboard/static/style.css", "benchwarmers/catalog/data/models.dev.json",
                   "tests/conftest.py", "deploy/fly/fly.toml"):
        assert wanted in names, wanted
    for folder in ("examples", "plugins", "deploy", "suite"):
        assert {f"{folder}/{f}" for f in shipped(ROOT, folder)} <= names, folder
    assert not any("__pycache__" in n or n.endswith(".pyc") or n.startswith(".env\n") for n in names)
    assert ".env" not in names


@pytest.mark.slow
def test_wheel_carries_package_data_plugin_and_entry_points(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        metadata = next(z.read(n).decode() for n in names if n.endswith("METADATA"))
    assert "benchwarmers/__main__.py" in names
    assert "benchwarmers/dashboard/static/style.css" in names
    assert {"benchwarmers/catalog/data/models.dev.json", "benchwarmers/catalog/data/freellmapi.json"} <= names
    assert set(REAL_BUGS) <= names                        # the picks of real fixes and their builder
    for config in shipped(ROOT, "examples"):
        assert f"benchwarmers/examples/{config}" in names
    plugin = shipped(ROOT, "plugins/benchwarmers")
    assert {".mcp.json", ".claude-plugin/plugin.json"} <= plugin
    assert {f"benchwarmers/plugin/{f}" for f in plugin} <= names
    # the suite's starter pack, inside the package (benchwarmers/suite/ is code; its tasks/ folder the pack)
    assert {f"benchwarmers/suite/tasks/{f}" for f in shipped(ROOT, "suite/tasks")} <= names
    assert not any(n.startswith(("tests/", "examples/", "suite/", "plugins/")) or "__pycache__" in n for n in names)
    assert "bench = benchwarmers.cli.main:run" in entry_points
    assert "benchwarmers = benchwarmers.cli.main:run" in entry_points
    assert f"Version: {benchwarmers.__version__}" in metadata
    assert "Requires-Dist: pytest" in metadata and "extra == \"test\"" in metadata
    assert not re.search(r"^Requires-Dist: [^;]+$", metadata, re.M)      # nothing needed at runtime


@pytest.mark.slow
def test_installed_wheel_serves_a_panel(installed, tmp_path):
    """benchwarmers --version, then the installed service against a fake upstream: bench status, bench ask."""
    bench = exe(bin_dir(installed), "bench")
    out = run([bench], "--help", env=clean_env(), cwd=tmp_path)
    assert out.returncode == 0 and "example" in out.stdout.lower(), out.stderr
    check_installed([exe(bin_dir(installed), "benchwarmers")], tmp_path, serve=[bench])


@pytest.mark.slow
def test_installed_package_seeds_a_data_folder_from_its_own_examples(installed, tmp_path):
    env = clean_env(LLM_USER_PATH=str(tmp_path / "llm"))
    env.pop("BENCHWARMERS_HOME", None)
    folder = tmp_path / "data"
    out = run([exe(bin_dir(installed), "benchwarmers")], "init", str(folder), env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    for config in (ROOT / "examples" / "config").glob("*.json"):
        assert (folder / "config" / config.name).read_bytes() == config.read_bytes()
    assert "BENCHWARMERS_HOME" in out.stderr           # no pointer file in site-packages: says how to use it
    assert not list(installed.rglob(".benchwarmers-home"))
    probe = run([exe(bin_dir(installed), "python")], "-c", "import benchwarmers.home as h; print(h.examples_dir())",
                env=env, cwd=tmp_path, timeout=60)
    # resolve(): Windows temp folders may be spelled with 8.3 short names, and the package resolves its own path.
    assert Path(probe.stdout.strip()).is_relative_to(installed.resolve())
    probe = run([exe(bin_dir(installed), "python")], "-c",
                "from benchwarmers.suite.tasks import load_all, starter_dir; t, bad = load_all(None); "
                "print(starter_dir()); print(len(t), len(bad))", env=env, cwd=tmp_path, timeout=60)
    where, counts = probe.stdout.strip().splitlines()
    assert Path(where).is_relative_to(installed.resolve())             # the starter pack inside the installed package
    assert counts == f"{len(list((ROOT / 'suite' / 'tasks').glob('*/task.json')))} 0"


@pytest.mark.slow
def test_installed_package_reads_its_own_picks_of_real_bugs(installed, tmp_path):
    """`bench suite fetch` in a wheel install: the shipped picks are read from inside the installed package."""
    probe = run([exe(bin_dir(installed), "python")], "-c",
                "from benchwarmers.suite import fetch; print(fetch.PICKS); print(len(fetch.read_picks()))",
                env=clean_env(), cwd=tmp_path, timeout=60)
    assert probe.returncode == 0, probe.stderr
    where, count = probe.stdout.strip().splitlines()
    assert Path(where).is_relative_to(installed.resolve())
    shipped_picks = json.loads((ROOT / REAL_BUGS[0]).read_text(encoding="utf-8"))["picks"]
    assert int(count) == len(shipped_picks) >= 24
    helped = run([exe(bin_dir(installed), "bench")], "suite", "fetch", "--help", env=clean_env(), cwd=tmp_path)
    assert helped.returncode == 0 and "--dry-run" in helped.stdout and "--source" in helped.stdout


@pytest.mark.slow
def test_installed_command_runs_the_plugins_mcp_server_and_stop_hook(installed, service, tmp_path):
    """The plugin's .mcp.json and hooks.json name the installed command; both work from the installed wheel."""
    plugin = ROOT / "plugins" / "benchwarmers"
    server = json.loads((plugin / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["benchwarmers"]
    (hook,) = json.loads((plugin / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]["Stop"][0]["hooks"]
    command = exe(bin_dir(installed), "benchwarmers")
    assert server["command"] == hook["command"].split()[0] == "benchwarmers"
    env = clean_env(BENCHWARMERS_URL=service.url, LLM_USER_PATH=str(tmp_path / "llm"))
    env.pop("BENCHWARMERS_KEY", None)
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "pending_verdicts",
                                                                                "arguments": {}}}]
    out = subprocess.run([str(command), *server["args"]], input="".join(json.dumps(m) + "\n" for m in messages),
                         cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    replies = {r["id"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert replies[1]["result"]["serverInfo"]["name"] == "benchwarmers"
    assert len(replies[2]["result"]["tools"]) == 4
    # the service answered
    assert replies[3]["result"]["structuredContent"] == {"total": 0, "points": [], "pending": [],
                                                          "points_total": 0}
    stop = json.dumps({"hook_event_name": "Stop", "stop_hook_active": False,
                       "transcript_path": str(tmp_path / "transcript.jsonl")})
    (tmp_path / "transcript.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n",
                                               encoding="utf-8")
    out = subprocess.run([str(command), *hook["command"].split()[1:]], input=stop, cwd=tmp_path, env=env,
                         capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=60)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""   # a turn that asked no panel


# ---- the npm shim ------------------------------------------------------------------------------

def shim(*args: str, env: dict | None = None, timeout: float = 60, node: str | None = None):
    return subprocess.run([node or NODE, str(SHIM), *args], env=env or clean_env(), capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=timeout, cwd=str(ROOT.parent))


@pytest.mark.slow
@needs_node
def test_shim_runs_help_and_status(service, tmp_path):
    env = clean_env(BENCHWARMERS_PYTHON=sys.executable, BENCHWARMERS_HOME=str(tmp_path / "h"))
    out = shim("--help", env=env)
    assert out.returncode == 0, out.stderr
    assert "example" in out.stdout.lower()
    out = shim("status", "--url", service.url, env=env)
    assert out.returncode == 0, out.stderr
    assert service.url in out.stdout


@pytest.mark.slow
@needs_node
def test_shim_passes_the_exit_code_through():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = shim("status", "--url", f"http://127.0.0.1:{port}", env=clean_env(BENCHWARMERS_PYTHON=sys.executable))
    assert out.returncode == 3
    assert "No Benchwarmers service answers" in out.stderr
    assert shim("no-such-command", env=clean_env(BENCHWARMERS_PYTHON=sys.executable)).returncode == 2


@pytest.mark.slow
@needs_node
def test_shim_without_python_says_what_to_install(tmp_path):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path), "SYSTEMROOT": os.environ.get("SYSTEMROOT", "")}
    out = shim("--help", env=env, node=str(Path(NODE).resolve()))
    assert out.returncode == 1
    for hint in ("python.org", "brew install python@3.12", "apt install python3", "winget install Python.Python.3.12"):
        assert hint in out.stderr


@pytest.mark.slow
@needs_node
@pytest.mark.skipif(os.name == "nt", reason="a fake interpreter here is a shell script")
def test_shim_passes_over_a_python_that_is_too_old(tmp_path):
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name in ("python3", "python"):
        fake = fake_bin / name
        fake.write_text("#!/bin/sh\necho 'False 3.9'\n", encoding="utf-8")
        fake.chmod(0o755)
    env = {"PATH": str(fake_bin), "HOME": str(tmp_path)}
    out = shim("--help", env=env, node=str(Path(NODE).resolve()))
    assert out.returncode == 1
    assert "3.9 is too old" in out.stderr
    # BENCHWARMERS_PYTHON pointing at a good interpreter wins over the old ones on PATH.
    out = shim("--help", env={**env, "BENCHWARMERS_PYTHON": sys.executable}, node=str(Path(NODE).resolve()))
    assert out.returncode == 0, out.stderr


@pytest.mark.slow
@needs_node
@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is a POSIX signal")
def test_shim_forwards_sigterm_and_the_service_stops_cleanly(tmp_path):
    env = clean_env(BENCHWARMERS_PYTHON=sys.executable, BENCHWARMERS_HOME=str(tmp_path / "h"),
                    LLM_USER_PATH=str(tmp_path / "llm"))
    proc = subprocess.Popen([NODE, str(SHIM), "serve", "--port", "0", "--no-browser"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            errors="replace", cwd=str(tmp_path))
    try:
        url = None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            m = re.search(r"at (http://\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, "".join(seen)
        with socket.create_connection((urlsplit(url).hostname, urlsplit(url).port), timeout=5):
            pass
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.stderr.close()
    assert code == 0, "".join(seen) + rest
    assert "Stopped" in rest
    with pytest.raises(OSError):   # the Python child is gone too, not orphaned
        socket.create_connection((urlsplit(url).hostname, urlsplit(url).port), timeout=2).close()


@pytest.fixture(scope="module")
def tarball(tmp_path_factory) -> Path:
    return npm_tarball(tmp_path_factory)


@pytest.mark.slow
@needs_npm
def test_npm_tarball_carries_the_python_source_and_data(tarball):
    with tarfile.open(tarball) as tar:
        files = {n.split("/", 1)[1] for n in tar.getnames() if n.startswith("package/")}
    for wanted in ("bin/benchwarmers.js", "benchwarmers/__init__.py", "benchwarmers/__main__.py",
                   "benchwarmers/cli/main.py", "benchwarmers/dashboard/static/style.css", "serve.py", "gateway.py",
                   "scripts/init.py", "package.json", ".claude-plugin/marketplace.json",
                   "plugins/benchwarmers/.mcp.json", "plugins/benchwarmers/.claude-plugin/plugin.json"):
        assert wanted in files, wanted
    for folder in ("examples", "plugins", "suite"):
        assert {f"{folder}/{f}" for f in shipped(ROOT, folder)} <= files, folder
    assert {"NOTICE", "BENCHMARKS.md", "USAGE.md", "TERMS.md", "SECURITY.md", "PRIVACY.md"} <= files
    assert set(REAL_BUGS) | {"suite/rebench.py"} <= files  # the picks, their builder, and the developer tool
    py_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "benchwarmers").rglob("*.py")
                if "__pycache__" not in p.parts}
    assert py_files <= files
    assert not any("__pycache__" in f or f.startswith("tests/") or f.endswith(".pyc") for f in files)


@pytest.mark.slow
@needs_npm
def test_shim_from_the_npm_tarball_serves_a_panel(tarball, tmp_path):
    """The packed tarball unpacked as npm would: its shim runs the bundled source as service and client."""
    with tarfile.open(tarball) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    shim_cmd = [NODE, tmp_path / "unpacked" / "package" / "bin" / "benchwarmers.js"]
    env = clean_env(BENCHWARMERS_PYTHON=sys.executable, LLM_USER_PATH=tmp_path / "llm")
    check_installed(shim_cmd, tmp_path, serve=shim_cmd, env=env)
