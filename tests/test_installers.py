"""The ways a user installs Benchwarmers: pipx, uv tool install, uvx --from . and npx of the packed npm tarball."""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.install import NODE, NPX, built, check_installed, clean_env, copy_source, exe, npm_tarball, run
from tests.helpers.panel import bench, fake  # noqa: F401  (fixtures: a service from source and its fake upstream)

pytestmark = pytest.mark.slow


def uv_tool(name: str) -> str | None:
    """uv and uvx come with the `uv` test extra (a binary beside this interpreter's scripts)."""
    if importlib.util.find_spec("uv") is None:
        return None
    import uv
    found = Path(uv.find_uv_bin())
    sibling = found.with_name(name + found.suffix)
    return str(sibling) if sibling.is_file() else shutil.which(name)


def uv_env(tmp_path: Path) -> dict:
    # Everything uv writes stays in tmp_path, and it never downloads an interpreter: it uses this one.
    return clean_env(UV_CACHE_DIR=tmp_path / "uv-cache", UV_TOOL_DIR=tmp_path / "uv-tools",
                     UV_TOOL_BIN_DIR=tmp_path / "uv-bin", UV_PYTHON_DOWNLOADS="never", NO_COLOR="1",
                     LLM_USER_PATH=tmp_path / "llm")


@pytest.mark.skipif(importlib.util.find_spec("pipx") is None, reason="pipx (a test extra) is not installed")
def test_pipx_install_of_the_wheel(tmp_path, tmp_path_factory):
    wheel = built(tmp_path_factory)["wheel"]
    env = clean_env(PIPX_HOME=tmp_path / "pipx", PIPX_BIN_DIR=tmp_path / "bin", PIPX_MAN_DIR=tmp_path / "man",
                    LLM_USER_PATH=tmp_path / "llm", NO_COLOR="1")
    out = run([sys.executable, "-m", "pipx"], "install", "--python", sys.executable, str(wheel), env=env,
              cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    check_installed([exe(tmp_path / "bin", "bench")], tmp_path, serve=[exe(tmp_path / "bin", "benchwarmers")],
                    env=env)


@pytest.mark.skipif(not uv_tool("uv"), reason="uv (a test extra) is not installed")
def test_uv_tool_install_of_the_wheel(tmp_path, tmp_path_factory):
    wheel = built(tmp_path_factory)["wheel"]
    env = uv_env(tmp_path)
    out = run([uv_tool("uv")], "tool", "install", "--python", sys.executable, str(wheel), env=env, cwd=tmp_path,
              timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    check_installed([exe(tmp_path / "uv-bin", "bench")], tmp_path,
                    serve=[exe(tmp_path / "uv-bin", "benchwarmers")], env=env)


@pytest.mark.skipif(not uv_tool("uvx"), reason="uvx (from the uv test extra) is not installed")
def test_uvx_from_a_checkout(bench, fake, tmp_path):
    """`uvx --from . bench ...` in a checkout (a copy: the build writes into its source folder)."""
    source = copy_source(tmp_path / "checkout")
    cmd = [uv_tool("uvx"), "--python", sys.executable, "--from", ".", "bench"]
    check_installed(cmd, tmp_path, url=bench.url, fake=fake, env=uv_env(tmp_path), cwd=source)


@pytest.mark.skipif(not (NODE and NPX), reason="node and npx are not installed")
def test_npx_of_the_packed_tarball(bench, fake, tmp_path, tmp_path_factory):
    tarball = npm_tarball(tmp_path_factory)
    env = clean_env(npm_config_cache=tmp_path / "npm-cache", npm_config_update_notifier="false",
                    BENCHWARMERS_PYTHON=sys.executable, LLM_USER_PATH=tmp_path / "llm")
    cmd = [NPX, "--yes", "--package", str(tarball), "--", "bench"]
    check_installed(cmd, tmp_path, url=bench.url, fake=fake, env=env)
