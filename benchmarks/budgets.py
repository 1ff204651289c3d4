"""What a budget costs a call: the hold before it is sent (one write transaction of bench.db that reads the month's
spend and holds of the budgets it counts against) and the booking after it (queued with the writer's next batch),
against a call no budget applies to (nothing held; a priced call's spend still booked). Wall time per call, alone
and with 16 threads racing for one budget; asserts nothing.

    python benchmarks/budgets.py [CALLS]        # 2,000 calls a case by default
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchwarmers.roster.limits.budgets import Budgets, Charge  # noqa: E402
from benchwarmers.scheduler.clock import Clock  # noqa: E402
from benchwarmers.store import Config, Database  # noqa: E402
from benchwarmers.store.ids import record_id  # noqa: E402


def bench(folder: Path, budgeted: bool) -> Budgets:
    config = Config(folder)
    limits = {"collections": {"core": {"usd_month": 10 ** 6}}, "bench": {"all": {"usd_month": 10 ** 6}}}
    config.write("limits.json", {"limits": limits if budgeted else {}})
    return Budgets(Database(folder / "bench.db"), config, Clock())


def one_call(budgets: Budgets) -> float:
    """A call's hold and booking as the Dialer makes them; seconds."""
    charge = Charge(record_id(), "a", "openrouter", "core", "my-app")
    started = time.perf_counter()
    if budgets.applying(charge):
        budgets.reserve(charge, 0.004)
    budgets.book(charge, 0.003)
    return time.perf_counter() - started


def run(calls: int, budgeted: bool, threads: int) -> tuple[float, float, float]:
    """(median µs a call, p99 µs, calls/s) over `calls` calls spread over `threads` threads."""
    with tempfile.TemporaryDirectory() as tmp:
        budgets = bench(Path(tmp), budgeted)
        for _ in range(100):
            one_call(budgets)                       # warm
        times: list = []
        lock = threading.Lock()

        def worker(n: int) -> None:
            mine = [one_call(budgets) for _ in range(n)]
            with lock:
                times.extend(mine)
        started = time.perf_counter()
        pool = [threading.Thread(target=worker, args=(calls // threads,)) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        took = time.perf_counter() - started
        budgets.db.sync()
        budgets.db.close()
    times.sort()
    return statistics.median(times) * 1e6, times[int(len(times) * 0.99)] * 1e6, len(times) / took


def main() -> None:
    calls = int(next((a for a in sys.argv[1:] if a.isdigit()), "2000"))
    print("| case | threads | median µs a call | p99 µs | calls/s |\n|---|---|---|---|---|")
    for budgeted in (False, True):
        for threads in (1, 16):
            median, p99, rate = run(calls, budgeted, threads)
            case = "two budgets apply (hold + booking)" if budgeted else "no budget applies (booking only)"
            print(f"| {case} | {threads} | {median:,.0f} | {p99:,.0f} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
