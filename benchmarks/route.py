"""Route mode's own cost on a Claude Code-sized turn, for a member in each protocol: added latency, CPU per turn.

    python benchmarks/route.py                     # about a minute on 2 cores
    python benchmarks/route.py --before ../other   # another checkout's service too, alternating with this one's
    python benchmarks/route.py --repeat 3          # figures are medians of 3 runs

The turn: Claude Code's first request as captured in tests/wire/claude_code_2.1.197.jsonl (Anthropic Messages,
streamed), its trimmed strings restored to their captured length (each "…[+N chars]" marker becomes N characters
of tool-description text, which brings it back to the 76 KB the capture's Content-Length says), its first 20 tools
kept, and a second turn added (a Bash call and its 7 KB result): a 60 KB body with 20 tools, sent as
`bench/r-<api>:route`. Each collection r-<api> has one member, on an endpoint of that protocol, all on
benchmarks/fastfake.py (50 ms before each answer). The Anthropic member gets the client's own body (same-API
pass-through); the others get it translated. "Added" is latency minus the 50 ms floor; the first content is the
first streamed chunk holding a text delta. The same body sent straight to fastfake's /v1/messages is the floor row.
Prints Markdown; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
from pathlib import Path

from harness import (FLOOR, HERE, ROOT, Proc, configure, fake_root, fmt, load_average, measure, median_rows,
                     start_service, wait_healthy)

APIS = ("openai", "anthropic", "gemini", "ollama")
CAPTURE = ROOT / "tests" / "wire" / "claude_code_2.1.197.jsonl"
FILL = "Use this tool only when the task needs it; read the file first, keep edits small, and say what changed. "
MARKER = b"text_delta"
FIGURES = ("p50", "p99", "first", "cpu", "switches", "rps", "n", "errors")


def restore(value):
    """The capture with each trimmed string brought back to its length ("…[+N chars]" -> N characters of text)."""
    if isinstance(value, str):
        return re.sub(r"\u2026\[\+(\d+) chars\]",
                      lambda m: "\u2026" + (FILL * (int(m.group(1)) // len(FILL) + 1))[:int(m.group(1))], value)
    if isinstance(value, list):
        return [restore(v) for v in value]
    if isinstance(value, dict):
        return {k: restore(v) for k, v in value.items()}
    return value


def claude_code_turn(model: str, tools: int = 20, result_chars: int = 7000) -> tuple[bytes, dict]:
    """(the 60 KB body for `model`, the headers Claude Code sent with it)."""
    captured = [json.loads(line) for line in CAPTURE.read_text(encoding="utf-8").splitlines()]
    request = next(r for r in captured if r["method"] == "POST" and r["path"].startswith("/v1/messages"))
    body = restore(request["body"])
    body["tools"] = body["tools"][:tools]
    listing = "".join(f"-rw-r--r-- 1 dev dev {1000 + i:>6} Jan  1 12:00 src/module_{i:03}.py\n" for i in range(200))
    body["messages"] += [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_bench1", "name": "Bash",
                                           "input": {"command": "ls -la src", "description": "List the sources"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bench1",
                                      "content": listing[:result_chars]}]}]
    body["model"] = model
    keep = ("anthropic-version", "anthropic-beta", "x-api-key", "user-agent", "x-app")
    return json.dumps(body).encode(), {k: v for k, v in request["headers"].items() if k in keep}


def setup(home: Path, upstream: str) -> None:
    root = fake_root(upstream)
    bases = {"openai": root + "/v1", "anthropic": root, "gemini": root + "/v1beta", "ollama": root}
    configure(home, {f"ep-{api}": {"base_url": bases[api], "api": api} for api in APIS},
              {f"cc-{api}": f"ep-{api}" for api in APIS},
              {f"r-{api}": {"members": [f"cc-{api}"], "explore": 0} for api in APIS})


def turns(proc: Proc | None, url: str, who: str, label: str, model: str, n: int, upstream: str) -> list:
    body, headers = claude_code_turn(model)
    rows = []
    for c in (1, 16):
        row = measure(proc, url, label, body, n if c > 1 else max(n // 2, 10), c, upstream if proc else None,
                      path="/v1/messages", headers=headers, marker=MARKER)
        rows.append(dict(row, who=who, load=load_average(), size=len(body)))
        print(f"  {who}: {label} c={c}: p50 +{row['p50']:.1f} ms, {fmt(row['cpu'], '.2f')} ms CPU",
              file=sys.stderr, flush=True)
    return rows


def service_rows(base: Path, who: str, root: Path, upstream: str, n: int) -> list:
    home = base / who
    setup(home, upstream)
    proc = start_service(home, root)
    try:
        wait_healthy(proc.url)
        return [row for api in APIS for row in turns(proc, proc.url, who, f"{api} member", f"bench/r-{api}:route",
                                                       n, upstream)]
    finally:
        proc.stop()


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200, help="turns per case at 16 concurrent (half at 1)")
    ap.add_argument("--repeat", type=int, default=1, help="run everything this many times; figures are medians")
    ap.add_argument("--before", type=Path, default=None, help="another checkout whose service is measured too")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose service is measured (default: this)")
    args = ap.parse_args(argv)
    services = [("before", args.before.resolve()), ("after", args.root.resolve())] if args.before else \
        [("service", args.root.resolve())]
    print(f"# benchmarks/route.py {' '.join(sys.argv[1:])}: {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"upstream delay {FLOOR * 1000:.0f} ms; load {load_average()}\n", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-route-") as tmp:
        fake = Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", str(FLOOR)])
        try:
            for r in range(args.repeat):
                runs.append(turns(None, fake_root(fake.url), "fastfake", "upstream alone (the floor)",
                                  "claude-direct", args.requests, fake.url))
                for who, root in (services if r % 2 == 0 else services[::-1]):
                    runs.append(service_rows(Path(tmp) / f"r{r}", who, root, fake.url, args.requests))
        finally:
            fake.stop()
    rows = median_rows(runs, FIGURES, ("size",))
    print(f"## Route mode, one Claude Code-sized turn ({rows[0]['size'] // 1024} KB, 20 tools, streamed), "
          f"medians of {args.repeat} run(s)\n")
    print("| service | member protocol | conc. | turns | errors | p50 added ms | p99 added ms | first content ms "
          "(p50, added) | CPU ms/turn | thread switches/turn | load (1 min) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['who']} | {r['case']} | {r['c']} | {r['n']:.0f} | {r['errors']:.0f} | {r['p50']:.1f} | "
              f"{r['p99']:.1f} | {fmt(r['first'])} | {fmt(r['cpu'], '.2f')} | {fmt(r['switches'], '.0f')} | "
              f"{r['loads']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
