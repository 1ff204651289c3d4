"""Installed copies under test: clean environments, built distributions, and one panel run through any command."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import benchwarmers
from benchwarmers import home as home_mod
from tests.fakes import FakeOpenAI
from tests.helpers.panel import requests_for, setup_bench

ROOT = Path(__file__).resolve().parents[2]
IS_WINDOWS = os.name == "nt"
NODE, NPM, NPX = shutil.which("node"), shutil.which("npm"), shutil.which("npx")
# Never copied into a source tree for building: local state, caches, and what a build leaves behind.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "node_modules", "build", "dist", "*.egg-info",
                                    "__pycache__", "*.py[cod]", ".pytest_cache", ".benchmarks", ".env",
                                    ".benchwarmers-home")
_built: dict = {}                      # what once_per_run made or found, by name


def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if IS_WINDOWS else "bin")


def exe(folder: Path, name: str) -> Path:
    """A console script or interpreter in `folder`, with Windows' .exe where it applies."""
    return folder / (name + ".exe" if IS_WINDOWS else name)


def clean_env(**extra) -> dict:
    """An environment in which only what the test installs can be imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONIOENCODING"] = "utf-8"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def copy_source(dest: Path) -> Path:
    """The checkout as a fresh tree (builds write build/ and *.egg-info into their source; not into ours)."""
    shutil.copytree(ROOT, dest, ignore=NOT_SOURCE)
    return dest


def build_isolation_flags() -> list[str]:
    """Reuse this interpreter's setuptools when it can build a wheel (offline-friendly); else an isolated build."""
    try:
        import setuptools
    except ImportError:
        return []
    version = tuple(int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])
    if version >= (70, 1):
        return ["--no-isolation"]
    try:
        import wheel  # noqa: F401
    except ImportError:
        return []
    return ["--no-isolation"] if version >= (64, 0) else []


def built(tmp_path_factory) -> dict:
    """`python -m build` once per test run: the sdist, then the wheel built from that sdist (so a file the sdist
    forgets is missing from the wheel too). {"sdist": Path, "wheel": Path, "source": Path}."""
    def make(folder: Path) -> dict:
        source = copy_source(folder / "src")
        out = folder / "dist"
        out.mkdir()
        done = build(source, out)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        sdists, wheels = list(out.glob("benchwarmers-*.tar.gz")), list(out.glob("benchwarmers-*.whl"))
        assert len(sdists) == 1 and len(wheels) == 1, list(out.iterdir())
        return {"sdist": sdists[0], "wheel": wheels[0], "source": source}
    return once_per_run(tmp_path_factory, "dists", make)


def build(source: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "build", "--outdir", out, *flags, *build_isolation_flags(), source],
               env=clean_env(), cwd=out, timeout=600)


def npm_tarball(tmp_path_factory) -> Path:
    """`npm pack` of the checkout once per test run: the tarball npm would publish."""
    def make(folder: Path) -> dict:
        env = clean_env(npm_config_cache=folder / "cache", npm_config_update_notifier="false")
        packed = run([NPM], "pack", str(ROOT), "--pack-destination", str(folder), "--json", env=env, cwd=folder)
        assert packed.returncode == 0, packed.stdout + packed.stderr
        return {"tarball": folder / json.loads(packed.stdout)[0]["filename"]}
    return once_per_run(tmp_path_factory, "npm", make)["tarball"]


def once_per_run(tmp_path_factory, name: str, make) -> dict:
    """make(folder) -> {key: Path}, done once for the whole run. Under pytest-xdist the workers share the run's
    temporary folder: the first to claim `name` makes it, the others wait for its answer (or its failure)."""
    if name not in _built:
        base = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            base = base.parent                   # this run's, shared by its workers (one folder each below it)
        folder, answer = base / f"once-{name}", base / f"once-{name}.json"
        try:
            folder.mkdir()                       # atomic: exactly one worker makes it
        except FileExistsError:
            _built[name] = awaited(answer)
        else:
            _built[name] = made(folder, answer, make)
    return _built[name]


def made(folder: Path, answer: Path, make) -> dict:
    try:
        result = make(folder)
    except BaseException as e:
        write_answer(answer, {"error": f"{type(e).__name__}: {e}"})
        raise
    write_answer(answer, {"made": {k: str(v) for k, v in result.items()}})
    return result


def write_answer(answer: Path, data: dict) -> None:
    part = answer.with_name(answer.name + ".part")
    part.write_text(json.dumps(data), encoding="utf-8")
    os.replace(part, answer)


def awaited(answer: Path, timeout: float = 1200) -> dict:
    deadline = time.monotonic() + timeout
    while not answer.exists():
        assert time.monotonic() < deadline, f"no other worker wrote {answer} within {timeout:.0f} s"
        time.sleep(0.2)
    data = json.loads(answer.read_text(encoding="utf-8"))
    assert "made" in data, f"making it failed earlier in this run: {data.get('error')}"
    return {k: Path(v) for k, v in data["made"].items()}


def run(cmd: list, *args: str, env: dict, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd] + list(args), env=env, cwd=str(cwd), capture_output=True,
                          text=True, encoding="utf-8", errors="replace", stdin=subprocess.DEVNULL, timeout=timeout)


@contextmanager
def serving(cmd: list, env: dict, cwd: Path):
    """`<cmd> serve` on 127.0.0.1, a port the OS picks; yields its URL, then stops it as a user would."""
    # Windows: a group of its own, so Ctrl-Break reaches the service behind any launcher (node, a .exe shim).
    flags = subprocess.CREATE_NEW_PROCESS_GROUP if IS_WINDOWS else 0
    proc = subprocess.Popen([str(c) for c in cmd] + ["serve", "--port", "0", "--no-browser"], env=env,
                            cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                            creationflags=flags)
    seen, found = [], None
    try:
        for line in proc.stderr:
            seen.append(line)
            found = re.search(r" at (http://\S+)", line)
            if found:
                break
        assert found, "the service did not start:\n" + "".join(seen)
        yield found.group(1)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        # As a user stops it: SIGTERM on POSIX, Ctrl-Break on Windows; the service finishes and writes its records.
        proc.send_signal(signal.CTRL_BREAK_EVENT if IS_WINDOWS else signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    if proc.stderr:
        proc.stderr.close()


def check_installed(cmd: list, tmp_path: Path, serve: list | None = None, url: str | None = None, fake=None,
                    env: dict | None = None, cwd: Path | None = None) -> None:
    """The installed command prints its version, finds the service (`status`) and asks a panel (`ask`).
    With `serve`, the service is that installed command too, against a fake upstream made here; otherwise
    `url` is a running service and `fake` its upstream."""
    env = env or clean_env(LLM_USER_PATH=tmp_path / "llm")
    cwd = cwd or tmp_path
    out = run(cmd, "--version", env=env, cwd=cwd)
    assert out.returncode == 0 and out.stdout.strip() == f"benchwarmers {benchwarmers.__version__}", out
    if serve is None:
        ask_panel(cmd, url, fake, env, cwd)
        return
    home = tmp_path / "home"
    home_mod.init(home)
    with FakeOpenAI() as own_fake:
        setup_bench(home, own_fake)
        served_env = {**env, "BENCHWARMERS_HOME": str(home)}
        with serving(serve, served_env, cwd) as served_url:
            ask_panel(cmd, served_url, own_fake, served_env, cwd)


def ask_panel(cmd: list, url: str, fake, env: dict, cwd: Path) -> None:
    out = run(cmd, "status", "--url", url, env=env, cwd=cwd)
    assert out.returncode == 0, out.stdout + out.stderr
    assert benchwarmers.__version__ in out.stdout and url in out.stdout
    out = run(cmd, "ask", "core", "Where is the bug?", env={**env, "BENCHWARMERS_URL": url}, cwd=cwd)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "m-a says: Where is the bug?" in out.stdout and "## Seat 1 · a · member" in out.stdout
    assert requests_for(fake, "m-a"), "the fake upstream was never called"
