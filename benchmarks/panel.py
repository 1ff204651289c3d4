"""The gateway's own cost: latency over a 50 ms upstream, throughput, CPU and memory, against a naive fan-out.

    python benchmarks/panel.py            # the full run (a few minutes on a 2-core machine)
    python benchmarks/panel.py --quick    # a smoke run (well under a minute), for CI

Three processes besides this one, all on 127.0.0.1: benchmarks/fastfake.py (an OpenAI-compatible upstream whose
every answer takes 50 ms), the service (`serve.py --port 0 --no-browser`, its own temp data folder, five models
m1..m5 and a collection `five` of them), and benchmarks/naive_fanout.py (the baseline). This process is the load
generator: asyncio, one keep-alive connection per concurrent client, a fixed number of requests per case.
Figures: p50/p99 latency minus the 50 ms floor, requests/s, time to the first seat's block when streaming,
service CPU ms per request and peak RSS (Linux /proc; "n/a" elsewhere), start-up time, RSS over a long run.
Prints Markdown tables; asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
FLOOR = 0.05
SEATS = [f"m{i}" for i in range(1, 6)]
PROMPT = [{"role": "user", "content": "Say something short."}]


# ---- the processes ----------------------------------------------------------------------------

class Proc:
    """A child process whose first line naming a URL (on stdout or stderr) says where it listens."""

    def __init__(self, cmd: list, env: dict | None = None, url_on: str = "stdout", timeout: float = 30.0):
        self.started = time.perf_counter()
        self.p = subprocess.Popen(cmd, env=env, cwd=str(ROOT), stdin=subprocess.DEVNULL, text=True,
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
        self._stream = stream
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

    def memory(self) -> dict:
        """{"VmRSS": MB, "VmHWM": MB} (Linux only; {} elsewhere)."""
        out = {}
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                name, _, value = line.partition(":")
                if name in ("VmRSS", "VmHWM"):
                    out[name] = int(value.split()[0]) / 1024
        except (OSError, ValueError):
            pass
        return out

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()   # SIGTERM: the service commits its queued records and exits
            try:
                self.p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(timeout=5)


def service_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("BENCHWARMERS_") and k not in ("BENCH_CLIENT", "LLM_USER_PATH")}
    env.update(BENCHWARMERS_HOME=str(home), LLM_USER_PATH=str(home / "llm"), PYTHONUNBUFFERED="1")
    return env


def configure(home: Path, upstream: str, settings: dict | None = None) -> None:
    """Five models on the fake upstream and a collection of all five (no explore seats: exactly five)."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    files = {
        "endpoints.json": {"endpoints": {"fake": {"base_url": upstream, "api": "openai", "no_key": True}}},
        "models.json": {"models": {m: {"endpoint": "fake", "served": m, "facts": {}} for m in SEATS}},
        "collections.json": {"collections": {"five": {"members": SEATS, "explore": 0}}},
        "settings.json": settings or {},
    }
    for name, data in files.items():
        (config / name).write_text(json.dumps(data, indent=2), encoding="utf-8")


def start_service(home: Path) -> Proc:
    return Proc([sys.executable, str(ROOT / "serve.py"), "--port", "0", "--no-browser"], service_env(home),
                url_on="stderr")


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


# ---- the load generator -----------------------------------------------------------------------

@dataclass
class Load:
    latencies: list = field(default_factory=list)    # seconds, whole request
    first_blocks: list = field(default_factory=list)  # seconds to the first "## Seat" block (streams)
    errors: int = 0
    wall: float = 0.0


async def read_response(reader: asyncio.StreamReader, t0: float, load: Load) -> bool:
    """Read one HTTP/1.1 response (Content-Length or chunked); True when it was a 200."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
    if "chunked" not in headers.get("transfer-encoding", ""):
        await reader.readexactly(int(headers.get("content-length", 0)))
        return status == 200
    seen_block = False
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        data = await reader.readexactly(size + 2)
        if not seen_block and b"## Seat" in data:
            seen_block = True
            load.first_blocks.append(time.perf_counter() - t0)
        if size == 0:
            return status == 200


async def client(url: str, path: str, body: bytes, todo: list, load: Load, deadline: float) -> None:
    split = urlsplit(url)
    reader, writer = await asyncio.open_connection(split.hostname, split.port)
    request = (f"POST {path} HTTP/1.1\r\nHost: {split.netloc}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    try:
        while todo and time.perf_counter() < deadline:
            todo.pop()
            t0 = time.perf_counter()
            writer.write(request)
            ok = await read_response(reader, t0, load)
            load.latencies.append(time.perf_counter() - t0)
            load.errors += not ok
    finally:
        writer.close()


async def generate(url: str, path: str, body: bytes, n: int, concurrency: int, max_seconds: float) -> Load:
    load, todo = Load(), list(range(n))
    t0 = time.perf_counter()
    await asyncio.gather(*(client(url, path, body, todo, load, t0 + max_seconds) for _ in range(concurrency)))
    load.wall = time.perf_counter() - t0
    return load


def run_load(url: str, path: str, payload: dict, n: int, concurrency: int, max_seconds: float = 120.0) -> Load:
    return asyncio.run(generate(url, path, json.dumps(payload).encode(), n, concurrency, max_seconds))


# ---- one case ---------------------------------------------------------------------------------

def percentile(values: list, q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def upstream_connects(upstream: str | None) -> int | None:
    """TCP connections the fake upstream has accepted so far (fastfake's GET /stats)."""
    if not upstream:
        return None
    with urllib.request.urlopen(upstream.rsplit("/v1", 1)[0] + "/stats", timeout=10) as r:
        return json.loads(r.read())["connections"]


def measure(proc: Proc | None, url: str, label: str, payload: dict, n: int, concurrency: int,
            upstream: str | None = None) -> dict:
    """Warm up, then n requests at this concurrency; figures net of the 50 ms floor."""
    run_load(url, "/v1/chat/completions", payload, max(concurrency, 8), concurrency)
    cpu0, conn0 = proc.cpu() if proc else None, upstream_connects(upstream)
    load = run_load(url, "/v1/chat/completions", payload, n, concurrency)
    cpu1, conn1 = proc.cpu() if proc else None, upstream_connects(upstream)
    done = len(load.latencies)
    ms = lambda s: (s - FLOOR) * 1000   # noqa: E731
    return {
        "case": label, "c": concurrency, "n": done, "errors": load.errors,
        "p50": ms(percentile(load.latencies, 0.5)), "p99": ms(percentile(load.latencies, 0.99)),
        "rps": done / load.wall if load.wall else 0.0,
        "first": ms(percentile(load.first_blocks, 0.5)) if load.first_blocks else None,
        "cpu": (cpu1 - cpu0) * 1000 / done if cpu0 is not None and cpu1 is not None and done else None,
        "hwm": proc.memory().get("VmHWM") if proc else None,
        "connects": conn1 - conn0 if conn0 is not None else None,
    }


def body(model: str, stream: bool) -> dict:
    return {"model": model, "messages": PROMPT, "stream": stream}


def fmt(value, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def print_table(rows: list) -> None:
    print("| case | conc. | requests | errors | p50 added ms | p99 added ms | req/s | first seat block ms "
          "(p50, added) | service CPU ms/req | service peak RSS MB | new upstream connections |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['c']} | {r['n']} | {r['errors']} | {r['p50']:.1f} | {r['p99']:.1f} | "
              f"{r['rps']:.0f} | {fmt(r['first'])} | {fmt(r['cpu'], '.2f')} | {fmt(r['hwm'])} | "
              f"{fmt(r['connects'], 'd')} |")
    print(flush=True)


# ---- the run ----------------------------------------------------------------------------------

def startup(base: Path, upstream: str, times: int) -> dict:
    """Seconds from spawning serve.py to the first 200 from /healthz, each in a fresh data folder."""
    seconds, rss = [], []
    for i in range(times):
        home = base / f"start{i}"
        configure(home, upstream)
        proc = start_service(home)
        try:
            wait_healthy(proc.url)
            seconds.append(time.perf_counter() - proc.started)
            rss.append(proc.memory().get("VmRSS"))
        finally:
            proc.stop()
    return {"median": statistics.median(seconds), "all": seconds, "rss": rss[-1]}


def matrix(proc: Proc, n: int, concurrencies: list, upstream: str) -> list:
    rows = []
    for label, model in (("five-seat panel", "bench/five"), ("one-model ask", "m1")):
        for stream in (False, True):
            for c in concurrencies:
                case = f"{label}, {'streamed' if stream else 'whole'}"
                rows.append(measure(proc, proc.url, case, body(model, stream), n, c, upstream))
                print(f"  {case} c={c}: p50 +{rows[-1]['p50']:.1f} ms, {rows[-1]['rps']:.0f}/s",
                      file=sys.stderr, flush=True)
    return rows


def long_run(proc: Proc, total: int, step: int, concurrency: int = 16) -> dict:
    """Five-seat panels, whole, in steps; VmRSS after each step."""
    samples, t0, done, errors = [], time.perf_counter(), 0, 0
    while done < total:
        load = run_load(proc.url, "/v1/chat/completions", body("bench/five", False), step, concurrency, 600)
        done += len(load.latencies)
        errors += load.errors
        samples.append((done, proc.memory().get("VmRSS")))
    wall = time.perf_counter() - t0
    return {"asks": done, "errors": errors, "rps": done / wall, "samples": samples,
            "hwm": proc.memory().get("VmHWM")}


def report_aims(rows: list, naive: list, start: dict, long: dict) -> None:
    def pick(table, case, c):
        return next((r for r in table if r["case"] == case and r["c"] == c), None)
    panel, base, one = pick(rows, "five-seat panel, whole", 16), pick(naive, "naive fan-out, whole", 16), \
        pick(rows, "one-model ask, whole", 16)
    peak = max((r["hwm"] or 0) for r in rows) or None
    rss = [m for _, m in long["samples"] if m is not None]
    growth = rss[-1] - rss[0] if len(rss) > 1 else None
    lines = [
        ("five-seat panel within 1.25x of the naive fan-out's added latency (c=16, whole)",
         f"p50 {panel['p50']:.1f} vs {base['p50']:.1f} ms ({panel['p50'] / base['p50']:.2f}x), "
         f"p99 {panel['p99']:.1f} vs {base['p99']:.1f} ms ({panel['p99'] / base['p99']:.2f}x)",
         panel["p50"] <= 1.25 * base["p50"] and panel["p99"] <= 1.25 * base["p99"]),
        ("one-model ask under 10 ms added p50 (c=16, whole)", f"{one['p50']:.1f} ms", one["p50"] < 10),
        ("start under 0.5 s", f"{start['median']:.2f} s", start["median"] < 0.5),
        ("RSS under 60 MB under load", f"peak {fmt(peak)} MB", peak is not None and peak < 60),
        ("RSS flat over the long run", f"{fmt(growth, '+.1f')} MB from the first sample to the last",
         growth is not None and growth < 5),
    ]
    print("| aim | measured | met |\n|---|---|---|")
    for aim, measured, met in lines:
        print(f"| {aim} | {measured} | {'yes' if met else 'NO'} |")
    print(flush=True)


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few requests per case, a short long run")
    ap.add_argument("--requests", type=int, default=None, help="requests per case (default 300; --quick 40)")
    ap.add_argument("--workers", type=int, default=None,
                    help="set the panel_workers setting for the measured service (default: the setting's default)")
    ap.add_argument("--long", type=int, default=None, help="asks in the long run (default 10000; --quick 400)")
    args = ap.parse_args(argv)
    n = args.requests or (40 if args.quick else 300)
    total = args.long or (400 if args.quick else 10000)
    concurrencies = [1, 16, 64]
    print(f"# benchmarks/panel.py{' --quick' if args.quick else ''}: {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}; {n} requests per case, "
          f"upstream delay {FLOOR * 1000:.0f} ms; panel_workers "
          f"{args.workers or 'default'}\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-panel-") as tmp:
        base = Path(tmp)
        fake = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", str(FLOOR)])
        procs = [fake]
        try:
            floor = [measure(None, fake.url.rsplit("/v1", 1)[0], "upstream alone (the floor itself)",
                             body("m1", False), n, c) for c in concurrencies]
            start = startup(base, fake.url, 1 if args.quick else 5)
            naive = Proc([sys.executable, str(HERE / "naive_fanout.py"), fake.url])
            procs.append(naive)
            naive_rows = [measure(naive, naive.url, "naive fan-out, whole", body("bench/five", False), n, c, fake.url)
                          for c in concurrencies]
            naive.stop()
            home = base / "service"
            configure(home, fake.url, {"panel_workers": args.workers} if args.workers else None)
            service = start_service(home)
            procs.append(service)
            wait_healthy(service.url)
            rows = matrix(service, n, concurrencies, fake.url)
            long = long_run(service, total, max(total // 10, 1))
        finally:
            for proc in reversed(procs):
                proc.stop()
    print("## Latency, throughput, CPU and memory\n")
    print_table(floor + naive_rows + rows)
    print(f"## Start-up\n\nserve.py spawn to first /healthz 200: median {start['median']:.3f} s over "
          f"{len(start['all'])} start(s) ({', '.join(f'{s:.3f}' for s in start['all'])}); "
          f"RSS when ready {fmt(start['rss'])} MB\n")
    print(f"## Long run\n\n{long['asks']} five-seat panel asks (whole, c=16), {long['errors']} errors, "
          f"{long['rps']:.0f} panels/s; service VmRSS MB after each step: "
          + ", ".join(f"{fmt(m)}" for _, m in long["samples"]) + f"; peak {fmt(long['hwm'])} MB\n")
    print("## Aims\n")
    report_aims(rows, naive_rows, start, long)
    return 0


if __name__ == "__main__":
    sys.exit(main())
