"""bench settings: every setting with its value, default and meaning; `set NAME VALUE` changes one; `scheduler`
switches the scheduler and its jobs (cli/schedule.py)."""
from __future__ import annotations

import json

from . import schedule
from .output import json_asked, note, say, shown, table
from .parsers import command, verbs

def register(sub, parent) -> None:
    p = command(sub, parent, "settings", "show or change the service's settings", run_show,
                description="Show every setting (value, default, what it does), or change one. Values are kept in the "
                            "data folder's config/settings.json; `default` takes a setting back to its default. "
                            "`bench settings scheduler` switches the scheduler and its jobs.",
                example=("bench settings", "bench settings set seat_timeout 120",
                         "bench settings set merge_model default", "bench settings scheduler on"))
    under = verbs(p, refuse=False)
    s = command(under, parent, "set", "change one setting", run_set, example="bench settings set seat_timeout 120")
    s.add_argument("name")
    s.add_argument("value", help="the new value (JSON: 120, 0.4, \"text\"; plain text is taken as text; "
                                 "`default` resets it)")
    schedule.add_parser(under, parent)


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
    return shown(args, client.get("/bench/settings"), show)


def run_set(args, client) -> int:
    d = client.post("/bench/settings", {args.name: value_of(args.value)})
    if json_asked(args, d):
        return 0
    changed = next(s for s in d["settings"] if s["name"] == args.name)
    say(f"{args.name} is now {json.dumps(changed['value'])}" + (" (applies after a restart)." if changed["restart"]
                                                                else "."))
    return 0
