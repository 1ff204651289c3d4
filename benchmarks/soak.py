"""Soak: the service under steady load with faults mixed in, for an hour; memory, open files and threads must stay
flat, and no ask may fail.

    python benchmarks/soak.py                 # the full run: 60 minutes at 16 concurrent asks
    python benchmarks/soak.py --quick         # a smoke run for CI: 1 minute
    python benchmarks/soak.py --minutes 10 --concurrency 8

Processes, all on 127.0.0.1: benchmarks/fastfake.py (answers in 50 ms; served names fault-* misbehave), the service
(serve.py, its own temporary data folder, seat_timeout 5 s) and this one, whose threads each keep one keep-alive
connection and go round a cycle of asks:

- a panel of two good members and four faulty ones (429, 500, garbage, a stream cut mid-answer), whole;
- the same panel streamed, and :merged;
- route mode (Anthropic Messages) on a collection whose first member answers 429, so every turn fails over;
- one ask in eight, a panel whose second member never answers (on its own endpoint): it times out after 5 s;
- a listing of the latest calls, and the model list.

An error is any answer that is not a 200 with at least one answering seat (a stream: its closing event). Every
sample records the service's resident memory, open files and threads (Linux /proc; "n/a" elsewhere). At the end a
sample of the call ids the replies named is read back: each must be in the record. Prints Markdown; the exit
code is 1 when there were errors or a lost record, else 0 (memory figures are for reading, not judged).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from panel import Proc, ROOT, service_env, wait_healthy   # noqa: E402  (a sibling script, not a package)

GOOD = ["ok1", "ok2", "ok3"]
FAULTS = ["fault-429", "fault-500", "fault-garbage", "fault-drop"]
PROMPT = "Say something short."


def configure(home: Path, upstream: str) -> None:
    models = {m: {"endpoint": "fast", "served": m, "facts": {"tools": True}} for m in GOOD + FAULTS}
    models["fault-hang"] = {"endpoint": "flaky", "served": "fault-hang", "facts": {}}
    files = {
        "endpoints.json": {"endpoints": {name: {"base_url": upstream, "api": "openai", "no_key": True}
                                         for name in ("fast", "flaky")}},
        "models.json": {"models": models},
        "collections.json": {"collections": {
            "mixed": {"members": ["ok1", "ok2", *FAULTS], "explore": 0, "merge_model": "ok3"},
            "route": {"members": ["fault-429", "ok3"], "explore": 0},
            "hangs": {"members": ["ok1", "fault-hang"], "explore": 0}}},
        "settings.json": {"seat_timeout": 5.0, "keepalive_seconds": 2.0},
    }
    (home / "config").mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (home / "config" / name).write_text(json.dumps(data, indent=2), encoding="utf-8")


# ---- the asks --------------------------------------------------------------------------------------

def chat(model: str, stream: bool = False) -> tuple[str, dict]:
    return "/v1/chat/completions", {"model": model, "stream": stream,
                                    "messages": [{"role": "user", "content": PROMPT}]}


def route_turn(n: int) -> tuple[str, dict]:
    return "/v1/messages", {"model": "bench/route:route", "max_tokens": 64, "stream": n % 2 == 0,
                            "messages": [{"role": "user", "content": f"conversation {n % 8}: {PROMPT}"}]}


CYCLE = [lambda n: chat("bench/mixed"), lambda n: chat("bench/mixed", True), lambda n: chat("bench/mixed:merged"),
         route_turn, lambda n: ("GET", "/bench/calls?limit=20"), lambda n: ("GET", "/v1/models")]


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.asks = self.errors = self.hangs = 0
        self.seconds: list[float] = []
        self.calls: list[str] = []
        self.faults: list[str] = []

    def add(self, ok: bool, seconds: float, what: str, calls: list[str]) -> None:
        with self.lock:
            self.asks += 1
            self.seconds.append(seconds)
            if not ok:
                self.errors += 1
                if len(self.faults) < 20:
                    self.faults.append(what)
            if calls and len(self.calls) < 5000:
                self.calls.append(random.choice(calls))


def judge(method: str, path: str, status: int, data: bytes) -> tuple[bool, list[str]]:
    """(as expected, the call ids the reply names)."""
    if status != 200:
        return False, []
    if method == "GET":
        return True, []
    text = data.decode("utf-8", "replace")
    if text.startswith(("data:", "event:")):   # a stream: it must close the API's way, with no error event
        return (("data: [DONE]" in text and 'data: {"error"' not in text)
                or ("event: message_stop" in text and "event: error" not in text)), []
    body = json.loads(text)
    bench = body.get("bench") or {}
    seats = bench.get("seats") or []
    if seats:
        return any(s.get("status") == "ok" for s in seats), [s["call"] for s in seats if s.get("call")]
    return bool(body.get("content") or body.get("choices")), [bench["call"]] if bench.get("call") else []


def client(url: str, deadline: float, tally: Tally, seed: int) -> None:
    split = urlsplit(url)
    conn = http.client.HTTPConnection(split.hostname, split.port, timeout=60)
    n = seed
    while time.monotonic() < deadline:
        n += 1
        if n % 8 == 0:
            path, body = chat("bench/hangs")
        else:
            ask = CYCLE[n % len(CYCLE)](n)
            path, body = (ask[1], None) if ask[0] == "GET" else ask
        method = "GET" if body is None else "POST"
        t0 = time.monotonic()
        try:
            conn.request(method, path, body=json.dumps(body).encode() if body else None,
                         headers={"Content-Type": "application/json", "anthropic-version": "2023-06-01"})
            resp = conn.getresponse()
            data = resp.read()
            ok, calls = judge(method, path, resp.status, data)
            what = f"{method} {path} -> {resp.status}: {data[:160]!r}"
        except (OSError, http.client.HTTPException, ValueError) as e:
            ok, calls, what = False, [], f"{method} {path}: {type(e).__name__}: {e}"
            conn.close()
            conn = http.client.HTTPConnection(split.hostname, split.port, timeout=60)
        tally.add(ok, time.monotonic() - t0, what, calls)
    conn.close()


# ---- sampling --------------------------------------------------------------------------------------

def sample(pid: int) -> dict:
    out = {"rss": None, "fds": None, "threads": None}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name == "VmRSS":
                out["rss"] = int(value.split()[0]) / 1024
            elif name == "Threads":
                out["threads"] = int(value)
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError):
        pass
    return out


def watch(proc: Proc, tally: Tally, deadline: float, every: float, rows: list) -> None:
    start = time.monotonic()
    while True:
        now = time.monotonic()
        rows.append({"t": now - start, "asks": tally.asks, "errors": tally.errors, **sample(proc.pid)})
        if now >= deadline:
            return
        time.sleep(min(every, max(0.0, deadline - now)))


# ---- the run ------------------------------------------------------------------------------------------

def read_back(url: str, calls: list[str], n: int = 200) -> tuple[int, int]:
    """(how many of a sample of acknowledged call ids are in the record, how many were looked for)."""
    split = urlsplit(url)
    conn = http.client.HTTPConnection(split.hostname, split.port, timeout=30)
    picked = random.sample(calls, min(n, len(calls)))
    found = 0
    for call in picked:
        conn.request("GET", f"/bench/calls/{call}")
        resp = conn.getresponse()
        resp.read()
        found += resp.status == 200
    conn.close()
    return found, len(picked)


def fmt(value, spec: str = ".1f") -> str:
    return "n/a" if value is None else format(value, spec)


def window(rows: list, key: str, first: bool, share: float = 0.1) -> float | None:
    """The mean of `key` over the first (or last) tenth of the run, after the first sample's warm-up."""
    values = [r[key] for r in rows[1:] if r[key] is not None]
    if not values:
        return None
    k = max(1, int(len(values) * share))
    return statistics.mean(values[:k] if first else values[-k:])


def report(args, rows: list, tally: Tally, found: tuple[int, int], wall: float) -> None:
    print(f"# benchmarks/soak.py: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}; {args.minutes:g} min at {args.concurrency} concurrent asks\n")
    print("| minute | asks so far | errors | service RSS MB | open files | threads |")
    print("|---:|---:|---:|---:|---:|---:|")
    step = max(1, len(rows) // 13)
    for r in rows[::step] + ([rows[-1]] if (len(rows) - 1) % step else []):
        print(f"| {r['t'] / 60:.1f} | {r['asks']} | {r['errors']} | {fmt(r['rss'])} | {fmt(r['fds'], 'd')} | "
              f"{fmt(r['threads'], 'd')} |")
    rss0, rss1 = window(rows, "rss", True), window(rows, "rss", False)
    fds = [r["fds"] for r in rows[1:] if r["fds"] is not None]
    threads = [r["threads"] for r in rows[1:] if r["threads"] is not None]
    secs = sorted(tally.seconds)
    print(f"\n{tally.asks} asks in {wall / 60:.1f} min ({tally.asks / wall:.1f}/s), {tally.errors} errors; "
          f"p50 {statistics.median(secs):.2f} s, p99 {secs[int(0.99 * (len(secs) - 1))]:.2f} s" if secs else "no asks")
    if rss0 is not None:
        print(f"RSS: mean {rss0:.1f} MB over the first tenth, {rss1:.1f} MB over the last "
              f"({(rss1 - rss0) / rss0 * 100:+.1f}%); peak {max(r['rss'] for r in rows if r['rss']):.1f} MB")
    if fds:
        print(f"Open files: {min(fds)} to {max(fds)} (first {fds[0]}, last {fds[-1]}); "
              f"threads: {min(threads)} to {max(threads)} (first {threads[0]}, last {threads[-1]})")
    print(f"Records read back: {found[0]} of {found[1]} acknowledged call ids sampled were in the record")
    for what in tally.faults:
        print(f"- error: {what}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="how long to run (default 60)")
    ap.add_argument("--quick", action="store_true", help="a one-minute smoke run (CI)")
    ap.add_argument("--concurrency", type=int, default=16, help="asks in flight at once (default 16)")
    ap.add_argument("--every", type=float, default=None, help="seconds between samples (default: 2 quick, 30 full)")
    args = ap.parse_args()
    if args.quick:
        args.minutes = min(args.minutes, 1.0)
    every = args.every or (2.0 if args.quick else 30.0)
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        home = Path(tmp) / "data"
        fake = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", "0.05"])
        configure(home, fake.url)
        service = Proc([sys.executable, str(ROOT / "serve.py"), "--port", "0", "--no-browser"],
                       service_env(home), url_on="stderr")
        try:
            wait_healthy(service.url)
            tally, rows = Tally(), []
            t0 = time.monotonic()
            deadline = t0 + args.minutes * 60
            threads = [threading.Thread(target=client, args=(service.url, deadline, tally, i * 1000), daemon=True)
                       for i in range(args.concurrency)]
            for t in threads:
                t.start()
            watch(service, tally, deadline, every, rows)
            for t in threads:
                t.join(timeout=90)
            wall = time.monotonic() - t0
            found = read_back(service.url, tally.calls)
            rows.append({"t": wall, "asks": tally.asks, "errors": tally.errors, **sample(service.pid)})
        finally:
            service.stop()
            fake.stop()
    report(args, rows, tally, found, wall)
    return 1 if tally.errors or found[0] != found[1] else 0


if __name__ == "__main__":
    sys.exit(main())
