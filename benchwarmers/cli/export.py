"""bench export KIND: the record as JSON Lines on stdout (pairs, verdicts, claims, points), streamed; and the moments
`--since` and `bench verdicts set-aside --older-than` take."""
from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import datetime, timezone
from urllib.parse import urlencode

from .parsers import command

KINDS = ("pairs", "verdicts", "claims", "points")
SPAN = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhdw])$")
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def register(sub, parent) -> None:
    p = command(sub, parent, "export", "the record as JSON Lines: preference pairs, verdicts, claims, points",
                run_export,
                description="Streams one JSON object a line to stdout, oldest first: pairs (each best pick's chosen "
                            "answer over each other answer of its panel: prompt, chosen, rejected, chosen_model, "
                            "rejected_model, panel), verdicts (every current verdict), claims (the claims judged "
                            "points gave) or points (every point with its verdict). GATEWAY.md has every field.",
                example=("bench export pairs > pairs.jsonl", "bench export verdicts --since 7d --collection core",
                         "bench export points --since 2026-01-01"))
    p.add_argument("kind", choices=KINDS, help="what to export")
    p.add_argument("--since", type=moment, metavar="WHEN",
                   help="only rows written since: a span back (30m, 12h, 7d, 2w), a date (2026-01-31) or epoch "
                        "seconds")
    p.add_argument("--collection", metavar="NAME", help="only this collection's")


def moment(text: str) -> float:
    """Epoch seconds from a span back (7d), a date or a time (ISO 8601, UTC unless it says), or epoch seconds."""
    text = text.strip()
    span = SPAN.match(text.lower())
    if span:
        return time.time() - float(span[1]) * UNITS[span[2]]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a span (7d, 12h), a date (2026-01-31) or epoch "
                                         "seconds") from None
    return (found if found.tzinfo else found.replace(tzinfo=timezone.utc)).timestamp()


def run_export(args, client) -> int:
    query = {k: v for k, v in (("since", args.since), ("collection", args.collection)) if v is not None}
    out = sys.stdout.buffer
    for line in client.download(f"/bench/export/{args.kind}" + (f"?{urlencode(query)}" if query else "")):
        out.write(line)
    out.flush()
    return 0
