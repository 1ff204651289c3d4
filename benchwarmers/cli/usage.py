"""bench usage: a month of the usage ledger (every call sent: tokens and cost), totalled by model, connection,
collection or kind, and what exploration cost and found."""
from __future__ import annotations

import argparse
import re

from ..servicelink import q
from ..words import plural
from .output import note, say, shown, table
from .parsers import command

CUTS = ("model", "connection", "collection", "kind")


def register(sub, parent) -> None:
    p = command(sub, parent, "usage", "a month's calls, tokens and cost, by model, connection, ...", run_usage,
                description="A month of the usage ledger: every call sent upstream (panel seats, merges, route turns, "
                            "shadow seats, probes, speed tests, suite tasks) with its tokens and cost, totalled by one "
                            "cut; then what the month's explore seats cost and found. Months are calendar months in "
                            "UTC. Cost is known where a price is (the catalog's, or your own: bench model set NAME "
                            "--price-in N --price-out N).",
                example=("bench usage", "bench usage --month 2026-11 --by connection", "bench usage --by kind --json"))
    p.add_argument("--month", type=month, metavar="YYYY-MM", help="the month (default: this one, UTC)")
    p.add_argument("--by", choices=CUTS, default="model", help="the cut to total by (default: model)")


def month(text: str) -> str:
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a month: give it as YYYY-MM, e.g. 2026-11")
    return text


def money(value) -> str:
    return "" if value is None else "$0" if value == 0 else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def row(name, t: dict) -> list:
    cost = money(t["cost"]) + (f" (+{t['unpriced']} unpriced)" if t["unpriced"] else "")
    return [name if name is not None else "(none)", t["calls"], t["input_tokens"], t["output_tokens"],
            t["cached_tokens"], cost.strip()]


def show(d: dict) -> None:
    headers = [d["by"].upper(), "CALLS", "TOKENS IN", "TOKENS OUT", "CACHED", "COST"]
    if not d["rows"]:
        say(f"No calls in {d['month']}.")
    else:
        table(headers, [row(r["name"], r) for r in d["rows"]] + [row("TOTAL", d["total"])])
    x = d["exploration"]
    promoted = ", ".join(f"{p['model']} ({p['collection']})" for p in x["promoted"]) or "none"
    note(f"Exploration in {d['month']}: {plural(x['calls'], 'call')}, "
         f"{plural(x['input_tokens'] + x['output_tokens'], 'token')}, {money(x['cost']) or 'cost unknown'}; "
         f"{x['useful']} of {x['judged']} judged answers useful; now members: {promoted}.")
    if d["total"]["unpriced"]:
        note("Calls with no known price are counted but not costed: "
             "bench model set NAME --price-in N --price-out N (USD per million tokens).")


def run_usage(args, client) -> int:
    query = "&".join(f"{k}={q(v)}" for k, v in (("month", args.month), ("by", args.by)) if v)
    d = client.get("/bench/usage" + (f"?{query}" if query else ""))
    return shown(args, d, show)
