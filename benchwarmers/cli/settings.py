"""bench settings: every setting with its value, default and meaning; `set NAME VALUE` changes one; `scheduler`
switches the scheduler and its jobs (cli/schedule.py)."""
from __future__ import annotations

import argparse
import json

from . import schedule
from .output import emit_json, note, say, table

FMT = argparse.RawDescriptionHelpFormatter


def register(sub, parent) -> None:
    p = sub.add_parser("settings", parents=[parent], help="show or change the service's settings",
                       description="Show every setting (value, default, what it does), or change one. Values are "
                                   "kept in the data folder's config/settings.json; `default` takes a setting back "
                                   "to its default. `bench settings scheduler` switches the scheduler and its jobs.",
                       epilog="examples:\n  bench settings\n  bench settings set seat_timeout 120\n"
                              "  bench settings set merge_model default\n  bench settings scheduler on",
                       formatter_class=FMT)
    p.set_defaults(func=run_show)
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    s = verbs.add_parser("set", parents=[parent], help="change one setting",
                         epilog="example:\n  bench settings set seat_timeout 120", formatter_class=FMT)
    s.add_argument("name")
    s.add_argument("value", help="the new value (JSON: 120, 0.4, \"text\"; plain text is taken as text; "
                                 "`default` resets it)")
    s.set_defaults(func=run_set)
    schedule.add_parser(verbs, parent)


def value_of(text: str):
    if text == "default":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def show(d: dict) -> None:
    table(["SETTING", "VALUE", "DEFAULT", "WHAT IT DOES"],
          [[s["name"], json.dumps(s["value"]), json.dumps(s["default"]), s["help"]] for s in d["settings"]])
    if d.get("problem"):
        note(f"settings.json cannot be read, so the defaults serve: {d['problem']}")


def run_show(args, client) -> int:
    d = client.get("/bench/settings")
    emit_json(d) if args.json else show(d)
    return 0


def run_set(args, client) -> int:
    d = client.post("/bench/settings", {args.name: value_of(args.value)})
    if args.json:
        emit_json(d)
        return 0
    changed = next(s for s in d["settings"] if s["name"] == args.name)
    say(f"{args.name} is now {json.dumps(changed['value'])}" + (" (applies after a restart)." if changed["restart"]
                                                                else "."))
    return 0
