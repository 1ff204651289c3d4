"""A year of records: every page, API read, CLI record command, panel ask and route turn timed on data folders of
10,000, 100,000 and 1,000,000 seat calls, warm and cold, with the service's RSS and the files' sizes.

    python benchmarks/record_scale.py --data DIR                    # 10k, 100k and 1M (builds what DIR lacks)
    python benchmarks/record_scale.py --data DIR --sizes 1m         # one size
    python benchmarks/record_scale.py --quick                       # CI smoke run: 10k in a temp folder, briefly
    python benchmarks/record_scale.py --calls 1500 --quick          # any size (the test suite's smoke test)
    python benchmarks/record_scale.py --data DIR --root ../other    # another checkout's service on the same folders

The folders (DIR/10k, DIR/100k, DIR/1m) are built once by scalebuild.py (its text says how: the service writes a
template through its own routes, which is replicated in its schema and checked row for row) and reused; each run
works on a copy (`--in-place`: on the folder itself), so a migration of a newer checkout never changes them.

Method. fastfake (50 ms before each answer, 900-character answers) and the service (serve.py of --root) on
127.0.0.1. The service's first start on the copy is timed (a newer checkout migrates then), and its answers for
some template calls are compared with the same calls of the replica. Warm: every target (each dashboard page as
HTML and as JSON, each API read, each CLI command) in turn, in rounds of at least RECORD_TTL seconds (so a cache of
the record that lives that long has run out when a round comes back to a target, as it has for a user who browses),
the median of the rounds. Route turn (Anthropic Messages with a tool, one conversation, the member on fastfake):
added latency (minus the 50 ms floor) alone at one at a time; eight times a single turn after half a second's pause,
and a turn right after a verdict (POST /bench/verdict, then at once a turn), on one kept-alive connection; 16 turns
at once for 12 s (p50, p99, turns/s, CPU per turn). A five-seat panel ask
at one at a time. RSS (VmRSS, VmHWM) after the warm rounds and after the concurrent turns. Cold: for each target
the service is stopped, the database's files are dropped from the OS page cache (posix_fadvise DONTNEED) and the
service started again; the target's first answer is timed. A CLI command's time includes starting Python.
Prints Markdown; asserts nothing.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from harness import FLOOR, HERE, ROOT, Proc, load_average, measure, run_load, start_service, \
    wait_healthy
import scalebuild
from scalebuild import ANSWER_CHARS, Mapping, check, replicate, route_body, template
from scalereport import SIZES, TIMEOUT, load, report, save

RECORD_TTL = 5.2     # seconds a round of warm targets takes at least (the record's cache lived 5 s)
PAGES = ["/", "/ask", "/calls", "/calls?verdict=missing", "/calls?model=m05&verdict=given", "/calls?page=2",
         "/calls/{panel}", "/calls/{route}", "/models", "/models/m01", "/onboard", "/discover", "/collections",
         "/collections/review", "/suite", "/endpoints", "/quotas", "/settings"]
API = ["/bench/status", "/bench/record", "/bench/record?collection=review", "/bench/calls?limit=50",
       "/bench/calls?model=m01&limit=20", "/bench/calls/{call}", "/bench/pending", "/bench/pending?session=sess-1",
       "/bench/history", "/bench/history?verdict=missing", "/bench/history?model=m05", "/bench/history/{panel}",
       "/bench/history/{route}", "/bench/stats/daily?days=30", "/bench/usage", "/bench/limits", "/bench/models",
       "/bench/models/m01", "/bench/collections", "/bench/collections/review/overview", "/v1/models"]
CLI = [("verdicts", "pending"), ("models",), ("model", "show", "m01"), ("collections",), ("usage",)]
ROUTE_HEADERS = {"anthropic-version": "2023-06-01", "x-claude-code-session-id": "bench-scale"}
COMPARED = ("model", "status", "kind", "mode", "seat", "collection", "endpoint", "served", "error", "answer",
            "request", "prompt_hash", "seconds", "ttft", "input_tokens", "output_tokens", "caller")


def json_path(path: str) -> str:
    base, _, query = path.partition("?")
    return ("/.json" if base == "/" else base + ".json") + ("?" + query if query else "")


# ---- building and reusing the folders -----------------------------------------------------------

def build(folder: Path, calls: int, build_root: Path, quick: bool) -> dict:
    """The folder of `calls` seat calls (scalebuild.py), its check, and its files' sizes, kept in built.json."""
    if folder.exists():
        shutil.rmtree(folder)
    home = folder / "home"
    home.mkdir(parents=True)
    fake = start_fake()
    try:
        t0 = time.perf_counter()
        tpl = template(home, build_root, fake.url, panels=60 if quick else 120, turns=30 if quick else 60)
        seconds = time.perf_counter() - t0
    finally:
        fake.stop()
    built = replicate(home, calls)
    built.update(target=calls, template_seconds=seconds, template_seats=tpl["seats"], template_verdicts=tpl["verdicts"],
                 sample=tpl["sample"])
    built["problems"] = check(home, built)
    built["files"] = sizes(home)
    (folder / "built.json").write_text(json.dumps(built, indent=1))
    return built


def start_fake() -> Proc:
    return Proc([sys.executable, str(HERE / "fastfake.py"), "--delay", str(FLOOR), "--answer-chars",
                 str(ANSWER_CHARS)])


def sizes(home: Path) -> dict:
    """MB of bench.db and its WAL, and rows of the record's tables."""
    out = {}
    for name in ("bench.db", "bench.db-wal"):
        p = home / name
        out[name] = round(p.stat().st_size / 2 ** 20, 1) if p.exists() else 0.0
    import sqlite3
    conn = sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True)
    for table in ("calls", "panels", "usage", "verdicts"):
        out[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    conn.close()
    return out


def point_at(home: Path, upstream: str) -> None:
    """The folder's endpoint at this run's fastfake (its port changes from run to run)."""
    path = home / "config" / "endpoints.json"
    data = json.loads(path.read_text())
    data["endpoints"]["fast"]["base_url"] = upstream
    path.write_text(json.dumps(data, indent=2))


def ids(home: Path) -> dict:
    """The newest panel, route turn and judged call of the folder: what the targets with {panel} etc. read."""
    import sqlite3
    conn = sqlite3.connect(f"file:{home / 'bench.db'}?mode=ro", uri=True)
    one = lambda sql: conn.execute(sql).fetchone()[0]   # noqa: E731
    out = {"panel": one("SELECT id FROM panels ORDER BY rowid DESC LIMIT 1"),
           "route": one("SELECT id FROM calls WHERE kind = 'route' ORDER BY rowid DESC LIMIT 1"),
           "call": one("SELECT id FROM calls WHERE kind = 'member' ORDER BY rowid DESC LIMIT 1"),
           "judge": [r[0] for r in conn.execute("SELECT id FROM calls WHERE status = 'ok' AND kind IN "
                                                "('member', 'route') ORDER BY rowid DESC LIMIT 200")]}
    conn.close()
    return out


# ---- timing -------------------------------------------------------------------------------------

def fetch(url: str, path: str) -> float:
    """Seconds to read the whole answer (a 4xx or 5xx says so: it is not a figure); inf past TIMEOUT."""
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url + path, timeout=TIMEOUT[0]) as r:
            r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{path}: {e.code} {e.read()[:300]!r}") from None
    except TimeoutError:
        return float("inf")
    return time.perf_counter() - t0


def cli(url: str, root: Path, args: tuple) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHWARMERS_")}
    env["BENCHWARMERS_URL"] = url
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, str(root / "bench.py"), *args], env=env, capture_output=True,
                              timeout=TIMEOUT[0])
    except subprocess.TimeoutExpired:
        return float("inf")
    if done.returncode != 0:
        raise RuntimeError(f"bench {' '.join(args)}: exit {done.returncode}: {done.stderr[-300:]!r}")
    return time.perf_counter() - t0


def targets(found: dict) -> list[tuple[str, str, object]]:
    """(group, label, what) of every target: a path, or a CLI command's words."""
    fill = lambda p: p.format(**found)   # noqa: E731
    out = [("page", p, fill(p)) for p in PAGES] + [("page .json", p, fill(json_path(p))) for p in PAGES]
    out += [("api", p, fill(p)) for p in API] + [("cli", "bench " + " ".join(c), c) for c in CLI]
    return out


def hit(url: str, root: Path, what) -> float:
    return cli(url, root, what) if isinstance(what, tuple) else fetch(url, what)


class Service:
    """The service on a folder, started again after a target that ran out of time (its query would go on)."""

    def __init__(self, home: Path, root: Path):
        self.home, self.root = home, root
        self.proc = self.start()

    def start(self) -> Proc:
        proc = start_service(self.home, self.root)
        wait_healthy(proc.url, timeout=3600)
        return proc

    def restart(self) -> None:
        self.proc.stop()
        self.proc = self.start()


def warm(service: Service, todo: list, rounds: int) -> dict:
    """Each target's median over `rounds` rounds, each round at least RECORD_TTL seconds long; a target that ran out
    of time is not asked again (and the service is restarted)."""
    seen: dict = {}
    for _ in range(rounds):
        t0 = time.monotonic()
        for group, label, what in todo:
            if seen.get((group, label)) == [float("inf")]:
                continue
            seconds = hit(service.proc.url, service.root, what)
            seen.setdefault((group, label), []).append(seconds)
            if seconds == float("inf"):
                print(f"  {label}: more than {TIMEOUT[0]:.0f} s", file=sys.stderr, flush=True)
                service.restart()
        time.sleep(max(0.0, RECORD_TTL - (time.monotonic() - t0)))
    return {k: statistics.median(v) for k, v in seen.items()}


def evict(home: Path) -> None:
    """Drop the database's files from the OS page cache (clean pages; Linux and other POSIX systems)."""
    for name in ("bench.db", "bench.db-wal", "bench.db-shm"):
        p = home / name
        if p.exists() and hasattr(os, "posix_fadvise"):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def cold(home: Path, root: Path, todo: list, skip: dict) -> dict:
    """Each target's first answer from a service just started on a database out of the OS cache (not those that ran
    out of time warm: `skip`)."""
    out = {}
    for group, label, what in todo:
        if skip.get((group, label)) == float("inf"):
            out[(group, label)] = float("inf")
            continue
        evict(home)
        proc = start_service(home, root)
        try:
            wait_healthy(proc.url, timeout=600)
            out[(group, label)] = hit(proc.url, root, what)
        finally:
            proc.stop()
    return out


def route_turns(proc: Proc, found: dict, quick: bool) -> dict:
    """Route mode: alone (at one at a time, and single turns after a pause), right after a verdict, and 16 at once for
    12 s. The single turns and those after a verdict go on one kept-alive connection, so they differ by the verdict."""
    body = json.dumps(route_body(0, False)).encode()
    alone = measure(proc, proc.url, "route turn", body, 10 if quick else 40, 1, path="/v1/messages",
                    headers=ROUTE_HEADERS)
    rng, single, after, posts = random.Random(3), [], [], []
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(proc.url).netloc, timeout=TIMEOUT[0])
    for _ in range(3 if quick else 8):
        time.sleep(0.5)
        single.append(turn(conn, body))
        time.sleep(0.5)
        t0 = time.perf_counter()
        scalebuild.post(proc.url, "/bench/verdict", {"call": rng.choice(found["judge"]), "useful": rng.random() < .6})
        posts.append(time.perf_counter() - t0)
        after.append(turn(conn, body))
    conn.close()
    cpu0 = proc.cpu()
    many = run_load(proc.url, body, 10 ** 6, 16, max_seconds=3 if quick else 12, path="/v1/messages",
                    headers=ROUTE_HEADERS)
    cpu1 = proc.cpu()
    lat = sorted(x - FLOOR for x in many.latencies)
    return {"alone_p50": alone["p50"], "alone_p99": alone["p99"], "alone_cpu": alone["cpu"],
            "single_median": 1000 * statistics.median(single),
            "after_median": 1000 * statistics.median(after), "after_max": 1000 * max(after),
            "verdict_post": 1000 * statistics.median(posts),
            "c16_p50": 1000 * lat[len(lat) // 2], "c16_p99": 1000 * lat[min(len(lat) - 1, int(len(lat) * .99))],
            "c16_rate": len(lat) / many.wall, "c16_errors": many.errors,
            "c16_cpu": 1000 * (cpu1 - cpu0) / len(lat) if cpu0 is not None and lat else None}


def turn(conn: http.client.HTTPConnection, body: bytes) -> float:
    """One route turn on a kept-alive connection: seconds added over the upstream's FLOOR."""
    t0 = time.perf_counter()
    conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json", **ROUTE_HEADERS})
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        raise RuntimeError(f"a route turn: {r.status}")
    return time.perf_counter() - t0 - FLOOR


def panel_ask(proc: Proc, quick: bool) -> dict:
    payload = {"model": "bench/review", "messages": [{"role": "user", "content": scalebuild.prompt(1)}]}
    return measure(proc, proc.url, "panel", payload, 8 if quick else 30, 1)


def compare(url: str, built: dict) -> list[str]:
    """The service's answers for template calls against the same calls of the replica's last copy."""
    mapping = Mapping(built["t0"], built["t1"], built["end"], built["span_days"] * 86400, built["copies"])
    out = []
    for old in built["sample"]:
        new = json.loads(urllib.request.urlopen(url + f"/bench/calls/{mapping.id(old['id'], built['copies'] - 1)}",
                                                timeout=60).read())
        for field in COMPARED:
            if new.get(field) != old.get(field):
                out.append(f"call {old['id']}: {field} {new.get(field)!r} != {old.get(field)!r}")
        verdicts = lambda d: [(v["useful"], v["note"], v["real"], v["false"], v["current"]) for v in d["verdicts"]]  # noqa
        if verdicts(new) != verdicts(old):
            out.append(f"call {old['id']}: verdicts differ")
    return out


def run_size(label: str, calls: int, args) -> dict:
    folder = args.data / label
    built_file = folder / "built.json"
    if args.rebuild or not built_file.exists() or json.loads(built_file.read_text()).get("target") != calls:
        print(f"building {label} ({calls:,} seat calls) in {folder}", file=sys.stderr, flush=True)
        build(folder, calls, args.build_root, args.quick)
    built = json.loads(built_file.read_text())
    home = folder / "home"
    if not args.in_place:
        work = args.data / f"{label}-run"
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(home, work)
        home = work
    found = ids(home)
    fake = start_fake()
    try:
        point_at(home, fake.url)
        return measure_folder(home, built, found, args)
    finally:
        fake.stop()
        if not args.in_place:
            shutil.rmtree(home, ignore_errors=True)


def measure_folder(home: Path, built: dict, found: dict, args) -> dict:
    todo = targets(found)
    if args.quick:
        todo = [t for t in todo if t[1] in ("/", "/calls", "/models", "/collections", "/bench/record",
                                            "/bench/pending", "bench verdicts pending")]
    t0 = time.perf_counter()
    service = Service(home, args.root)
    try:
        first_start = time.perf_counter() - t0
        res = {"built": built, "first_start": first_start, "compare": compare(service.proc.url, built)}
        res["warm"] = warm(service, todo, 1 if args.quick else 3)
        service.restart()   # what the warm targets left behind (RSS, caches) is not the turns' to carry
        for group, label, what in todo[:len(PAGES) * 2 + len(API)] if not args.quick else todo:
            if res["warm"].get((group, label), 0) != float("inf"):
                hit(service.proc.url, args.root, what)   # a user's pages have been read once
        res["rss_warm"] = service.proc.memory()
        res["panel"] = panel_ask(service.proc, args.quick)
        res["route"] = route_turns(service.proc, found, args.quick)
        res["rss_end"] = service.proc.memory()
    finally:
        service.proc.stop()
    res["files_after"] = sizes(home)
    t0 = time.perf_counter()
    evict(home)
    proc = start_service(home, args.root)
    wait_healthy(proc.url, timeout=3600)
    res["cold_start"] = time.perf_counter() - t0
    proc.stop()
    res["cold"] = {} if args.no_cold else cold(home, args.root, todo if not args.quick else todo[:3], res["warm"])
    return res


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="where the folders are built and kept (default: a temp folder)")
    ap.add_argument("--sizes", default="10k,100k,1m", help="of 10k, 100k, 1m (default all three)")
    ap.add_argument("--calls", type=int, help="one size of this many seat calls instead")
    ap.add_argument("--quick", action="store_true", help="CI smoke run: 10k (or --calls), few targets, briefly")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose service is measured")
    ap.add_argument("--build-root", type=Path, help="the checkout whose service writes the template (default --root)")
    ap.add_argument("--rebuild", action="store_true", help="build the folders again")
    ap.add_argument("--in-place", action="store_true", help="run on the folders themselves, not on copies")
    ap.add_argument("--no-cold", action="store_true", help="leave out the cold targets (a restart each)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a target may take (default 120)")
    ap.add_argument("--tag", default="run", help="the name the figures are kept under in DATA/results/ (e.g. after)")
    ap.add_argument("--report", help="only print the figures kept under these tags (e.g. today,after): side by side")
    args = ap.parse_args(argv)
    args.root, args.build_root = args.root.resolve(), (args.build_root or args.root).resolve()
    TIMEOUT[0] = args.timeout
    if args.calls is not None and args.calls < 100:
        ap.error("--calls must be at least 100")
    if args.report and not args.data:
        ap.error("--report reads the figures kept in --data DIR")
    try:
        sizes_wanted = {f"{args.calls}": args.calls} if args.calls else \
            {s: SIZES[s] for s in ("10k",) if args.quick} or {s.strip(): SIZES[s.strip()] for s in
                                                               args.sizes.split(",")}
    except KeyError as e:
        ap.error(f"unknown size {e.args[0]!r}: give 10k, 100k or 1m")
    print(f"# benchmarks/record_scale.py {' '.join(sys.argv[1:] if argv is None else argv)}: {os.cpu_count()} "
          f"CPUs, Python {platform.python_version()}, {platform.system()} {platform.release()}; service of "
          f"{args.root}; load {load_average()}\n", flush=True)
    if args.report:
        kept = args.data.resolve() / "results"
        report({t: {x: load(kept / f"{t}-{x}.json") for x in sizes_wanted if (kept / f"{t}-{x}.json").exists()}
                for t in args.report.split(",")})
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        args.data = (args.data or Path(tmp)).resolve()
        results = {}
        for label, calls in sizes_wanted.items():
            results[label] = run_size(label, calls, args)
            save(args.data / "results" / f"{args.tag}-{label}.json", results[label])
            print(f"  {label} measured (load {load_average()})", file=sys.stderr, flush=True)
        report({args.tag: results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
