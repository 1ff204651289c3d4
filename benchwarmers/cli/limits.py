"""bench limits: every connection's and model's rate limits with what is used and when each resets, and every
monthly budget in dollars with this month's spend; `set` and `clear` change the user's own (config/limits.json)."""
from __future__ import annotations

import argparse
import time

from ..roster.limits.userset import HIGHEST, LIMITS, MOST_USD, USD
from ..servicelink import q
from .output import emit_json, note, say, table
from .parsers import command, verbs


def register(sub, parent) -> None:
    p = command(sub, parent, "limits", "rate limits and monthly budgets: used, spent, left, resets", run_show,
                description="Show the rate limits of every connection (an endpoint and its key: its models share "
                            "them) and of the models that have one: what each allows, what is used and when it "
                            "resets, and what the provider's own headers said; and every monthly budget in dollars "
                            "(on a model, a connection, a collection, a gateway key or the whole bench) with what "
                            "this month has spent. A call that would break a rate limit waits for it "
                            "(limit_wait_seconds) or is refused unsent; one a budget has no room for is refused "
                            "unsent until the month's turn (midnight on the 1st, local time).",
                example=("bench limits", "bench limits set openrouter --rpm 20 --rpd 50",
                         "bench limits set mini --model --tpm 100000", "bench limits set mini --usd-month 5",
                         "bench limits set review --collection --usd-month 10",
                         "bench limits set --bench --usd-month 25",
                         "bench limits clear openrouter rpd", "bench limits clear openrouter"))
    v = verbs(p, refuse=False)
    s = command(v, parent, "set", "set a connection's or a model's limits, or a budget", run_set,
                example=("bench limits set openrouter --rpm 20 --rpd 50", "bench limits set mini --tpd 2000000 "
                         "--rpmonth 3000", "bench limits set mini --model --usd-month 5",
                         "bench limits set my-app --key --usd-month 2", "bench limits set --bench --usd-month 25"))
    s.add_argument("name", nargs="?", help="a connection (an endpoint's name), a model alias, a collection (with "
                   "--collection) or a gateway key (with --key); none with --bench")
    add_scope(s)
    for key, words in LIMITS.items():
        s.add_argument(f"--{key}", type=whole, metavar="N", help=words)
    s.add_argument("--usd-month", type=dollars, metavar="USD", dest=USD,
                   help="a monthly budget in dollars (0: nothing may be spent)")
    c = command(v, parent, "clear", "clear some or all of a connection's or a model's limits, or a budget",
                run_clear, example=("bench limits clear openrouter rpd", "bench limits clear openrouter",
                                    "bench limits clear review --collection"))
    c.add_argument("name", nargs="?", help="a connection (an endpoint's name), a model alias, a collection or a key")
    c.add_argument("limits", nargs="*", type=limit_name, metavar="LIMIT",
                   help="the limits to clear: " + ", ".join([*LIMITS, USD]) + " (none named: all of them)")
    add_scope(c)


def add_scope(p) -> None:
    scope = p.add_mutually_exclusive_group()
    for name, words in (("connection", "NAME is a connection (when it names a model too)"),
                        ("model", "NAME is a model alias (when it names a connection too)"),
                        ("collection", "NAME is a collection (a budget on what its asks cost)"),
                        ("key", "NAME is a gateway key (a budget on what its asks cost)"),
                        ("bench", "the whole bench (a budget on everything it spends)")):
        scope.add_argument(f"--{name}", dest="scope", action="store_const", const=name, help=words)


def dollars(text: str) -> float:
    """A budget: dollars from 0 up (argparse turns the ValueError into a usage error, exit 2)."""
    try:
        value = float(text.strip().lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of dollars") from None
    if not 0 <= value <= MOST_USD or value != value:
        raise argparse.ArgumentTypeError(f"{text} is out of range: a budget is from 0 to {MOST_USD:.0f} dollars")
    return value


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
    if text not in LIMITS and text != USD:
        raise argparse.ArgumentTypeError(f"{text!r} is not a limit: use " + ", ".join([*LIMITS, USD]))
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
    show_money(d.get("money") or {})
    waits = d["waits"]
    note(f"A call waits up to {waits['limit_wait_seconds']:g} s for a limit ({waits['limit_wait_scheduled_seconds']:g}"
         " s for scheduled work), else it is refused unsent. Set one: bench limits set NAME --rpm N.")
    if d.get("problem"):
        note(f"limits.json cannot be read, so none of its limits apply: {d['problem']}")


def show_money(m: dict) -> None:
    """The budgets with this month's spend, and the models no dollar budget can limit."""
    if not m.get("budgets"):
        return
    say("")
    table(["BUDGET", "SPENT", "HELD", "OF", "LEFT", "STATE"],
          [[b["what"], f"${b['spent']:,.4f}", f"${b['held']:,.4f}", f"${b['usd_month']:,.2f}", f"${b['left']:,.4f}",
            b["state"]] for b in m["budgets"]])
    note(f"Budgets of {m['month']} reset at {m['reset_text']}.")
    if m.get("unpriced"):
        note("No price known, so no dollar budget limits: " + ", ".join(m["unpriced"]) +
             " (set one: bench model set NAME --price-in X --price-out Y).")


def run_show(args, client) -> int:
    d = client.get("/bench/limits")
    emit_json(d) if args.json else show(d)
    return 0


def said(entry: dict) -> str:
    limits = ", ".join(f"{k} {v:g}" if k == USD else f"{k} {v}" for k, v in entry["set"].items())
    budget = entry.get("budget")
    spent = f" (${budget['spent']:,.4f} spent this month)" if budget else ""
    return f"{entry['scope']} {entry['name']}: " + (limits or "no limits") + spent


def named(args) -> str | None:
    """NAME, or None when it is missing (the whole bench needs none)."""
    if args.name or args.scope == "bench":
        return args.name or "all"
    note("Say whose limits: a connection, a model, a collection (--collection), a key (--key), or --bench.")
    return None


def run_set(args, client) -> int:
    body = {key: getattr(args, key) for key in [*LIMITS, USD] if getattr(args, key) is not None}
    if not body:
        note("Name at least one limit: --rpm, --rpd, --rpmonth, --tpm, --tpd or --usd-month.")
        return 2
    name = named(args)
    if name is None:
        return 2
    d = client.request("PUT", f"/bench/limits/{q(name)}", {"scope": args.scope, **body})
    emit_json(d) if args.json else say(said(d))
    return 0


def run_clear(args, client) -> int:
    name = named(args)
    if name is None:
        return 2
    if args.limits:
        d = client.request("PUT", f"/bench/limits/{q(name)}",
                           {"scope": args.scope, **{k: None for k in args.limits}})
    else:
        scope = f"?scope={q(args.scope)}" if args.scope else ""
        d = client.delete(f"/bench/limits/{q(name)}{scope}")
    emit_json(d) if args.json else say(said(d))
    return 0
