"""python scripts/container_check.py: build the image from the Dockerfile and prove it works, with Docker or Podman.

It builds the image (from --base when given, else the Dockerfile's python:*-slim), then checks, printing one line
per check: the container refuses to start without BENCHWARMERS_ADMIN_TOKEN; started with one and a named volume
on /data, it answers /healthz on its published 127.0.0.1 port and its own HEALTHCHECK passes; it runs as a
non-root user that owns /data, with no pip left; admin routes refuse a missing or wrong token; a panel ask goes
through it to a fake upstream run inside the container (tests/fakes, copied in: no real provider is called); and
after the container is removed and a new one started on the same volume, the endpoint, models, collection and the
recorded call are still there. Everything it made (containers, volume, image) is removed at the end unless
--keep. Exit 0 when every check passed, 1 when one failed, 2 when no engine can be used. HOSTING.md says when it
was last run and how."""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "container-check-token-0123456789"
USER_ID = "10001"                  # the Dockerfile's USER
FAKE_DIR = "/tmp/bench-check"      # inside the container: the fake upstream's code and the URL it listens on
FAKE = f"""import os, sys, time
sys.path.insert(0, {FAKE_DIR!r})
from fakes import FakeOpenAI
fake = FakeOpenAI().set_models(["m1", "m2"]).start()
with open({FAKE_DIR!r} + "/url.part", "w") as f:
    f.write(fake.url)
os.replace({FAKE_DIR!r} + "/url.part", {FAKE_DIR!r} + "/url")
while True:
    time.sleep(3600)
"""


class CheckFailed(Exception):
    pass


class Engine:
    def __init__(self, command: str):
        self.command = command
        self.podman = Path(command).name.startswith("podman")

    def run(self, *args: str, timeout: float = 600, check: bool = False) -> subprocess.CompletedProcess:
        done = subprocess.run([self.command, *args], capture_output=True, text=True, encoding="utf-8",
                              errors="replace", stdin=subprocess.DEVNULL, timeout=timeout)
        if check and done.returncode:
            raise CheckFailed(f"{Path(self.command).name} {' '.join(args[:3])} failed ({done.returncode}): "
                              + (done.stderr or done.stdout).strip()[-1500:])
        return done


def find_engine(wanted: str | None) -> Engine:
    """The engine named, else the first of podman and docker whose engine answers; SystemExit(2) if none."""
    names = [wanted] if wanted else ["podman", "docker"]
    tried = []
    for name in names:
        path = shutil.which(name)
        if not path:
            tried.append(f"{name}: not installed")
            continue
        info = subprocess.run([path, "info"], capture_output=True, text=True, timeout=120)
        if info.returncode == 0:
            return Engine(path)
        tried.append(f"{name}: " + ((info.stderr or info.stdout).strip().splitlines() or ["no answer"])[-1])
    sys.stderr.write("No container engine can be used here (" + "; ".join(tried) + ").\n")
    raise SystemExit(2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port: int, method: str, path: str, body: dict | None = None, token: str | None = TOKEN,
         timeout: float = 30) -> tuple[int, dict]:
    """(status, JSON body) of one request to the published port."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}


def wait_healthy(port: int, engine: Engine, name: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if http(port, "GET", "/healthz", token=None, timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    logs = engine.run("logs", name, timeout=60)
    raise CheckFailed(f"/healthz never answered 200 on 127.0.0.1:{port}; the container's log:\n"
                      + (logs.stdout + logs.stderr)[-2000:])


class Check:
    """One run of every check against one image; `made` remembers what to remove."""

    def __init__(self, engine: Engine, tag: str, run_options: list[str]):
        self.engine, self.tag, self.run_options = engine, tag, run_options
        suffix = uuid.uuid4().hex[:8]
        self.volume, self.names, self.port = f"bench-check-{suffix}", [], free_port()

    def start(self) -> str:
        name = f"bench-check-{uuid.uuid4().hex[:8]}"
        self.names.append(name)
        self.engine.run("run", "--detach", "--name", name, *self.run_options, "--env",
                        f"BENCHWARMERS_ADMIN_TOKEN={TOKEN}", "--publish", f"127.0.0.1:{self.port}:8122",
                        "--volume", f"{self.volume}:/data", self.tag, check=True)
        wait_healthy(self.port, self.engine, name)
        return name

    def exec(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.engine.run("exec", name, *args, timeout=120, check=check)

    def refuses_without_token(self) -> str:
        # on the check's own volume: the image's VOLUME would otherwise leave an anonymous one behind
        done = self.engine.run("run", "--rm", *self.run_options, "--volume", f"{self.volume}:/data", self.tag,
                               timeout=120)
        if done.returncode != 2 or "BENCHWARMERS_ADMIN_TOKEN" not in done.stderr:
            raise CheckFailed(f"exit {done.returncode}, stderr: {done.stderr.strip()[-500:]}")
        return "exit 2, naming BENCHWARMERS_ADMIN_TOKEN"

    def healthcheck(self, name: str) -> str:
        image = json.loads(self.engine.run("image", "inspect", self.tag, check=True).stdout)[0]
        found = (image.get("Config") or {}).get("Healthcheck") or image.get("Healthcheck") or {}   # docker, podman
        test = found.get("Test") or []
        if not test or test[0] not in ("CMD", "CMD-SHELL"):
            raise CheckFailed(f"the image has no HEALTHCHECK ({json.dumps(found)[:200]})")
        command = test[1:] if test[0] == "CMD" else ["sh", "-c", test[1]]
        self.exec(name, *command)
        return f"/healthz 200 on 127.0.0.1:{self.port} (published from 8122); the image's HEALTHCHECK passes"

    def non_root(self, name: str) -> str:
        uid = self.exec(name, "id", "-u").stdout.strip()
        owner = self.exec(name, "python", "-c", "import os; print(os.stat('/data').st_uid)").stdout.strip()
        pip = self.exec(name, "python", "-m", "pip", "--version", check=False)
        if uid != USER_ID or owner != USER_ID or pip.returncode == 0:
            raise CheckFailed(f"uid {uid}, /data owned by {owner}, pip exit {pip.returncode}")
        return f"uid {uid}, /data owned by {owner}, no pip"

    def token_refusals(self) -> str:
        statuses = [http(self.port, "GET", "/bench/status", token=t)[0] for t in (None, "wrong-token-0123456789",
                                                                                   TOKEN)]
        if statuses != [401, 401, 200]:
            raise CheckFailed(f"/bench/status answered {statuses} (no token, wrong token, the token)")
        return "/bench/status: 401 without a token, 401 with a wrong one, 200 with it"

    def fake_inside(self, name: str) -> str:
        self.exec(name, "mkdir", "-p", FAKE_DIR)
        self.engine.run("cp", str(ROOT / "tests" / "fakes"), f"{name}:{FAKE_DIR}/fakes", check=True)
        self.engine.run("exec", "--detach", name, "python", "-c", FAKE, check=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            url = self.exec(name, "cat", f"{FAKE_DIR}/url", check=False)
            if url.returncode == 0 and url.stdout.startswith("http://127.0.0.1:"):
                return url.stdout.strip()
            time.sleep(0.5)
        raise CheckFailed("the fake upstream did not start inside the container")

    def panel_ask(self, name: str) -> str:
        url = self.fake_inside(name)
        steps = [("POST", "/bench/endpoints", {"name": "fake", "base_url": url, "api": "openai", "no_key": True}),
                 ("POST", "/bench/models", {"served": "m1", "endpoint": "fake", "alias": "alpha", "quick": True}),
                 ("POST", "/bench/models", {"served": "m2", "endpoint": "fake", "alias": "beta", "quick": True}),
                 ("PUT", "/bench/collections/check", {"members": ["alpha", "beta"], "explore": 0})]
        for method, path, body in steps:
            status, answer = http(self.port, method, path, body, timeout=120)
            if status not in (200, 201):
                raise CheckFailed(f"{method} {path} answered {status}: {json.dumps(answer)[:500]}")
        status, answer = http(self.port, "POST", "/v1/chat/completions", {
            "model": "bench/check", "messages": [{"role": "user", "content": "container check"}]}, timeout=120)
        text = json.dumps(answer)
        if status != 200 or "m1 says: container check" not in text or "m2 says: container check" not in text:
            raise CheckFailed(f"the panel ask answered {status}: {text[:800]}")
        return f"bench/check answered 200 with both seats (alpha, beta) from the fake upstream at {url}"

    def volume_kept(self, first: str) -> str:
        self.engine.run("rm", "--force", first, check=True)
        second = self.start()
        status, col = http(self.port, "GET", "/bench/collections/check")
        calls = http(self.port, "GET", "/bench/calls?limit=5")[1].get("calls") or []
        if status != 200 or col.get("members") != ["alpha", "beta"] or not calls:
            raise CheckFailed(f"after the restart: collection {status} {json.dumps(col)[:300]}, {len(calls)} calls")
        return f"a new container ({second}) on volume {self.volume} has the collection and {len(calls)} recorded call(s)"

    def cleanup(self) -> None:
        for name in self.names:
            self.engine.run("rm", "--force", name, timeout=120)
        self.engine.run("volume", "rm", "--force", self.volume, timeout=120)


def report(label: str, step) -> bool:
    try:
        said = step()
    except (CheckFailed, OSError, subprocess.TimeoutExpired) as e:
        print(f"FAILED {label}: {e}", flush=True)
        return False
    print(f"ok     {label}: {said}", flush=True)
    return True


def build(engine: Engine, tag: str, base: str | None, options: list[str]) -> str:
    args = ["build", "--tag", tag]
    if engine.podman:
        args += ["--format", "docker"]             # OCI images drop HEALTHCHECK; the docker format keeps it
    if base:
        args += ["--build-arg", f"BASE_IMAGE={base}"]
    started = time.monotonic()
    engine.run(*args, *options, str(ROOT), timeout=1800, check=True)
    return f"{tag} from {base or 'the Dockerfile default'} in {time.monotonic() - started:.0f} s"


def checks(engine: Engine, args) -> bool:
    tag = args.tag or f"localhost/benchwarmers-check:{uuid.uuid4().hex[:8]}"
    if not report("build", lambda: build(engine, tag, args.base, shlex.split(args.build_options or ""))):
        return False
    run = Check(engine, tag, shlex.split(args.run_options or ""))
    ok = report("no token, no start", run.refuses_without_token)
    try:
        holder = {}
        ok &= report("start", lambda: holder.setdefault("name", run.start()))
        if "name" in holder:
            name = holder["name"]
            for label, step in (("healthz", lambda: run.healthcheck(name)), ("non-root", lambda: run.non_root(name)),
                                ("admin token", run.token_refusals), ("panel ask", lambda: run.panel_ask(name)),
                                ("volume kept", lambda: run.volume_kept(name))):
                ok &= report(label, step)
    finally:
        if not args.keep:
            run.cleanup()
            engine.run("image", "rm", "--force", tag, timeout=300)
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python scripts/container_check.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="examples:\n  python scripts/container_check.py\n  python scripts/container_check.py "
                                       "--engine podman --base localhost/bench-base:bookworm-py3.11 --build-options "
                                       "'--isolation chroot --network host'")
    p.add_argument("--engine", choices=["podman", "docker"], help="default: the first of podman and docker that "
                                                                   "answers")
    p.add_argument("--base", metavar="IMAGE", help="the base image (BASE_IMAGE; default: the Dockerfile's "
                                                    "python:*-slim)")
    p.add_argument("--tag", help="the image's tag (default: a new localhost/benchwarmers-check:<id>)")
    p.add_argument("--build-options", metavar="OPTIONS", help="more options for the engine's build, as one string")
    p.add_argument("--run-options", metavar="OPTIONS", help="more options for each container run, as one string")
    p.add_argument("--keep", action="store_true", help="keep the image, containers and volume for a look")
    args = p.parse_args(argv)
    engine = find_engine(args.engine)
    print(f"engine: {engine.command} ({engine.run('--version').stdout.strip()})", flush=True)
    return 0 if checks(engine, args) else 1


if __name__ == "__main__":
    sys.exit(main())
