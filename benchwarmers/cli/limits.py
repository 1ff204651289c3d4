"""bench limits: every connection's and model's rate limits with what is used and when each resets; `set` and
`clear` change the user's own (kept in config/limits.json)."""
from __future__ import annotations

import argparse
import time

from ..roster.limits.userset import HIGHEST, LIMITS
from ..servicelink import q
from .output import emit_json, note, say, table

FMT = argparse.RawDescriptionHelpFormatter


def register(sub, parent) -> None:
    p = sub.add_parser("limits", parents=[parent], help="rate limits per connection and model: used, left, resets",
                       description="Show the rate limits of every connection (an endpoint and its key: its models "
                                   "share them) and of the models that have one: what each allows, what is used and "
                                   "when it resets, and what the provider's own headers said. A call that would "
                                   "break a limit waits for it (limit_wait_seconds) or is refused unsent.",
                       epilog="examples:\n  bench limits\n  bench limits set openrouter --rpm 20 --rpd 50\n"
                              "  bench limits set mini --model --tpm 100000\n  bench limits clear openrouter rpd\n"
                              "  bench limits clear openrouter", formatter_class=FMT)
    p.set_defaults(func=run_show)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    s = verbs.add_parser("set", parents=[parent], help="set a connection's or a model's limits",
                         epilog="examples:\n  bench limits set openrouter --rpm 20 --rpd 50\n"
                                "  bench limits set mini --tpd 2000000 --rpmonth 3000", formatter_class=FMT)
    s.add_argument("name", help="a connection (an endpoint's name) or a model alias")
    add_scope(s)
    for key, words in LIMITS.items():
        s.add_argument(f"--{key}", type=whole, metavar="N", help=words)
    s.set_defaults(func=run_set)
    c = verbs.add_parser("clear", parents=[parent], help="clear some or all of a connection's or a model's limits",
                         epilog="examples:\n  bench limits clear openrouter rpd\n  bench limits clear openrouter",
                         formatter_class=FMT)
    c.add_argument("name", help="a connection (an endpoint's name) or a model alias")
    c.add_argument("limits", nargs="*", type=limit_name, metavar="LIMIT",
                   help="the limits to clear: " + ", ".join(LIMITS) + " (none named: all of them)")
    add_scope(c)
    c.set_defaults(func=run_clear)


def add_scope(p) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--connection", dest="scope", action="store_const", const="connection",
                       help="NAME is a connection (when it names a model too)")
    scope.add_argument("--model", dest="scope", action="store_const", const="model",
                       help="NAME is a model alias (when it names a connection too)")


def whole(text: str) -> int:
    """A limit: a whole number from 1 up (argparse turns the ValueError into a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= HIGHEST:
        raise argparse.ArgumentTypeError(f"{text} is out of range: a limit is from 1 to {HIGHEST} "
                                         "(`bench limits clear NAME LIMIT` removes one)")
    return value


def limit_name(text: str) -> str:
    if text not in LIMITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit: use " + ", ".join(LIMITS))
    return text


def clock(epoch) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch)) if epoch else ""


def rows_of(entry: dict) -> list[list]:
    label = entry["name"] if entry["known"] else f"{entry['name']} (gone)"
    rows = []
    for key, w in entry["windows"].items():
        if w["limit"]:
            rows.append([entry["scope"], label, key, w["used"], w["limit"], w["left"], clock(w["resets_at"])])
    if entry.get("resting_until"):
        rows.append([entry["scope"], label, "provider", "", "", 0, clock(entry["resting_until"])])
    learned = entry.get("learned") or {}
    for unit in ("requests", "tokens"):
        if learned.get(f"{unit}_remaining") is not None:
            rows.append([entry["scope"], label, f"provider {unit}", "", learned.get(f"{unit}_limit") or "",
                         learned[f"{unit}_remaining"], clock(learned.get(f"{unit}_reset_at"))])
    return rows


def show(d: dict) -> None:
    rows = [r for e in d["connections"] + d["models"] for r in rows_of(e)]
    if rows:
        table(["SCOPE", "NAME", "LIMIT", "USED", "OF", "LEFT", "RESETS"], rows)
    else:
        say("No rate limits set, and no provider has sent any yet.")
    waits = d["waits"]
    note(f"A call waits up to {waits['limit_wait_seconds']:g} s for a limit ({waits['limit_wait_scheduled_seconds']:g}"
         " s for scheduled work), else it is refused unsent. Set one: bench limits set NAME --rpm N.")
    if d.get("problem"):
        note(f"limits.json cannot be read, so none of its limits apply: {d['problem']}")


def run_show(args, client) -> int:
    d = client.get("/bench/limits")
    emit_json(d) if args.json else show(d)
    return 0


def said(entry: dict) -> str:
    limits = ", ".join(f"{k} {v}" for k, v in entry["set"].items())
    return f"{entry['scope']} {entry['name']}: " + (limits or "no limits")


def run_set(args, client) -> int:
    body = {key: getattr(args, key) for key in LIMITS if getattr(args, key) is not None}
    if not body:
        note("Name at least one limit: --rpm, --rpd, --rpmonth, --tpm or --tpd.")
        return 2
    d = client.post("/bench/limits", {"name": args.name, "scope": args.scope, **body})
    emit_json(d) if args.json else say(said(d))
    return 0


def run_clear(args, client) -> int:
    if args.limits:
        d = client.post("/bench/limits", {"name": args.name, "scope": args.scope, **{k: None for k in args.limits}})
    else:
        scope = f"?scope={q(args.scope)}" if args.scope else ""
        d = client.delete(f"/bench/limits/{q(args.name)}{scope}")
    emit_json(d) if args.json else say(said(d))
    return 0
