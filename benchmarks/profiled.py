"""serve.py under cProfile in every thread, timed in CPU seconds; the merged stats are written when it stops.

    python benchmarks/profiled.py OUT.pstats [--root CHECKOUT] [serve.py's arguments]

cProfile watches only the thread that enables it, and the service's work runs in its HTTP and seat threads, so
each thread gets its own profiler (with time.thread_time as the clock: tottime is CPU, not time spent waiting on
a socket). benchmarks/panel.py --profile runs the service this way; read the file with pstats.
"""
from __future__ import annotations

import atexit
import cProfile
import pstats
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILERS: list = []
_lock = threading.Lock()


def profiled_run(run):
    def wrapper(self):
        profiler = cProfile.Profile(time.thread_time)
        with _lock:
            PROFILERS.append(profiler)
        profiler.enable()
        try:
            run(self)
        finally:
            profiler.disable()
    return wrapper


def dump(path: str) -> None:
    with _lock:
        profilers = list(PROFILERS)
    for profiler in profilers:
        profiler.disable()
    stats = pstats.Stats(*profilers)
    stats.dump_stats(path)


def main() -> None:
    out, args, root = sys.argv[1], sys.argv[2:], ROOT
    if args[:1] == ["--root"]:
        root, args = Path(args[1]).resolve(), args[2:]
    sys.argv = [str(root / "serve.py"), *args]
    sys.path.insert(0, str(root))
    threading.Thread.run = profiled_run(threading.Thread.run)
    main_profiler = cProfile.Profile(time.thread_time)
    PROFILERS.append(main_profiler)
    atexit.register(dump, out)
    from benchwarmers.cli.main import run
    main_profiler.enable()
    run(["serve", *sys.argv[1:]])


if __name__ == "__main__":
    main()
