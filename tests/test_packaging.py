"""Packaging: pyproject and package.json agree; the wheel installs and runs; the npm shim finds Python and runs it."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import benchwarmers

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
NPM = shutil.which("npm")
SHIM = ROOT / "bin" / "benchwarmers.js"
needs_node = pytest.mark.skipif(not NODE, reason="node is not installed")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def package_json() -> dict:
    return json.loads((ROOT / "package.json").read_text(encoding="utf-8"))


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def clean_env(**extra) -> dict:
    """An environment in which only what the test installs can be imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(extra)
    return env


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
    for wanted in ("serve.py", "gateway.py", "mcp_server.py", "scripts/init.py", "bin/", "suite/", "NOTICE"):
        assert wanted in pkg["files"]


def test_every_folder_of_python_code_is_a_package():
    """setup.py finds packages by their __init__.py: a folder without one would be left out of the wheel."""
    for folder in (ROOT / "benchwarmers").rglob("*"):
        if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py")):
            assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"


def test_python_m_benchwarmers_exists():
    assert (ROOT / "benchwarmers" / "__main__.py").is_file()


# ---- the wheel ---------------------------------------------------------------------------------

def copy_source(dest: Path) -> Path:
    """Build from a copy, so the build leaves nothing (build/, *.egg-info) in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("benchwarmers", "examples", "suite"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "NOTICE", "BENCHMARKS.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    return dest


def can_build_here() -> bool:
    """setuptools 64+ and a bdist_wheel (built in from 70.1, else the `wheel` package) in this interpreter."""
    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])
    if version >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return version >= (64, 0)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = copy_source(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheels")
    # Offline-friendly: reuse this interpreter's setuptools when it is new enough.
    isolation = ["--no-build-isolation"] if can_build_here() else []
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "-w", str(out), "--no-deps", "-q",
                          *isolation], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    wheels = list(out.glob("benchwarmers-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = bin_dir(venv) / ("python.exe" if os.name == "nt" else "python")
    run = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return venv


@pytest.mark.slow
def test_wheel_carries_package_data_and_entry_points(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        metadata = next(z.read(n).decode() for n in names if n.endswith("METADATA"))
    assert "benchwarmers/__main__.py" in names
    assert "benchwarmers/dashboard/static/style.css" in names
    assert {"benchwarmers/catalog/data/models.dev.json", "benchwarmers/catalog/data/freellmapi.json"} <= names
    for config in (ROOT / "examples").rglob("*.json"):
        assert f"benchwarmers/examples/{config.relative_to(ROOT / 'examples').as_posix()}" in names
    for task in (ROOT / "suite" / "tasks").rglob("*"):          # the suite's starter pack, inside the package
        if task.is_file() and "__pycache__" not in task.parts:
            assert f"benchwarmers/suite/tasks/{task.relative_to(ROOT / 'suite' / 'tasks').as_posix()}" in names
    assert not any(n.startswith(("tests/", "examples/", "suite/")) or "__pycache__" in n for n in names)
    assert "bench = benchwarmers.cli.main:run" in entry_points
    assert "benchwarmers = benchwarmers.cli.main:run" in entry_points
    assert f"Version: {benchwarmers.__version__}" in metadata
    assert "Requires-Dist: pytest" in metadata and "extra == \"test\"" in metadata
    assert not re.search(r"^Requires-Dist: [^;]+$", metadata, re.M)      # nothing needed at runtime


@pytest.mark.slow
def test_installed_bench_runs_help_and_status(installed, service, tmp_path):
    bench = bin_dir(installed) / ("bench.exe" if os.name == "nt" else "bench")
    env = clean_env(BENCHWARMERS_HOME=str(tmp_path / "home"), LLM_USER_PATH=str(tmp_path / "llm"))
    out = subprocess.run([str(bench), "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "example" in out.stdout.lower()
    out = subprocess.run([str(bench), "status", "--url", service.url], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert benchwarmers.__version__ in out.stdout and service.url in out.stdout


@pytest.mark.slow
def test_installed_package_seeds_a_data_folder_from_its_own_examples(installed, tmp_path):
    exe = bin_dir(installed) / ("benchwarmers.exe" if os.name == "nt" else "benchwarmers")
    env = clean_env(LLM_USER_PATH=str(tmp_path / "llm"))
    env.pop("BENCHWARMERS_HOME", None)
    folder = tmp_path / "data"
    out = subprocess.run([str(exe), "init", str(folder)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    for config in (ROOT / "examples" / "config").glob("*.json"):
        assert (folder / "config" / config.name).read_bytes() == config.read_bytes()
    assert "BENCHWARMERS_HOME" in out.stderr           # no pointer file in site-packages: says how to use it
    assert not list(installed.rglob(".benchwarmers-home"))
    probe = subprocess.run([str(bin_dir(installed) / ("python.exe" if os.name == "nt" else "python")), "-c",
                            "import benchwarmers.home as h; print(h.examples_dir())"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert Path(probe.stdout.strip()).is_relative_to(installed)
    probe = subprocess.run([str(bin_dir(installed) / ("python.exe" if os.name == "nt" else "python")), "-c",
                            "from benchwarmers.suite.tasks import load_all, starter_dir; t, bad = load_all(None); "
                            "print(starter_dir()); print(len(t), len(bad))"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    where, counts = probe.stdout.strip().splitlines()
    assert Path(where).is_relative_to(installed)             # the starter pack inside the installed package
    assert counts == f"{len(list((ROOT / 'suite' / 'tasks').glob('*/task.json')))} 0"


@pytest.mark.slow
def test_installed_command_runs_the_plugins_mcp_server_and_stop_hook(installed, service, tmp_path):
    """The plugin's .mcp.json and hooks.json name the installed command; both work from the installed wheel."""
    plugin = ROOT / "plugins" / "benchwarmers"
    server = json.loads((plugin / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["benchwarmers"]
    (hook,) = json.loads((plugin / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]["Stop"][0]["hooks"]
    exe = str(bin_dir(installed) / ("benchwarmers.exe" if os.name == "nt" else "benchwarmers"))
    assert server["command"] == hook["command"].split()[0] == "benchwarmers"
    env = clean_env(BENCHWARMERS_URL=service.url, LLM_USER_PATH=str(tmp_path / "llm"))
    env.pop("BENCHWARMERS_KEY", None)
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "pending_verdicts",
                                                                                "arguments": {}}}]
    out = subprocess.run([exe, *server["args"]], input="".join(json.dumps(m) + "\n" for m in messages), cwd=tmp_path,
                         env=env, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    replies = {r["id"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert replies[1]["result"]["serverInfo"]["name"] == "benchwarmers"
    assert len(replies[2]["result"]["tools"]) == 4
    assert replies[3]["result"]["structuredContent"] == {"total": 0, "pending": []}     # the service answered
    stop = json.dumps({"hook_event_name": "Stop", "stop_hook_active": False,
                       "transcript_path": str(tmp_path / "transcript.jsonl")})
    (tmp_path / "transcript.jsonl").write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n",
                                               encoding="utf-8")
    out = subprocess.run([exe, *hook["command"].split()[1:]], input=stop, cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""   # a turn that asked no panel


# ---- the npm shim ------------------------------------------------------------------------------

def shim(*args: str, env: dict | None = None, timeout: float = 60, node: str | None = None):
    return subprocess.run([node or NODE, str(SHIM), *args], env=env or clean_env(), capture_output=True,
                          text=True, timeout=timeout, cwd=str(ROOT.parent))


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
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(tmp_path))
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


@pytest.mark.slow
@pytest.mark.skipif(not NPM, reason="npm is not installed")
def test_npm_pack_lists_the_python_source(tmp_path):
    out = subprocess.run([NPM, "pack", "--dry-run", "--json", str(ROOT)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env=clean_env(npm_config_cache=str(tmp_path / "npm-cache")))
    assert out.returncode == 0, out.stderr
    files = {f["path"] for f in json.loads(out.stdout)[0]["files"]}
    for wanted in ("bin/benchwarmers.js", "benchwarmers/__init__.py", "benchwarmers/__main__.py",
                   "benchwarmers/cli/main.py", "benchwarmers/dashboard/static/style.css", "serve.py", "gateway.py",
                   "scripts/init.py", "package.json"):
        assert wanted in files, wanted
    for config in (ROOT / "examples").rglob("*.json"):
        assert config.relative_to(ROOT).as_posix() in files
    for task in (ROOT / "suite").rglob("*"):
        if task.is_file() and "__pycache__" not in task.parts:
            assert task.relative_to(ROOT).as_posix() in files
    assert "NOTICE" in files
    py_files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "benchwarmers").rglob("*.py")
                if "__pycache__" not in p.parts}
    assert py_files <= files
    assert not any("__pycache__" in f or f.startswith("tests/") or f.endswith(".pyc") for f in files)
