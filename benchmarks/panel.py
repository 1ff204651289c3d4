"""The gateway's own cost: latency over a 50 ms upstream, throughput, CPU and memory, against a naive fan-out.

    python benchmarks/panel.py                      # the full run (a few minutes on a 2-core machine)
    python benchmarks/panel.py --quick              # a smoke run (well under a minute), for CI
    python benchmarks/panel.py --aims --repeat 3    # only the cases the aims compare, medians of 3 runs
    python benchmarks/panel.py --before ../other    # the service of another checkout too, alternating with this one
    python benchmarks/panel.py --profile out.pstats # the service under cProfile (CPU time, every thread)
    python benchmarks/panel.py --hold 40000         # RSS with 64 asks at once held for 40,000 panels (each checkout)
    python benchmarks/panel.py --aims --keyed       # the endpoint's key in llm's keys.json, as users keep theirs
    python benchmarks/panel.py --aims --prompt-kb 60  # a 60 KB user message instead of a one-line one
    python benchmarks/panel.py --aims --stream-seats local  # seats asked streamed, as on a local server

Three processes besides this one, all on 127.0.0.1: benchmarks/fastfake.py (an OpenAI-compatible upstream whose
every answer takes 50 ms), the service (`serve.py --port 0 --no-browser`, its own temp data folder, five models
m1..m5 and a collection `five` of them), and benchmarks/naive_fanout.py (the baseline). This process is the load
generator: asyncio, one keep-alive connection per concurrent client, a fixed number of requests per case.
Figures: p50/p99 latency minus the 50 ms floor, requests/s, time to the first seat's block when streaming,
service CPU ms per request and peak RSS (Linux /proc; "n/a" elsewhere), start-up time, RSS over a long run.
Each figure is the median over --repeat runs; the 1-minute load average is printed beside each run.
Prints Markdown tables; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import (FLOOR, HERE, ROOT, Proc, configure, fake_root, fmt, load_average, measure, median_rows,
                     run_load, start_service, wait_healthy)

SEATS = [f"m{i}" for i in range(1, 6)]
PROMPT = [{"role": "user", "content": "Say something short."}]


def long_prompt(kb: int) -> list:
    """A user message of `kb` KB (a document to review, say): what the record stores grows with it."""
    text = "Review this carefully, line by line. " * (kb * 1024 // 37 + 1)
    return [{"role": "user", "content": text[:kb * 1024]}]
FIGURES = ("p50", "p99", "rps", "first", "cpu", "switches", "hwm", "connects", "n", "errors")


def body(model: str, stream: bool) -> dict:
    return {"model": model, "messages": PROMPT, "stream": stream}


STREAM_SEATS = "none"   # the fake stands for a remote provider; --stream-seats local measures a local server's seats


def setup(home: Path, upstream: str, workers: int | None = None, keyed: bool = False) -> None:
    """Five models on the fake upstream and a collection of all five (no explore seats: exactly five)."""
    settings = {"stream_seats": STREAM_SEATS, **({"panel_workers": workers} if workers else {})}
    configure(home, {"fake": {"base_url": upstream, "api": "openai"}}, {m: "fake" for m in SEATS},
              {"five": {"members": SEATS, "explore": 0}}, settings, keyed)


def cases(aims_only: bool) -> list:
    """(label, model, stream, concurrency) of each case, in the order they run."""
    if aims_only:
        return [("five-seat panel, whole", "bench/five", False, 16), ("five-seat panel, whole", "bench/five", False, 64),
                ("five-seat panel, streamed", "bench/five", True, 1), ("one-model ask, streamed", "m1", True, 1)]
    out = []
    for label, model in (("five-seat panel", "bench/five"), ("one-model ask", "m1")):
        for stream in (False, True):
            out += [(f"{label}, {'streamed' if stream else 'whole'}", model, stream, c) for c in (1, 16, 64)]
    return out


# ---- the runs ---------------------------------------------------------------------------------

def startup(base: Path, upstream: str, times: int, root: Path, bytecode: Path, cold: bool = False) -> dict:
    """Seconds from spawning serve.py to the first 200 from /healthz, each in a fresh data folder. `bytecode`: a
    folder for compiled modules, filled by one start first (not counted); `cold`: an empty one, nothing written
    to it, so every start compiles from source (a checkout run with PYTHONDONTWRITEBYTECODE)."""
    seconds, rss = [], []
    for i in range(times + (not cold)):
        home = base / f"start-{root.name}-{cold}-{i}"
        setup(home, upstream)
        proc = start_service(home, root, bytecode=bytecode, cold=cold)
        try:
            wait_healthy(proc.url)
            if cold or i:
                seconds.append(time.perf_counter() - proc.started)
                rss.append(proc.memory().get("VmRSS"))
        finally:
            proc.stop()
    return {"median": statistics.median(seconds), "all": seconds, "rss": rss[-1], "load": load_average()}


def matrix(proc: Proc, n: int, todo: list, upstream: str, who: str) -> list:
    rows = []
    for label, model, stream, c in todo:
        rows.append(dict(measure(proc, proc.url, label, body(model, stream), n, c, upstream), who=who,
                         load=load_average()))
        print(f"  {who}: {label} c={c}: p50 +{rows[-1]['p50']:.1f} ms, {rows[-1]['rps']:.0f}/s, "
              f"{fmt(rows[-1]['cpu'], '.2f')} ms CPU (load {rows[-1]['load']})", file=sys.stderr, flush=True)
    return rows


def long_run(proc: Proc, total: int, step: int, concurrency: int = 16) -> dict:
    """Five-seat panels, whole, in steps; VmRSS after each step."""
    samples, t0, done, errors = [], time.perf_counter(), 0, 0
    while done < total:
        load = run_load(proc.url, body("bench/five", False), step, concurrency, 600)
        done += len(load.latencies)
        errors += load.errors
        samples.append((done, proc.memory().get("VmRSS")))
    wall = time.perf_counter() - t0
    return {"asks": done, "errors": errors, "rps": done / wall, "samples": samples,
            "hwm": proc.memory().get("VmHWM"), "load": load_average()}


def service_run(home: Path, who: str, root: Path, upstream: str, args, todo: list, long_total: int) -> tuple:
    """One service process from `root`: the cases, then (when asked) the long run in the same process."""
    setup(home, upstream, args.workers, args.keyed)
    proc = start_service(home, root)
    try:
        wait_healthy(proc.url)
        rows = matrix(proc, args.n, todo, upstream, who)
        long = long_run(proc, long_total, max(long_total // 10, 1)) if long_total else None
    finally:
        proc.stop()
    return rows, long


def naive_run(upstream: str, args) -> list:
    """The naive fan-out's rows: a fresh one each run."""
    naive = Proc([sys.executable, str(HERE / "naive_fanout.py"), upstream])
    try:
        return [dict(measure(naive, naive.url, "naive fan-out, whole", body("bench/five", False), args.n, c, upstream),
                     who="naive", load=load_average()) for c in ((16, 64) if args.aims else (1, 16, 64))]
    finally:
        naive.stop()


def hold_run(base: Path, services: list, upstream: str, args) -> None:
    """Memory under sustained load: --hold five-seat panels (whole) at 64 at once, VmRSS and threads after each
    tenth, a fresh service of each checkout in turn."""
    for who, root in services:
        home = base / f"hold-{who}"
        setup(home, upstream, args.workers, args.keyed)
        proc = start_service(home, root)
        try:
            wait_healthy(proc.url)
            run = long_run(proc, args.hold, max(args.hold // 10, 1), concurrency=64)
            threads = proc.memory().get("Threads")
        finally:
            proc.stop()
        print(f"Held ({who}): {run['asks']} five-seat panel asks at 64 at once, {run['errors']} errors, "
              f"{run['rps']:.0f} panels/s; VmRSS MB after each tenth: "
              + ", ".join(fmt(m) for _, m in run["samples"]) + f"; peak {fmt(run['hwm'])} MB; {threads} threads; "
              f"load at the end {run['load']}\n", flush=True)


def profile_run(base: Path, root: Path, upstream: str, args) -> None:
    """The five-seat panel, whole, at --concurrency asks, with the service under cProfile; the top entries."""
    home = base / "profiled"
    setup(home, upstream, args.workers, args.keyed)
    out = Path(args.profile).resolve()
    proc = start_service(home, root, profile=out)
    try:
        wait_healthy(proc.url)
        row = measure(proc, proc.url, "five-seat panel, whole (profiled)", body("bench/five", False), args.n,
                      args.concurrency, upstream)
    finally:
        proc.stop()
    print(f"## Profile of the service: five-seat panel, whole, c={args.concurrency}, {row['n']} asks, "
          f"load {load_average()}\n")
    print(f"(under the profiler: {row['cpu']:.2f} ms CPU per panel)\n\n```")
    stats = pstats.Stats(str(out))
    stats.sort_stats("tottime").print_stats(args.top)
    print("```")


# ---- the report -------------------------------------------------------------------------------


def print_table(rows: list) -> None:
    print("| service | case | conc. | requests | errors | p50 added ms | p99 added ms | req/s | first seat block ms "
          "(p50, added) | CPU ms/req | thread switches/req | peak RSS MB | new upstream connections | load (1 min) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['who']} | {r['case']} | {r['c']} | {r['n']:.0f} | {r['errors']:.0f} | {r['p50']:.1f} | "
              f"{r['p99']:.1f} | {r['rps']:.0f} | {fmt(r['first'])} | {fmt(r['cpu'], '.2f')} | "
              f"{fmt(r['switches'], '.0f')} | {fmt(r['hwm'])} | {fmt(r['connects'], '.0f')} | {r['loads']} |")
    print(flush=True)


def report_aims(rows: list, who: str, start: dict | None, long: dict | None) -> None:
    def pick(name, case, c):
        return next((r for r in rows if r["who"] == name and r["case"] == case and r["c"] == c), None)
    panel16, base16 = pick(who, "five-seat panel, whole", 16), pick("naive", "naive fan-out, whole", 16)
    panel64, base64 = pick(who, "five-seat panel, whole", 64), pick("naive", "naive fan-out, whole", 64)
    streamed, one = pick(who, "five-seat panel, streamed", 1), pick(who, "one-model ask, streamed", 1)
    lines = [
        ("added p50 at most 1.25x the naive fan-out's (c=16, whole)",
         f"{panel16['p50']:.1f} vs {base16['p50']:.1f} ms ({panel16['p50'] / base16['p50']:.2f}x)",
         panel16["p50"] <= 1.25 * base16["p50"]),
        ("added p99 at most the naive fan-out's (c=16, whole)",
         f"{panel16['p99']:.1f} vs {base16['p99']:.1f} ms ({panel16['p99'] / base16['p99']:.2f}x)",
         panel16["p99"] <= base16["p99"]),
        ("panels/s at least the naive fan-out's (c=64, whole)",
         f"{panel64['rps']:.0f} vs {base64['rps']:.0f}/s", panel64["rps"] >= base64["rps"]),
        ("CPU per panel at most 1.25x the naive fan-out's (c=16, whole)",
         f"{fmt(panel16['cpu'], '.2f')} vs {fmt(base16['cpu'], '.2f')} ms "
         f"({panel16['cpu'] / base16['cpu']:.2f}x)" if panel16["cpu"] and base16["cpu"] else "n/a",
         bool(panel16["cpu"] and base16["cpu"] and panel16["cpu"] <= 1.25 * base16["cpu"])),
        ("streamed panel's first seat block within 2 ms of the one-model ask's first block (c=1)",
         f"{fmt(streamed['first'])} vs {fmt(one['first'])} ms",
         streamed["first"] is not None and one["first"] is not None and streamed["first"] <= one["first"] + 2),
        ("peak RSS under 60 MB at 64 concurrent panels", f"{fmt(panel64['hwm'])} MB",
         panel64["hwm"] is not None and panel64["hwm"] < 60),
    ]
    if start:
        lines.append(("start under 0.3 s (modules compiled once)", f"{start['median']:.3f} s", start["median"] < 0.3))
    if long:
        rss = [m for _, m in long["samples"] if m is not None]
        growth = rss[-1] - rss[0] if len(rss) > 1 else None
        lines.append((f"RSS flat over {long['asks']} panels", f"{fmt(growth, '+.1f')} MB from the first sample "
                      "to the last", growth is not None and growth < 2))
    print(f"### Aims: {who}\n\n| aim | measured | met |\n|---|---|---|")
    for aim, measured, met in lines:
        print(f"| {aim} | {measured} | {'yes' if met else 'NO'} |")
    print(flush=True)


def print_extras(who: str, start: dict | None, long: dict | None) -> None:
    for kind, run in (("modules compiled once", start), ("compiled from source each start",
                                                          (start or {}).get("cold"))):
        if run:
            print(f"Start-up ({who}, {kind}): serve.py spawn to first /healthz 200: median {run['median']:.3f} s "
                  f"over {len(run['all'])} start(s) ({', '.join(f'{s:.3f}' for s in run['all'])}); RSS when ready "
                  f"{fmt(run['rss'])} MB; load {run['load']}\n")
    if long:
        print(f"Long run ({who}): {long['asks']} five-seat panel asks (whole, c=16), {long['errors']} errors, "
              f"{long['rps']:.0f} panels/s; VmRSS MB after each step: "
              + ", ".join(f"{fmt(m)}" for _, m in long["samples"]) + f"; peak {fmt(long['hwm'])} MB; load at the "
              f"end {long['load']}\n")


# ---- main -------------------------------------------------------------------------------------

def options(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few requests per case, a short long run")
    ap.add_argument("--aims", action="store_true", help="only the cases the aims compare; no start-up or long run")
    ap.add_argument("--requests", type=int, default=None, help="requests per case (default 300; --quick 40)")
    ap.add_argument("--repeat", type=int, default=1, help="run the cases this many times; figures are medians")
    ap.add_argument("--workers", type=int, default=None,
                    help="set the panel_workers setting for the measured service (default: the setting's default)")
    ap.add_argument("--long", type=int, default=None, help="asks in the long run (default 10000; --quick 400)")
    ap.add_argument("--before", type=Path, default=None,
                    help="another checkout whose service is measured too, alternating with this one's")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose service is measured (default: this)")
    ap.add_argument("--profile", default=None, help="write the profiled service's stats here; print the top entries")
    ap.add_argument("--top", type=int, default=30, help="entries of the profile to print (default 30)")
    ap.add_argument("--concurrency", type=int, default=16, help="concurrent asks of the profiled run (default 16)")
    ap.add_argument("--prompt-kb", type=int, default=0,
                    help="ask with a user message of this many KB instead of a one-line one (also to the fan-out)")
    ap.add_argument("--keyed", action="store_true",
                    help="the endpoint has a key in llm's keys.json, as a user's real endpoints do (default: no key)")
    ap.add_argument("--stream-seats", choices=("none", "local"), default="none",
                    help="none (the default): seats asked whole, as on a remote provider; local: streamed, as seats "
                         "on a local server are (the fake listens on loopback)")
    ap.add_argument("--hold", type=int, default=None,
                    help="only this: N panels at 64 at once, RSS after each tenth (with --before, both checkouts)")
    args = ap.parse_args(argv)
    args.n = args.requests or (40 if args.quick else 1000 if args.profile else 300)
    args.long_total = 0 if args.aims else args.long or (400 if args.quick else 10000)
    return args


def main(argv: list | None = None) -> int:
    global PROMPT, STREAM_SEATS
    args = options(argv)
    STREAM_SEATS = args.stream_seats
    if args.prompt_kb > 0:
        PROMPT = long_prompt(args.prompt_kb)
    services = [("before", args.before.resolve()), ("after", args.root.resolve())] if args.before else \
        [("service", args.root.resolve())]
    todo = cases(args.aims)
    print(f"# benchmarks/panel.py {' '.join(sys.argv[1:])}: {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"{platform.system()} {platform.release()}; {args.n} requests per case, upstream delay {FLOOR * 1000:.0f} ms; "
          f"load {load_average()}\n", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-panel-") as tmp:
        base = Path(tmp)
        fake = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", str(FLOOR)])
        try:
            if args.profile or args.hold:   # a mode of its own: nothing else is run
                profile_run(base, services[-1][1], fake.url, args) if args.profile else \
                    hold_run(base, services, fake.url, args)
                return 0
            runs, starts, longs = [], {}, {}
            for r in range(args.repeat):
                runs.append(naive_run(fake.url, args))
                order = services if r % 2 == 0 else services[::-1]   # alternate who goes first
                for who, root in order:
                    rows, long = service_run(base / f"{who}{r}", who, root, fake.url, args, todo,
                                             args.long_total if r == args.repeat - 1 else 0)
                    runs.append(rows)
                    longs[who] = long or longs.get(who)
            if not args.aims:
                for who, root in services:
                    starts[who] = startup(base, fake.url, 1 if args.quick else 5, root, base / f"pyc-{who}")
                    starts[who]["cold"] = startup(base, fake.url, 1 if args.quick else 5, root,
                                                  base / f"nopyc-{who}", cold=True)
                floor = [dict(measure(None, fake_root(fake.url), "upstream alone (the floor itself)",
                                      body("m1", False), args.n, c), who="fastfake", load=load_average())
                         for c in (1, 16, 64)]
                runs.append(floor)
        finally:
            fake.stop()
    rows = median_rows(runs, FIGURES)
    print(f"## Latency, throughput, CPU and memory (medians of {args.repeat} run(s))\n")
    print_table(rows)
    for who, _ in services:
        print_extras(who, starts.get(who), longs.get(who))
        report_aims(rows, who, starts.get(who), longs.get(who))
    return 0


if __name__ == "__main__":
    sys.exit(main())
