"""The referee's cost in a running service (benchmarks/points.py --cost): calls and tokens per panel in the usage
ledger, and the time it adds after the last seat, over benchmarks/fastfake.py's 50 ms upstream.

Five seats (m1..m5) on fastfake answer every ask; the collection `plain` shows no points, `pointed` shows its
contested ones with the referee `referee-judge` (fastfake answers its prompt with one contested point, after the
same 50 ms). Asks go one at a time, whole and streamed, alternating between the collections. Figures: the median
wall time of a whole ask of each; of a streamed ask, the median time from the last seat's block to the end of the
stream; and from the ledger (GET /bench/usage?by=kind), the referee's lines and tokens per panel beside the seats'.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from harness import FLOOR, HERE, Proc, configure, start_service, wait_healthy

SEATS = [f"m{i}" for i in range(1, 6)]
REFEREE = "referee-judge"
PROMPT = [{"role": "user", "content": "Is this fine?"}]


def post(url: str, body: dict):
    req = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=60)


def whole(url: str, collection: str) -> tuple[float, dict]:
    started = time.perf_counter()
    with post(url, {"model": f"bench/{collection}", "messages": PROMPT}) as resp:
        data = json.loads(resp.read())
    return time.perf_counter() - started, data["bench"]


def streamed(url: str, collection: str) -> float:
    """Seconds from the last seat's block to the stream's end."""
    seen, last_seat = 0, None
    with post(url, {"model": f"bench/{collection}", "messages": PROMPT, "stream": True}) as resp:
        for line in resp:
            if not line.startswith(b"data: {"):
                continue
            chunk = json.loads(line[6:])
            text = ((chunk.get("choices") or [{}])[0].get("delta") or {}).get("content") or ""
            seen += text.count("## Seat ")
            if seen >= len(SEATS) and last_seat is None:
                last_seat = time.perf_counter()
    return time.perf_counter() - (last_seat or time.perf_counter())


def ledger(url: str) -> dict:
    with urllib.request.urlopen(url + "/bench/usage?by=kind", timeout=30) as resp:
        return {row["name"]: row for row in json.loads(resp.read())["rows"]}


def ms(values: list) -> str:
    return f"{statistics.median(values) * 1000:.1f}"


def run(n: int) -> None:
    """Print the referee's cost over `n` asks of each collection, each way."""
    with tempfile.TemporaryDirectory(prefix="bench-referee-") as tmp:
        home = Path(tmp) / "home"
        fake = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", str(FLOOR)])
        service = None
        try:
            configure(home, {"fake": {"base_url": fake.url, "api": "openai"}},
                      {m: "fake" for m in SEATS + [REFEREE]},
                      {"plain": {"members": SEATS, "explore": 0, "points": "off"},
                       "pointed": {"members": SEATS, "explore": 0, "points": "contested", "referee": REFEREE}})
            service = start_service(home)
            wait_healthy(service.url)
            times = {"plain": [], "pointed": []}
            tails = {"plain": [], "pointed": []}
            shown = []
            for _ in range(n):
                for collection in ("plain", "pointed"):
                    seconds, bench = whole(service.url, collection)
                    times[collection].append(seconds)
                    if collection == "pointed":
                        shown.append(len(bench.get("points") or []))
                    tails[collection].append(streamed(service.url, collection))
            rows = ledger(service.url)
        finally:
            if service is not None:
                service.stop()
            fake.stop()
    panels = 2 * n                       # per collection: n whole and n streamed asks
    seats, judge = rows.get("member", {}), rows.get("referee", {})
    print(f"## The referee's cost ({n} whole and {n} streamed asks of each collection, five seats, upstream "
          f"{FLOOR * 1000:.0f} ms)\n")
    print("| figure | points off | points contested |")
    print("|---|---|---|")
    print(f"| whole ask, median ms | {ms(times['plain'])} | {ms(times['pointed'])} |")
    print(f"| streamed: last seat's block to the end, median ms | {ms(tails['plain'])} | {ms(tails['pointed'])} |")
    print(f"| seat calls per panel (ledger) | {seats.get('calls', 0) / (2 * panels):.2f} | "
          f"{seats.get('calls', 0) / (2 * panels):.2f} |")
    print(f"| referee calls per panel (ledger) | 0 | {judge.get('calls', 0) / panels:.2f} |")
    print(f"| referee input / output tokens per panel | 0 / 0 | {judge.get('input_tokens', 0) / panels:.0f} / "
          f"{judge.get('output_tokens', 0) / panels:.0f} |")
    print(f"| seat input / output tokens per panel | {seats.get('input_tokens', 0) / (2 * panels):.0f} / "
          f"{seats.get('output_tokens', 0) / (2 * panels):.0f} | (the same) |")
    print(f"| points shown per whole reply | 0 | {statistics.mean(shown):.2f} |\n")
