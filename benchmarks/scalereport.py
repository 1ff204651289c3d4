"""record_scale.py's figures: kept as JSON (DATA/results/TAG-SIZE.json) and printed as Markdown, one run or two
side by side (before and after), with the issue's aims."""
from __future__ import annotations

import json
from pathlib import Path

from harness import fmt

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
TIMEOUT = [120.0]   # seconds a target may take (--timeout); past it the figure is "more than" that


def save(path: Path, res: dict) -> None:
    out = dict(res, warm={"|".join(k): v for k, v in res["warm"].items()},
               cold={"|".join(k): v for k, v in res["cold"].items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))


def load(path: Path) -> dict:
    res = json.loads(path.read_text())
    for part in ("warm", "cold"):
        res[part] = {tuple(k.split("|", 1)): v for k, v in res[part].items()}
    return res


def ms(seconds) -> str:
    if seconds is None:
        return "n/a"
    return f"> {TIMEOUT[0] * 1000:,.0f}" if seconds == float("inf") else f"{seconds * 1000:,.0f}"


def report(runs: dict) -> None:
    """`runs`: {tag: {size: results}}, one tag or two (before and after, side by side)."""
    tags = list(runs)
    labels = [x for x in SIZES if all(x in runs[t] for t in tags)] or list(runs[tags[0]])
    cols = [(t, x) for x in labels for t in tags]
    name = (lambda t, x: f"{x} {t}") if len(tags) > 1 else (lambda t, x: x)
    print("## Folders\n")
    print("| size | seat calls | panels | ledger lines | verdicts | span (days) | bench.db MB | template (seats "
          "answered, verdicts) | copies | replica check | service's answers vs template |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|")
    for t, x in cols:
        r, b = runs[t][x], runs[t][x]["built"]
        f = b["files"]
        print(f"| {name(t, x)} | {f['calls']:,} | {f['panels']:,} | {f['usage']:,} | {f['verdicts']:,} | "
              f"{b['span_days']:.0f} | {f['bench.db']:,} | {b['template_seats']}, {b['template_verdicts']} | "
              f"{b['copies']} | {'; '.join(b['problems']) or 'equal'} | {'; '.join(r['compare'][:3]) or 'equal'} |")
    print("\n| size | first start (s) | start, cold cache (s) | bench.db MB after the run | RSS after the pages "
          "(MB) | RSS / peak at the end (MB) |\n|---|---:|---:|---:|---:|---|")
    for t, x in cols:
        r = runs[t][x]
        print(f"| {name(t, x)} | {r['first_start']:.2f} | {r['cold_start']:.2f} | {r['files_after']['bench.db']:,} | "
              f"{fmt(r['rss_warm'].get('VmRSS'))} | {fmt(r['rss_end'].get('VmRSS'))} / "
              f"{fmt(r['rss_end'].get('VmHWM'))} |")
    print("\n## Route turns and a panel ask (added ms over the 50 ms upstream)\n")
    print("| case | " + " | ".join(name(t, x) for t, x in cols) + " |\n|---|" + "---:|" * len(cols))
    for title, part, key in ROWS:
        print(f"| {title} | " + " | ".join(fmt(runs[t][x][part].get(key)) for t, x in cols) + " |")
    print("\n## Pages, API reads and CLI commands (ms; warm: median of the rounds; cold: first answer after a "
          "restart on a database out of the OS cache)\n")
    heads = [f"{name(t, x)} {w}" for x in labels for w in ("warm", "cold") for t in tags]
    print("| what | " + " | ".join(heads) + " |\n|---|" + "---:|" * len(heads))
    for key in runs[tags[0]][labels[0]]["warm"]:
        cells = [ms(runs[t][x][w].get(key)) for x in labels for w in ("warm", "cold") for t in tags]
        print(f"| {key[0]} `{key[1]}` | " + " | ".join(cells) + " |")
    for t in tags:
        aims(runs[t], t if len(tags) > 1 else "")


ROWS = [("route turn alone, p50", "route", "alone_p50"), ("route turn alone, p99", "route", "alone_p99"),
        ("route turn alone, CPU ms/turn", "route", "alone_cpu"),
        ("a single route turn after a pause, median", "route", "single_median"),
        ("route turn right after a verdict, median", "route", "after_median"),
        ("route turn right after a verdict, max", "route", "after_max"),
        ("POST /bench/verdict, median", "route", "verdict_post"),
        ("16 route turns at once for 12 s, p50", "route", "c16_p50"),
        ("16 route turns at once for 12 s, p99", "route", "c16_p99"),
        ("16 route turns at once, turns/s", "route", "c16_rate"),
        ("16 route turns at once, CPU ms/turn", "route", "c16_cpu"),
        ("five-seat panel ask alone, p50", "panel", "p50"), ("five-seat panel ask alone, p99", "panel", "p99")]


def aims(results: dict, tag: str) -> None:
    """The issue's aims at the largest size measured, against the smallest."""
    labels = [x for x in SIZES if x in results] or list(results)
    big, small = results[labels[-1]], results[labels[0]]
    reads = [v for (g, _), v in big["warm"].items() if g != "cli"]
    colds = [v for (g, _), v in big["cold"].items() if g != "cli"]
    worst_warm, worst_cold = (max(reads) if reads else None), (max(colds) if colds else None)
    print(f"\n## Aims at {labels[-1]}{' (' + tag + ')' if tag else ''}\n\n| aim | measured | met |\n|---|---|---|")
    print(f"| every page and API read under 100 ms warm | slowest {ms(worst_warm)} ms | "
          f"{'yes' if worst_warm is not None and worst_warm < 0.1 else 'NO'} |")
    print(f"| every page and API read under 300 ms cold | slowest {ms(worst_cold)} ms | "
          f"{'yes' if worst_cold is not None and worst_cold < 0.3 else 'NO' if colds else 'not measured'} |")
    for key, title in (("alone_p50", "alone (p50)"), ("after_median", "right after a verdict (median)"),
                       ("c16_p99", "16 at once (p99)")):
        a, b = big["route"][key], small["route"][key]
        print(f"| route turn {title} within 2 ms of {labels[0]}'s | {a:.1f} vs {b:.1f} ms | "
              f"{'yes' if a - b <= 2 else 'NO'} |")
    peak = big["rss_end"].get("VmHWM")
    print(f"| RSS under 64 MB | peak {fmt(peak)} MB | {'yes' if peak and peak < 64 else 'NO'} |")
