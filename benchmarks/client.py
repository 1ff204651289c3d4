"""Built-in client overhead: calls/second and client CPU ms per call against a zero-delay fake OpenAI upstream.

    python benchmarks/client.py [N]
    python benchmarks/client.py [N] --root ../other     # another checkout's client, for a before/after

The fake runs in a child process, so time.process_time() here counts only the client's work. Compares one
shared Transport (keep-alive reuse) with a fresh Transport per call (a new TCP connection each time), and a
short answer with a long streamed one. Prints figures; asserts nothing.
"""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the client measured: this checkout's, or --root's (the fake upstream is always this checkout's)
CLIENT = Path(sys.argv[sys.argv.index("--root") + 1]).resolve() if "--root" in sys.argv[:-1] else ROOT
sys.path.insert(0, str(CLIENT))

from benchwarmers.canonical import Ask, Message, Text  # noqa: E402
from benchwarmers.providers import Provider, Transport, make_provider  # noqa: E402

SERVE = """
import sys
sys.path.insert(0, {root!r})
from tests.fakes import FakeOpenAI, Reply
fake = FakeOpenAI().start()
fake.script("long", Reply(text=" ".join(f"word{{i}}" for i in range(400))))
print(fake.url, flush=True)
sys.stdin.read()
fake.stop()
"""


def run(url: str, n: int, model: str, fresh: bool, whole: bool = False) -> tuple[float, float, int]:
    ask = Ask(messages=[Message("user", [Text("Say something short.")])])
    shared = Transport()
    wall, cpu = time.perf_counter(), time.process_time()
    opened = 0
    for _ in range(n):
        transport = Transport() if fresh else shared
        provider = make_provider("openai", url, "sk-bench", name="bench", transport=transport)
        provider.complete(ask, model, whole=True) if whole else provider.complete(ask, model)
        if fresh:
            opened += transport.connections_opened
            transport.close()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return n / wall, cpu * 1000 / n, opened if fresh else shared.connections_opened


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 500
    child = subprocess.Popen([sys.executable, "-c", SERVE.format(root=str(ROOT))],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = child.stdout.readline().strip()
        run(url, 20, "warmup", fresh=False)
        print(f"built-in client of {CLIENT}, {n} sequential calls to a zero-delay fake OpenAI upstream "
              f"({sys.version.split()[0]}, load {os.getloadavg()[0]:.2f})")
        print(f"{'case':44} {'calls/s':>9} {'client CPU ms/call':>19} {'TCP connects':>13}")
        cases = [("short answer, keep-alive (shared Transport)", "m", False, n, False),
                 ("short answer, fresh Transport per call", "m", True, n, False),
                 ("400-word streamed answer, keep-alive", "long", False, max(n // 5, 1), False)]
        if "whole" in inspect.signature(Provider.complete).parameters:   # a checkout whose client has it
            cases += [("short answer asked whole, keep-alive", "m", False, n, True),
                      ("400-word answer asked whole, keep-alive", "long", False, max(n // 5, 1), True)]
        for label, model, fresh, count, whole in cases:
            rate, cpu_ms, connects = run(url, count, model, fresh, whole)
            print(f"{label:44} {rate:9.0f} {cpu_ms:19.3f} {connects:13d}")
    finally:
        child.stdin.close()
        child.wait(timeout=10)


if __name__ == "__main__":
    main()
