"""What a seat and a request cost: the service's panels of 1, 3 and 5 seats with points off, the default five-seat
panel with its referee (a sixth call), and the recording fan-out asking 1, 3 and 5 seats; CPU a panel, panels/s and
the cores the process kept busy (panels/s times CPU a panel), at 16 and 64 asks at once.

    python benchmarks/seatcost.py                  # 3 rounds, cases alternating; medians (~8 min on 2 cores)
    python benchmarks/seatcost.py --quick          # a smoke run: one round of few asks
    python benchmarks/seatcost.py --concurrency 16 --rounds 5    # one concurrency, more rounds
    python benchmarks/seatcost.py --root DIR       # another checkout's service (the fan-out records through this one's store)

A seat's share is the slope of CPU against seats (least squares over 1, 3 and 5), a request's own share what is left
at none; the referee's is the default panel less the five-seat one, also in seats' worth. Where both processes keep
about one core busy (a Python process's work holds its GIL), panels/s is the inverse of CPU a panel, so a ratio of
panels/s is the inverse ratio of CPU. The last line works out, from the fits, the cheapest a panel with its referee
could be if the referee cost one seat and nothing else, against the five-seat fan-out.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from harness import HERE, ROOT, Proc, configure, fmt, load_average, measure, start_service, wait_healthy
from panel import PROMPT, REFEREE

MEMBERS = [f"m{i}" for i in range(1, 6)]
SIZES = (1, 3, 5)


def seats(k: int) -> str:
    return f"{k} seat" if k == 1 else f"{k} seats"


def collections() -> dict:
    """p1, p3, p5 with points off; `five` the five made the default way (contested points, a referee outside)."""
    out = {f"p{k}": {"members": MEMBERS[:k], "explore": 0, "points": "off"} for k in SIZES}
    out["five"] = {"members": MEMBERS[:5], "explore": 0, "points": "contested"}
    return out


def one(proc: Proc, label: str, model: str, n: int, c: int) -> tuple:
    """n whole asks at c at once, after a warm-up (harness.measure): (CPU ms a panel, panels/s, errors)."""
    row = measure(proc, proc.url, label, {"model": model, "messages": PROMPT, "stream": False}, n, c)
    return row["cpu"], row["rps"], row["errors"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one round of 100 asks a case")
    ap.add_argument("--rounds", type=count, default=None, help="rounds of every case (default 3; --quick 1)")
    ap.add_argument("--requests", type=count, default=None, help="asks a case and round (default 1000; --quick 100)")
    ap.add_argument("--concurrency", type=levels, default=(16, 64),
                    help="asks at once, comma-separated (default 16,64)")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose service is measured")
    args = ap.parse_args(argv)
    rounds, n = args.rounds or (1 if args.quick else 3), args.requests or (100 if args.quick else 1000)
    print(f"# benchmarks/seatcost.py {' '.join(sys.argv[1:] if argv is None else argv)}: {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; {rounds} round(s) of {n} asks a case; load {load_average()}\n",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-seatcost-") as tmp:
        runs, labels = measure_all(Path(tmp), Path(args.root).resolve(), rounds, n, args.concurrency)
    report(runs, labels, args.concurrency)


def measure_all(base: Path, root: Path, rounds: int, n: int, concurrency: tuple) -> tuple:
    """Every case `rounds` times at each concurrency, alternating: ({(label, c): [(cpu, rps, errors)]}, labels)."""
    upstream = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", "0.05"])
    home = base / "home"
    configure(home, {"fake": {"base_url": upstream.url, "api": "openai"}},
              {m: "fake" for m in MEMBERS + [REFEREE]}, collections())
    service = start_service(home, root)
    fanouts = {k: Proc([sys.executable, str(HERE / "naive_fanout.py"), upstream.url, "--record",
                        str(base / f"fanout-{k}.db"), "--seats", str(k)]) for k in SIZES}
    cases = [(f"service, {seats(k)}, points off", service, f"bench/p{k}") for k in SIZES] + \
        [("service, 5 seats and the referee", service, "bench/five")] + \
        [(f"recording fan-out, {seats(k)}", fanouts[k], "bench/five") for k in SIZES]
    runs: dict = {}
    try:
        wait_healthy(service.url)
        for _ in range(rounds):
            for c in concurrency:
                for label, proc, model in cases:
                    runs.setdefault((label, c), []).append(one(proc, label, model, n, c))
                    cpu, rps, _ = runs[(label, c)][-1]
                    print(f"  {label} c={c}: {fmt(cpu, '.2f')} ms CPU, {rps:.0f}/s", file=sys.stderr, flush=True)
    finally:
        service.stop()
        for proc in fanouts.values():
            proc.stop()
        upstream.stop()
    return runs, [label for label, _, _ in cases]


def count(text: str) -> int:
    """A whole number above 0 (--rounds, --requests, each of --concurrency)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return value


def levels(text: str) -> tuple:
    """--concurrency's value: whole numbers above 0, comma-separated."""
    return tuple(count(part) for part in text.split(","))


def report(runs: dict, labels: list, concurrency: tuple) -> None:
    """The table, then for each concurrency what the fits say; CPU is "n/a" where /proc is not (not Linux)."""
    fig = {}
    for key, rows in runs.items():
        cpus = [r[0] for r in rows if r[0] is not None]
        fig[key] = (statistics.median(cpus) if cpus else None, statistics.median(r[1] for r in rows),
                    sum(r[2] for r in rows))
    print("| case | c | CPU ms a panel | panels/s | cores busy | errors |\n|---|---:|---:|---:|---:|---:|")
    for c in concurrency:
        for label in labels:
            cpu, rps, errors = fig[(label, c)]
            busy = cpu * rps / 1000 if cpu is not None else None
            print(f"| {label} | {c} | {fmt(cpu, '.2f')} | {rps:.0f} | {fmt(busy, '.2f')} | {errors} |")
    print()
    for c in concurrency:
        if any(fig[(label, c)][0] is None for label in labels):
            continue
        seat, fixed = fit([fig[(f"service, {seats(k)}, points off", c)][0] for k in SIZES])
        fan_seat, fan_fixed = fit([fig[(f"recording fan-out, {seats(k)}", c)][0] for k in SIZES])
        five = fig[("service, 5 seats, points off", c)]
        judged = fig[("service, 5 seats and the referee", c)]
        fan5 = fig[("recording fan-out, 5 seats", c)]
        referee = judged[0] - five[0]
        least = fixed + 6 * seat   # the referee at one seat's cost and nothing more
        print(f"- c={c}: a seat costs the service {seat:.2f} ms and the fan-out {fan_seat:.2f}; a request's own share "
              f"is {fixed:.2f} and {fan_fixed:.2f}. The referee costs {referee:.2f} ms "
              f"({referee / seat if seat > 0 else float('nan'):.1f} seats' worth). Against the five-seat fan-out: "
              f"points off {five[0] / fan5[0]:.2f}x CPU and {five[1] / fan5[1]:.2f}x panels/s; with the referee "
              f"{judged[0] / fan5[0]:.2f}x CPU and {judged[1] / fan5[1]:.2f}x panels/s; with a referee costing one "
              f"seat, {least / fan5[0]:.2f}x CPU.", flush=True)
    print()


def fit(cpus: list) -> tuple:
    """(ms a seat, ms at no seat): the least-squares line through CPU a panel at each of SIZES."""
    slope, intercept = statistics.linear_regression(SIZES, cpus)
    return slope, intercept


if __name__ == "__main__":
    main()
