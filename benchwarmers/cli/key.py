"""bench key create / list / revoke: gateway keys for apps (printed once, stored hashed)."""
from __future__ import annotations

import argparse

from ..servicelink import q
from ..words import plural
from . import verbless
from .limits import dollars
from .output import confirm, emit_json, note, say, table

FMT = argparse.RawDescriptionHelpFormatter


def register(sub, parent) -> None:
    k = sub.add_parser("key", parents=[parent], help="gateway keys for apps", formatter_class=FMT,
                       description="Named, revocable gateway keys, each limited to some collections and a rate.",
                       epilog="examples:\n  bench key create my-app --collections core --rpm 30\n"
                              "  bench key create my-app --collections core --usd-month 5\n  bench key list\n"
                              "  bench key revoke my-app --yes")
    ksub = k.add_subparsers(dest="action", metavar="ACTION")
    k.set_defaults(func=verbless.refuse(k))
    c = ksub.add_parser("create", parents=[parent], help="make a key (printed once)", formatter_class=FMT,
                        epilog="example:\n  bench key create my-app --collections core,review --rpm 30")
    c.add_argument("name")
    c.add_argument("--collections", required=True, help="the collections it reaches: a,b (or '*')")
    c.add_argument("--rpm", type=int, help="requests a minute")
    c.add_argument("--usd-month", type=dollars, metavar="USD",
                   help="a monthly budget in dollars for what the key's asks may cost (bench limits shows its spend)")
    c.set_defaults(func=run_create)
    ls = ksub.add_parser("list", parents=[parent], help="list keys (never their secrets)", formatter_class=FMT,
                         epilog="example:\n  bench key list --json")
    ls.set_defaults(func=run_list)
    r = ksub.add_parser("revoke", parents=[parent], help="revoke a key (asks first)", formatter_class=FMT,
                        epilog="example:\n  bench key revoke my-app --yes")
    r.add_argument("name")
    r.add_argument("--yes", action="store_true", help="do not ask")
    r.set_defaults(func=run_revoke)


def run_create(args, client) -> int:
    data = client.post("/bench/keys", {"name": args.name, "collections": args.collections, "rpm": args.rpm,
                                       "usd_month": args.usd_month})
    if args.json:
        emit_json(data)
        return 0
    say(data["key"])
    rate = f" at {plural(data['rpm'], 'request')} a minute" if data.get("rpm") else ""
    if data.get("usd_month") is not None:
        rate += f", up to ${data['usd_month']:,.2f} a month"
    note(f"Key {data['name']} for {', '.join(data['collections'])}{rate}. Shown once: store it now.")
    if data.get("enforced") is False:
        note("Warning: " + data["enforcement"])
    return 0


def run_list(args, client) -> int:
    data = client.get("/bench/keys")
    if args.json:
        emit_json(data)
        return 0
    table(["name", "prefix", "collections", "rpm", "usd/month", "revoked"],
          [[k["name"], k["prefix"] + "…", ",".join(k["collections"]), k["rpm"] or "",
            "" if k.get("usd_month") is None else f"{k['usd_month']:g}", "yes" if k["revoked"] else ""]
           for k in data.get("keys", [])])
    return 0


def run_revoke(args, client) -> int:
    if not confirm(f"Revoke the key {args.name!r}? Apps using it will be refused.", args.yes):
        return 1
    data = client.delete(f"/bench/keys/{q(args.name)}")
    emit_json(data) if args.json else say(f"Revoked {args.name}.")
    return 0
