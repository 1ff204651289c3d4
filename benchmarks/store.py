"""The record's own cost: CPU per five-seat panel's records (a panel row, five call records, five ledger lines),
written through the store as the panel writes them, with nothing else running.

    python benchmarks/store.py [PANELS]                  # 3,000 panels by default, two at a time
    python benchmarks/store.py [PANELS] --root ../other  # another checkout's store, for a before/after
    python benchmarks/store.py [PANELS] --together 1,2,4,16   # panels a commit holds, one run each

Each panel's records are queued, then waited for (as a reply waits for its records' commit), two panels at a
time (about what a commit holds at 16 concurrent asks; --together sets it); a fresh data folder each run, 200 panels first to warm
it. Figures: CPU (user and system) per panel, panels/s, and the same over the last fifth of the run (a record
that grows makes each write dearer when keys land at random pages of their indexes). Asserts nothing.
"""
from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORE = Path(sys.argv[sys.argv.index("--root") + 1]).resolve() if "--root" in sys.argv[:-1] else ROOT
sys.path.insert(0, str(STORE))

from benchwarmers.store import calls as calls_mod  # noqa: E402
from benchwarmers.store.calls import CallRecord, Calls  # noqa: E402
from benchwarmers.store.db import Database  # noqa: E402
from benchwarmers.store.ledger import Line  # noqa: E402

try:   # the ids the panel uses: time-ordered where the checkout has them
    from benchwarmers.store.ids import record_id as make_id  # noqa: E402
except ImportError:
    make_id = calls_mod.new_id

REQUEST = json.dumps({"system": None, "messages": [{"role": "user", "content": "Say something short."}],
                      "params": {"max_tokens": 4096}, "tools": []})


def panel(calls: Calls) -> list:
    """One five-seat panel's records, queued: what the service writes for each panel."""
    pid = make_id("p_")
    calls.add_panel(pid, "five", "panel", 5, None)
    out = []
    for seat in range(1, 6):
        cid = make_id()
        rec = CallRecord(id=cid, model=f"m{seat}", status="ok", panel=pid, collection="five", endpoint="fake",
                         served=f"m{seat}", kind="member", mode="panel", seat=seat, request=REQUEST,
                         prompt_hash="0123456789abcdef", answer="A short answer from the upstream.", seconds=0.05,
                         input_tokens=10, output_tokens=8)
        out.append(calls.add(rec, Line("fake", f"m{seat}", "member", 10, 8, 0, None, "five", cid)))
    return out


def cpu() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def run(total: int, together: int = 2) -> list[tuple]:
    """(panels, user s, system s, wall s) for the first four fifths and the last fifth of the run."""
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        db = Database(Path(tmp) / "bench.db")
        calls = Calls(db)
        for w in [w for _ in range(200) for w in panel(calls)]:
            w.result(10)
        parts = []
        for size in (total - total // 5, total // 5):
            (u0, s0), t0 = cpu(), time.perf_counter()
            for _ in range(0, size, together):
                for w in [w for _ in range(together) for w in panel(calls)]:
                    w.result(10)
            (u1, s1), t1 = cpu(), time.perf_counter()
            parts.append((size, u1 - u0, s1 - s0, t1 - t0))
        db.close()
    return parts


def main() -> int:
    args = sys.argv[1:]
    options = {}
    for name in ("--root", "--together"):
        if name in args[:-1]:
            at = args.index(name)
            options[name] = args[at + 1]
            del args[at:at + 2]
    try:
        total = int(args[0]) if args else 3000
        sizes = [int(k) for k in options.get("--together", "2").split(",")]
    except ValueError:
        print("usage: python benchmarks/store.py [PANELS] [--root DIR] [--together K,K,...] (whole numbers)",
              file=sys.stderr)
        return 2
    if total < 5 or min(sizes) < 1:
        print("store.py: PANELS must be at least 5 and each --together at least 1", file=sys.stderr)
        return 2
    print(f"# benchmarks/store.py: {total} five-seat panels' records; store of {STORE}\n")
    print("| panels a commit | part | panels | CPU ms/panel (user + system) | panels/s |\n|---:|---|---:|---:|---:|")
    for together in sizes:
        for name, (n, user, system, wall) in zip(("first four fifths", "last fifth"), run(total, together)):
            print(f"| {together} | {name} | {n} | {1000 * (user + system) / n:.3f} ({1000 * user / n:.3f} + "
                  f"{1000 * system / n:.3f}) | {n / wall:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
