"""What the benchmarks share: child processes with their CPU and memory, the service in a temp folder, an asyncio
load generator over keep-alive connections, and the figures of one case (added latency, rate, CPU, RSS)."""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
FLOOR = 0.05          # the fake upstream's delay before each answer, seconds


# ---- the processes ----------------------------------------------------------------------------

class Proc:
    """A child process whose first line naming a URL (on stdout or stderr) says where it listens."""

    def __init__(self, cmd: list, env: dict | None = None, url_on: str = "stdout", timeout: float = 30.0,
                 cwd: Path = ROOT):
        self.started = time.perf_counter()
        self.p = subprocess.Popen(cmd, env=env, cwd=str(cwd), stdin=subprocess.DEVNULL, text=True,
                                  stdout=subprocess.PIPE if url_on == "stdout" else subprocess.DEVNULL,
                                  stderr=subprocess.PIPE if url_on == "stderr" else None)
        stream = self.p.stdout if url_on == "stdout" else self.p.stderr
        self.url = ""
        deadline = time.monotonic() + timeout
        while not self.url and time.monotonic() < deadline:
            line = stream.readline()
            if not line:
                raise RuntimeError(f"{cmd[1]} exited before saying where it listens (exit {self.p.poll()})")
            for word in line.split():
                if word.startswith("http://"):
                    self.url = word
                    break
        self.url_seconds = time.perf_counter() - self.started
        # Keep reading what it says, so a chatty log can never fill the pipe and stall the process.
        threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()

    @property
    def pid(self) -> int:
        return self.p.pid

    def cpu(self) -> float | None:
        """utime + stime of the process, seconds (Linux only)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError, AttributeError):
            return None

    def switches(self) -> int | None:
        """Context switches of all its threads so far, voluntary and not (Linux only): each is a thread hand-off."""
        total = 0
        try:
            for task in Path(f"/proc/{self.pid}/task").iterdir():
                for line in (task / "status").read_text().splitlines():
                    if "ctxt_switches:" in line:
                        total += int(line.split(":")[1])
        except (OSError, ValueError):
            return None if not total else total
        return total

    def memory(self) -> dict:
        """{"VmRSS": MB, "VmHWM": MB, "Threads": n} (Linux only; {} elsewhere)."""
        out = {}
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                name, _, value = line.partition(":")
                if name in ("VmRSS", "VmHWM"):
                    out[name] = int(value.split()[0]) / 1024
                elif name == "Threads":
                    out[name] = int(value)
        except (OSError, ValueError):
            pass
        return out

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()   # SIGTERM: the service commits its queued records and exits
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)


def service_env(home: Path, bytecode: Path | None = None, cold: bool = False) -> dict:
    """The service's environment: its own data folder. `bytecode`: compiled modules kept in that folder (as an
    installed or once-run copy has them), never in the checkout; with `cold` as well, none written there, so
    every start compiles from source."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BENCHWARMERS_") and k not in ("BENCH_CLIENT", "LLM_USER_PATH")}
    env.update(BENCHWARMERS_HOME=str(home), LLM_USER_PATH=str(home / "llm"), PYTHONUNBUFFERED="1")
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
        if cold:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def configure(home: Path, endpoints: dict, models: dict, collections: dict, settings: dict | None = None,
              keyed: bool = False) -> None:
    """The service's config files: {name: {"base_url", "api"}} endpoints, {alias: endpoint} models. `keyed`: each
    endpoint has a key in llm's keys.json (as a user's real endpoints do), else none. The fakes stand for remote
    providers, so their seats are asked whole, as a remote provider's are (on loopback they would stream: a local
    server's seats do), unless `settings` says otherwise."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    if keyed:
        (home / "llm").mkdir(parents=True, exist_ok=True)   # LLM_USER_PATH in service_env
        (home / "llm" / "keys.json").write_text(json.dumps({n: f"sk-bench-{n}-0123456789abcdef" for n in endpoints}),
                                                encoding="utf-8")
    files = {
        "endpoints.json": {"endpoints": {n: {"base_url": e["base_url"], "api": e["api"], "no_key": not keyed}
                                         for n, e in endpoints.items()}},
        "models.json": {"models": {m: {"endpoint": ep, "served": m, "facts": {}} for m, ep in models.items()}},
        "collections.json": {"collections": collections},
        "settings.json": {"stream_seats": "none", **(settings or {})},
    }
    for name, data in files.items():
        (config / name).write_text(json.dumps(data, indent=2), encoding="utf-8")


def start_service(home: Path, root: Path = ROOT, profile: Path | None = None, bytecode: Path | None = None,
                  cold: bool = False) -> Proc:
    """serve.py of the checkout `root` (another checkout's for a before/after run); under cProfile when asked;
    `bytecode`, `cold`: see service_env."""
    args = ["--port", "0", "--no-browser"]
    cmd = ([sys.executable, str(HERE / "profiled.py"), str(profile), "--root", str(root), *args] if profile else
           [sys.executable, str(Path(root) / "serve.py"), *args])
    return Proc(cmd, service_env(home, bytecode, cold), url_on="stderr", cwd=Path(root))


def wait_healthy(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def upstream_connects(upstream: str | None) -> int | None:
    """TCP connections the fake upstream has accepted so far (fastfake's GET /stats)."""
    if not upstream:
        return None
    with urllib.request.urlopen(fake_root(upstream) + "/stats", timeout=10) as r:
        return json.loads(r.read())["connections"]


def fake_root(url: str) -> str:
    split = urlsplit(url)
    return f"{split.scheme}://{split.netloc}"


# ---- the load generator -----------------------------------------------------------------------

@dataclass
class Load:
    latencies: list = field(default_factory=list)    # seconds, whole request
    firsts: list = field(default_factory=list)       # seconds to the first body chunk holding `marker` (streams)
    errors: int = 0
    wall: float = 0.0


async def read_response(reader: asyncio.StreamReader, t0: float, load: Load, marker: bytes) -> bool:
    """Read one HTTP/1.1 response (Content-Length or chunked); True when it was a 200."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    if "chunked" not in headers.get("transfer-encoding", ""):
        await reader.readexactly(int(headers.get("content-length", 0)))
        return status == 200
    seen = False
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        data = await reader.readexactly(size + 2)
        if not seen and size and marker in data:
            seen = True
            load.firsts.append(time.perf_counter() - t0)
        if size == 0:
            return status == 200


async def client(url: str, path: str, body: bytes, headers: dict, todo: list, load: Load, deadline: float,
                 marker: bytes) -> None:
    split = urlsplit(url)
    reader, writer = await asyncio.open_connection(split.hostname, split.port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = (f"POST {path} HTTP/1.1\r\nHost: {split.netloc}\r\nContent-Type: application/json\r\n{extra}"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    try:
        while todo and time.perf_counter() < deadline:
            todo.pop()
            t0 = time.perf_counter()
            writer.write(request)
            ok = await read_response(reader, t0, load, marker)
            load.latencies.append(time.perf_counter() - t0)
            load.errors += not ok
    finally:
        writer.close()


async def generate(url: str, path: str, body: bytes, headers: dict, n: int, concurrency: int, max_seconds: float,
                   marker: bytes) -> Load:
    load, todo = Load(), list(range(n))
    t0 = time.perf_counter()
    await asyncio.gather(*(client(url, path, body, headers, todo, load, t0 + max_seconds, marker)
                           for _ in range(concurrency)))
    load.wall = time.perf_counter() - t0
    return load


def run_load(url: str, payload: dict | bytes, n: int, concurrency: int, max_seconds: float = 120.0, *,
             path: str = "/v1/chat/completions", headers: dict | None = None, marker: bytes = b"## Seat") -> Load:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return asyncio.run(generate(url, path, body, headers or {}, n, concurrency, max_seconds, marker))


# ---- one case ---------------------------------------------------------------------------------

def percentile(values: list, q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(proc: Proc | None, url: str, label: str, payload: dict | bytes, n: int, concurrency: int,
            upstream: str | None = None, **load_kw) -> dict:
    """Warm up, then n requests at this concurrency; figures net of the FLOOR. The warm-up is four rounds of
    `concurrency` asks: one round left the gateway's connection pool and thread pools short of what the load needs,
    so the measured asks at 64 at once paid for opening some 160 upstream connections (0.4 ms of CPU a panel)."""
    run_load(url, payload, max(4 * concurrency, 8), concurrency, **load_kw)
    cpu0, conn0, sw0 = proc.cpu() if proc else None, upstream_connects(upstream), proc.switches() if proc else None
    load = run_load(url, payload, n, concurrency, **load_kw)
    cpu1, conn1, sw1 = proc.cpu() if proc else None, upstream_connects(upstream), proc.switches() if proc else None
    done = len(load.latencies)
    ms = lambda s: (s - FLOOR) * 1000   # noqa: E731
    return {
        "case": label, "c": concurrency, "n": done, "errors": load.errors,
        "p50": ms(percentile(load.latencies, 0.5)), "p99": ms(percentile(load.latencies, 0.99)),
        "rps": done / load.wall if load.wall else 0.0,
        "first": ms(percentile(load.firsts, 0.5)) if load.firsts else None,
        "cpu": (cpu1 - cpu0) * 1000 / done if cpu0 is not None and cpu1 is not None and done else None,
        "hwm": proc.memory().get("VmHWM") if proc else None,
        "connects": conn1 - conn0 if conn0 is not None else None,
        "switches": (sw1 - sw0) / done if sw0 is not None and sw1 is not None and done else None,
    }


def fmt(value, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def load_average() -> str:
    """The 1-minute load average (`uptime`'s first figure), for the record beside each figure."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):
        return "n/a"


def median_rows(runs: list, figures: tuple, keep: tuple = ()) -> list:
    """Per case (who, case, concurrency) over the runs: the median of each of `figures` (those measured), the load
    averages side by side, and the `keep` fields of its first run."""
    grouped: dict = {}
    for row in (r for run in runs for r in run):
        grouped.setdefault((row["who"], row["case"], row["c"]), []).append(row)
    out = []
    for (who, case, c), rows in grouped.items():
        merged = {"who": who, "case": case, "c": c, "loads": ", ".join(r["load"] for r in rows),
                  **{k: rows[0][k] for k in keep}}
        for k in figures:
            values = [r[k] for r in rows if r.get(k) is not None]
            merged[k] = statistics.median(values) if values else None
        out.append(merged)
    return out
