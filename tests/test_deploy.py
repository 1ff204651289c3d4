"""The hosting templates in deploy/ and HOSTING.md: each template's key points, read as the platform reads it."""
from __future__ import annotations

import json
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from benchwarmers.server.routes import PUBLIC
from benchwarmers.service.table import build_routes
from tests.helpers.install import clean_env, run
from tests.test_container import env_of, final_stage

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
HOSTING = ROOT / "HOSTING.md"
SECRETS = re.compile(r"BENCHWARMERS_(ADMIN_TOKEN|KEY_\w+)$")


def image() -> dict:
    """What every template must agree with: the image's data folder and port."""
    env = env_of(final_stage())
    return {"home": env["BENCHWARMERS_HOME"], "port": int(env["BENCHWARMERS_PORT"])}


def section(title: str) -> str:
    """One `## title` section of HOSTING.md."""
    text = HOSTING.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"HOSTING.md has no section {title!r}"
    return match.group(1)


def test_healthz_that_the_templates_check_is_a_public_get():
    healthz = [r for r in build_routes() if r.pattern == "/healthz"]
    assert healthz and healthz[0].method == "GET" and healthz[0].auth == PUBLIC


# ---- Fly.io --------------------------------------------------------------------------------------

def test_fly_toml_mounts_a_volume_at_the_data_folder_and_stays_on():
    fly = tomllib.loads((DEPLOY / "fly" / "fly.toml").read_text(encoding="utf-8"))
    assert fly["build"]["dockerfile"] == "Dockerfile" and (ROOT / "Dockerfile").is_file()
    assert fly["mounts"]["destination"] == image()["home"]
    assert fly["mounts"]["source"] and fly["mounts"]["initial_size"] == "1gb"
    service = fly["http_service"]
    assert service["internal_port"] == image()["port"] and service["force_https"] is True
    assert service["auto_stop_machines"] == "off" and service["min_machines_running"] >= 1
    assert fly["kill_signal"] == "SIGTERM"                       # the service stops cleanly on it
    assert [c["type"] for c in fly["checks"].values()] == ["tcp"]
    assert all(c["port"] == image()["port"] for c in fly["checks"].values())
    # The Host the proxy forwards is the app's own fly.dev name: it must be in the public hosts.
    assert fly["env"]["BENCHWARMERS_PUBLIC_HOSTS"] == f"{fly['app']}.fly.dev"
    assert not any(SECRETS.match(name) for name in fly["env"])    # secrets go in with fly secrets


# ---- Render --------------------------------------------------------------------------------------

def test_render_blueprint_has_a_1_gb_disk_and_a_generated_token():
    blueprint = yaml.safe_load((DEPLOY / "render" / "render.yaml").read_text(encoding="utf-8"))
    [service] = blueprint["services"]
    assert service["type"] == "web" and service["runtime"] == "docker"
    assert (ROOT / service["dockerfilePath"]).resolve() == (ROOT / "Dockerfile").resolve()
    assert service["dockerContext"] == "."
    assert service["disk"]["mountPath"] == image()["home"] and service["disk"]["sizeGB"] == 1
    assert service["plan"] != "free"                              # free instances cannot have a disk
    assert service["healthCheckPath"] == "/healthz"
    env = {v["key"]: v for v in service["envVars"]}
    assert env["BENCHWARMERS_ADMIN_TOKEN"] == {"key": "BENCHWARMERS_ADMIN_TOKEN", "generateValue": True}
    assert env["BENCHWARMERS_KEY_OPENROUTER"].get("sync") is False and "value" not in env["BENCHWARMERS_KEY_OPENROUTER"]
    assert env["BENCHWARMERS_PUBLIC_HOSTS"].get("sync") is False
    assert env["PORT"]["value"] == str(image()["port"])
    assert not any(SECRETS.match(k) and "value" in v for k, v in env.items())


# ---- Railway -------------------------------------------------------------------------------------

def test_railway_config_builds_the_dockerfile_and_waits_for_healthz():
    config = json.loads((DEPLOY / "railway" / "railway.json").read_text(encoding="utf-8"))
    assert config["build"] == {"builder": "DOCKERFILE", "dockerfilePath": "Dockerfile"}
    assert config["deploy"]["healthcheckPath"] == "/healthz"
    assert config["deploy"]["restartPolicyType"] in ("ON_FAILURE", "ALWAYS")
    steps = section("Railway")
    for needed in (f"PORT={image()['port']}", "healthcheck.railway.app", "RAILWAY_RUN_UID=0",
                   f"--mount-path {image()['home']}", "/deploy/railway/railway.json", "${{RAILWAY_PUBLIC_DOMAIN}}"):
        assert needed in steps, needed


# ---- a VPS with Caddy ----------------------------------------------------------------------------

def unit(path: Path = DEPLOY / "vps" / "benchwarmers.service") -> dict:
    """{section: [(key, value), ...]}: systemd allows a key more than once, so no dict per section."""
    out, current = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = out.setdefault(line.strip("[]"), [])
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, line
        current.append((key, value))
    return out


def values(pairs: list, key: str) -> list[str]:
    return [v for k, v in pairs if k == key]


def test_caddy_fronts_the_loopback_service_with_automatic_https():
    caddy = (DEPLOY / "vps" / "Caddyfile").read_text(encoding="utf-8")
    site = re.search(r"^(\S+) \{$", caddy, re.M).group(1)
    assert "." in site and not site.startswith(("http://", ":"))   # a name: Caddy gets its certificate
    assert re.search(rf"reverse_proxy 127\.0\.0\.1:{image()['port']}\b", caddy)
    assert "flush_interval -1" in caddy
    env_example = (DEPLOY / "vps" / "env.example").read_text(encoding="utf-8")
    assert f"BENCHWARMERS_PUBLIC_HOSTS={site}" in env_example
    assert re.search(r"^BENCHWARMERS_ADMIN_TOKEN=$", env_example, re.M)


def test_systemd_unit_runs_on_loopback_as_its_own_user_with_its_own_state():
    service = unit()["Service"]
    assert values(service, "DynamicUser") == ["yes"]
    state = values(service, "StateDirectory")[0]
    assert f"BENCHWARMERS_HOME=/var/lib/{state}" in values(service, "Environment")
    assert values(service, "EnvironmentFile") == ["/etc/benchwarmers/env"]
    start = shlex.split(values(service, "ExecStart")[0])
    assert start[1:] == ["serve", "--host", "127.0.0.1", "--port", str(image()["port"]), "--no-browser"]
    assert values(service, "Restart") == ["on-failure"] and values(service, "KillSignal") == ["SIGTERM"]
    assert unit()["Install"] == [("WantedBy", "multi-user.target")]


@pytest.mark.parametrize("token, allowed", [(None, False), ("short", False), ("t" * 16, True)])
def test_systemd_unit_refuses_to_start_without_an_admin_token(tmp_path, token, allowed):
    """The unit's ExecStartPre, run here with this interpreter in place of the venv's."""
    check = shlex.split(values(unit()["Service"], "ExecStartPre")[0])
    assert check[0] == "/opt/benchwarmers/bin/python"
    env = clean_env()
    env.pop("BENCHWARMERS_ADMIN_TOKEN", None)
    if token:
        env["BENCHWARMERS_ADMIN_TOKEN"] = token
    out = run([sys.executable, *check[1:]], env=env, cwd=tmp_path, timeout=30)
    assert (out.returncode == 0) is allowed, out.stderr
    if not allowed:
        assert "BENCHWARMERS_ADMIN_TOKEN" in out.stderr and "/etc/benchwarmers/env" in out.stderr


# ---- HOSTING.md ----------------------------------------------------------------------------------

def test_hosting_md_compares_every_option_point_by_point():
    text = HOSTING.read_text(encoding="utf-8")
    assert re.search(r"\*\*\d{4}-\d{2}-\d{2}\*\*", text), "HOSTING.md must say when its facts were checked"
    table = section("Side by side")
    header = next(line for line in table.splitlines() if line.startswith("| |"))
    options = [c.strip() for c in header.strip("|").split("|")][1:]
    assert options == ["Fly.io", "Render", "Railway", "VPS with Caddy"]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    for point in ("Template", "Cost a month", "Sleeping", "Disk", "HTTPS", "Update"):
        assert point in rows and rows[point].count("|") == len(options) + 2, point
    for template in ("deploy/fly/fly.toml", "deploy/render/render.yaml", "deploy/railway/railway.json",
                     "deploy/vps/"):
        assert f"`{template}`" in rows["Template"] and (ROOT / template).exists(), template


def test_hosting_md_gives_the_commands_and_names_its_sources():
    for title, command in (("Fly.io", "fly deploy"), ("Render", "deploy/render/render.yaml"),
                           ("Railway", "railway up"), ("A VPS with Caddy", "systemctl enable --now benchwarmers")):
        steps = section(title)
        assert command in steps, title
        assert "Update" in steps, title
    sources = section("Sources (read 2026-12-01)")
    for site in ("fly.io/docs", "render.com/docs", "docs.railway.com", "caddyserver.com/docs"):
        assert site in sources, site
    # Every repository file the page names exists.
    text = HOSTING.read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:deploy|tests)/[^`\s]*)`", text)) | {"compose.yaml", ".env.example", ".gitignore",
                                                                      ".dockerignore"}
    for name in named:
        assert (ROOT / name).exists(), name
        assert name.rstrip("/").split("/")[-1] in text, name


def test_the_messages_hosting_md_quotes_are_the_services_own():
    troubleshooting = section("If it does not start, or answers 403")
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "benchwarmers").rglob("*.py"))
    for quoted in ("Refusing to listen on", "Cannot listen on", "Cannot use the data folder",
                   "is not one this server answers to"):
        assert quoted in troubleshooting and quoted in code, quoted
