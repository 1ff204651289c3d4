"""The container: Dockerfile, compose.yaml and .env.example checked as text; the image's start command run here
(outside a container) refuses without the admin token; and, opted in (BENCHWARMERS_CONTAINER_TEST=1) where Podman
or Docker answers, the image built and run by scripts/container_check.py."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.helpers.install import clean_env, run
from tests.helpers.panel import free_port, wait_for
from tests.security.attack import raw

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "container-test-token-0123456789"


def instructions(path: Path = ROOT / "Dockerfile") -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order: comments dropped, backslash continuations joined."""
    out, pending = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def env_of(stage: list) -> dict:
    """ENV values of a stage (the KEY=VALUE form, several on a line)."""
    env = {}
    for word, rest in stage:
        if word == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(rest))
    return env


def exec_form(rest: str) -> list[str]:
    """A JSON-array CMD/HEALTHCHECK, without the HEALTHCHECK options before CMD."""
    return json.loads(rest[rest.index("["):])


def start_command() -> list[str]:
    cmd = exec_form(next(rest for word, rest in final_stage() if word == "CMD"))
    assert cmd[0] == "benchwarmers", cmd          # the console script the wheel installs
    return [sys.executable, "-m", "benchwarmers", *cmd[1:]]


def healthcheck_command() -> list[str]:
    rest = next(rest for word, rest in final_stage() if word == "HEALTHCHECK")
    cmd = exec_form(rest.split("CMD", 1)[1])
    assert cmd[0] == "python", cmd
    return [sys.executable, *cmd[1:]]


def container_env(tmp_path: Path, **extra) -> dict:
    """The image's ENV, with the data folder and port moved to this test's own."""
    env = clean_env(**env_of(final_stage()), PYTHONPATH=ROOT, LLM_USER_PATH=tmp_path / "llm")
    env.pop("BENCHWARMERS_ADMIN_TOKEN", None)
    env.update(BENCHWARMERS_HOME=str(tmp_path / "data"), BENCHWARMERS_PORT=str(free_port()))
    env.update({k: str(v) for k, v in extra.items()})
    return env


# ---- the files, read as text -----------------------------------------------------------------------

def test_dockerfile_uses_a_slim_official_python_and_leaves_no_build_tools():
    steps = instructions()
    version = next(rest for word, rest in steps if word == "ARG" and rest.startswith("PYTHON_VERSION="))
    assert tuple(int(x) for x in version.split("=")[1].split(".")) >= (3, 11)
    base = next(rest for word, rest in steps if word == "ARG" and rest.startswith("BASE_IMAGE="))
    assert base == "BASE_IMAGE=python:${PYTHON_VERSION}-slim"          # the official image unless told otherwise
    for word, rest in steps:
        if word == "FROM":
            assert re.match(r"\$\{BASE_IMAGE\}(\s|$)", rest), rest
    final = " ".join(rest for word, rest in final_stage() if word == "RUN")
    assert "pip uninstall --yes pip" in final                     # no installer left in the running image
    for tool in ("apt-get install", "gcc", "build-essential", "curl", "wget"):
        assert tool not in final, tool


def test_dockerfile_runs_as_a_non_root_user_after_every_root_step():
    stage = final_stage()
    users = [i for i, (word, _) in enumerate(stage) if word == "USER"]
    assert users, "the image must name its user"
    user = stage[users[-1]][1].split(":")[0]
    assert user not in ("root", "0")
    assert all(word != "RUN" for word, _ in stage[users[-1]:]), "a RUN after USER would run as that user anyway"
    assert re.search(rf"useradd --uid {user}\b", " ".join(rest for _, rest in stage))
    assert re.search(rf"chown {user}:{user} /data", " ".join(rest for _, rest in stage))


def test_dockerfile_keeps_the_data_folder_in_a_volume_and_checks_health():
    stage = final_stage()
    env = env_of(stage)
    assert env["BENCHWARMERS_HOME"] == "/data"
    assert json.loads(next(rest for word, rest in stage if word == "VOLUME")) == ["/data"]
    assert next(rest for word, rest in stage if word == "EXPOSE") == env["BENCHWARMERS_PORT"] == "8122"
    check = healthcheck_command()
    assert "/healthz" in check[-1] and "http.client" in check[-1]   # the standard library: no curl needed


def test_dockerfile_listens_on_all_interfaces_only_because_the_token_is_required():
    cmd = start_command()
    assert cmd[3:5] == ["serve", "--host"] and cmd[5] == "0.0.0.0" and "--no-browser" in cmd
    assert "BENCHWARMERS_ADMIN_TOKEN" not in env_of(final_stage())   # never baked into the image


def test_dockerignore_keeps_secrets_and_local_state_out_of_the_build():
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    assert {".env", ".env.*", ".git", ".venv", ".benchwarmers-home", "tests"} <= ignored
    for needed in ("benchwarmers", "examples", "plugins", "pyproject.toml", "setup.py", "README.md"):
        assert needed not in ignored


def test_compose_publishes_on_loopback_only_and_reads_dot_env():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    service = compose["services"]["benchwarmers"]
    assert service["build"] == "."
    assert service["env_file"] == ".env"
    assert service["ports"] == ["127.0.0.1:8122:8122"]
    volume, target = service["volumes"][0].split(":")
    assert target == "/data" and volume in compose["volumes"]
    assert "BENCHWARMERS_ADMIN_TOKEN" in (ROOT / "compose.yaml").read_text(encoding="utf-8")
    for name, other in compose["services"].items():
        for port in other.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond this machine"


def test_env_example_names_the_settings_and_holds_no_secret():
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    values = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert values == {"BENCHWARMERS_ADMIN_TOKEN": "", "BENCHWARMERS_KEY_OPENROUTER": ""}
    assert any("BENCHWARMERS_PUBLIC_HOSTS" in line for line in lines)


# ---- the start command, run here ---------------------------------------------------------------

@pytest.mark.parametrize("token", [None, "too-short"])
def test_start_command_refuses_without_a_real_admin_token(tmp_path, token):
    env = container_env(tmp_path, **({"BENCHWARMERS_ADMIN_TOKEN": token} if token else {}))
    out = run(start_command(), env=env, cwd=tmp_path, timeout=60)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Refusing to listen on 0.0.0.0" in out.stderr and "BENCHWARMERS_ADMIN_TOKEN" in out.stderr
    assert "Traceback" not in out.stderr


def test_start_command_serves_with_a_token_and_the_healthcheck_sees_it(tmp_path):
    env = container_env(tmp_path, BENCHWARMERS_ADMIN_TOKEN=TOKEN)
    health = healthcheck_command()
    proc = subprocess.Popen(start_command(), env=env, cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: run(health, env=env, cwd=tmp_path, timeout=30).returncode == 0, timeout=30, every=0.3)
        port = env["BENCHWARMERS_PORT"]
        req = urllib.request.Request(f"http://127.0.0.1:{port}/bench/status")
        with pytest.raises(urllib.error.HTTPError) as refused:     # admin routes want the token
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 401
        # Published on another host port (docker run -p 127.0.0.1:9000:8122): the browser names that port.
        url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {TOKEN}"}
        for host in ("127.0.0.1:9000", "localhost:9000", "[::1]:9000"):
            assert raw(url, "GET", "/healthz", headers={"Host": host})[0] == 200, host
            assert raw(url, "GET", "/bench/status", headers={"Host": host, **auth})[0] == 200, host
        status, _, body = raw(url, "GET", "/bench/status", headers={"Host": "bench.example.com:9000", **auth})
        assert status == 403
        assert "Set BENCHWARMERS_PUBLIC_HOSTS=bench.example.com:9000 where" in json.loads(body)["error"]["message"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()
    assert run(health, env=env, cwd=tmp_path, timeout=30).returncode != 0    # nothing answers: unhealthy


# ---- the image, built and run: opt-in ----------------------------------------------------------------

CHECKS = ("build", "no token, no start", "start", "healthz", "non-root", "admin token", "panel ask", "volume kept")


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("BENCHWARMERS_CONTAINER_TEST") != "1",
                    reason="opt-in: BENCHWARMERS_CONTAINER_TEST=1 builds the image and runs it (HOSTING.md)")
def test_the_image_builds_and_passes_every_container_check(tmp_path):
    """scripts/container_check.py, run whole: the image from BENCHWARMERS_CONTAINER_BASE (else the Dockerfile's
    python:*-slim), with BENCHWARMERS_CONTAINER_BUILD_OPTIONS for the engine's build (Podman in a sandbox:
    "--isolation chroot --network host")."""
    command = [sys.executable, str(ROOT / "scripts" / "container_check.py")]
    if os.environ.get("BENCHWARMERS_CONTAINER_BASE"):
        command += ["--base", os.environ["BENCHWARMERS_CONTAINER_BASE"]]
    if os.environ.get("BENCHWARMERS_CONTAINER_BUILD_OPTIONS"):
        command += ["--build-options", os.environ["BENCHWARMERS_CONTAINER_BUILD_OPTIONS"]]
    done = run(command, env=clean_env(), cwd=tmp_path, timeout=3600)
    if done.returncode == 2:                      # the script found no engine that answers: it says which and why
        pytest.skip(f"{done.stderr.strip()} The checks above still ran.")
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    for check in CHECKS:                          # each check ran and passed, none left out
        assert any(line.startswith(f"ok     {check}: ") for line in lines), (check, done.stdout)
    assert not any(line.startswith("FAILED") for line in lines)
