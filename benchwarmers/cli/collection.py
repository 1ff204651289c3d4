"""bench collections / collection save / collection delete."""
from __future__ import annotations

import argparse

from ..numberchecks import typed_seconds
from ..servicelink import q
from ..words import plural
from .output import delete_confirmed, emit_json, json_asked, note, say, table
from .parsers import asks_first, command, verbs


def register(sub, parent) -> None:
    command(sub, parent, "collections", "the collections you can ask", run_list,
            description="List collections: name, description, members, explore seats.",
            example="bench collections --json")
    c = command(sub, parent, "collection", "save or delete a collection",
                description="Create or change a collection, or delete one.",
                example=("bench collection save reviewers --members a,b,c --description \"adversarial review\" "
                         "--purpose review", "bench collection save reviewers --add d --remove a",
                         "bench collection delete reviewers --yes"))
    under = verbs(c, dest="action")
    register_save(command(under, parent, "save", "create or change", run_save,
                          example=("bench collection save core --members a,b --explore 2",
                                   "bench collection save core --referee judge --points all")))
    d = command(under, parent, "delete", "delete (asks first)", run_delete, example="bench collection delete old --yes")
    d.add_argument("name")
    asks_first(d)


def register_save(s) -> None:
    s.add_argument("name")
    s.add_argument("--members", help="replace the members: a,b,c")
    s.add_argument("--add", help="add members: d,e")
    s.add_argument("--remove", help="remove members: a")
    s.add_argument("--description", help="what the collection is for")
    s.add_argument("--purpose", help="review, design, code, enumeration, prose, quick, vision or image: explore "
                                     "seats go only to models whose roles fit ('' for none)")
    s.add_argument("--explore", type=int, help="explore seats per ask (default 1)")
    s.add_argument("--merge-model", help="the model that writes :merged answers")
    s.add_argument("--referee", help="the model that finds the panel's points, where its seats disagree, never on a "
                                     "panel it is a seat of ('' for the default: the best-recorded model outside "
                                     "the panel)")
    s.add_argument("--points", choices=("off", "contested", "all"),
                   help="which points a reply shows: contested (some seat contradicts them; the default for a new "
                        "collection), all, or off")
    s.add_argument("--points-wait", metavar="SECONDS",
                   help="seconds a streamed reply waits for its points after the last seat ('' for the "
                        "points_wait_seconds setting)")
    s.add_argument("--shadow", type=int, help="route mode: members that also answer each turn, off the path")
    s.add_argument("--judge", metavar="MODEL",
                   help="route mode: a model (not a member) that judges the shadow answers beside the served one, "
                        "blind, apart from your verdicts ('' for none)")
    s.add_argument("--judge-budget", type=float, metavar="USD", help="the most the judge may spend a month, in USD "
                                                                     "(priced from the catalog; needed with --judge)")
    s.add_argument("--judge-rate", type=float, metavar="SHARE",
                   help="the share of shadowed turns the judge reads, 0 to 1 (default 1)")
    s.add_argument("--blind", action=argparse.BooleanOptionalAction, default=None,
                   help="its panels show the seats as Seat 1..N in a random order, no model named, until judged "
                        "(--no-blind: name them again)")


def run_list(args, client) -> int:
    data = client.get("/bench/collections", gateway=True)
    if json_asked(args, data):
        return 0
    cols = data.get("collections", [])
    if not cols:
        note("No collections yet: bench collection save NAME --members a,b --description TEXT")
        return 0
    table(["name", "purpose", "description", "members", "explore"],
          [[c["name"], c.get("purpose") or "", c.get("description", ""), members(c), c.get("explore")] for c in cols])
    if any(c.get("retired") or c.get("gone") for c in cols):
        note("Members marked (retired) or (gone) get no seat: `bench model restore ALIAS`, or "
             "`bench collection save NAME --remove ALIAS`.")
    return 0


def members(c: dict) -> str:
    """The members, each retired or gone one marked: no panel seats it."""
    retired, gone = set(c.get("retired") or []), set(c.get("gone") or [])
    return ",".join(m + (" (retired)" if m in retired else " (gone)" if m in gone else "")
                    for m in c.get("members", []))


def run_save(args, client) -> int:
    body = {}
    for field in ("members", "add", "remove", "description", "explore", "shadow", "purpose"):
        value = getattr(args, field)
        if value is not None:
            body[field] = value
    if args.merge_model is not None:
        body["merge_model"] = args.merge_model or None
    if args.referee is not None:
        body["referee"] = args.referee or None
    if args.points is not None:
        body["points"] = args.points
    if args.points_wait is not None:
        body["points_wait"] = typed_seconds(args.points_wait)
    if args.judge is not None:
        body["judge"] = args.judge or None
    for field in ("judge_budget", "judge_rate"):
        if getattr(args, field) is not None:
            body[field] = getattr(args, field)
    if args.blind is not None:
        body["blind"] = args.blind
    col = client.request("PUT", f"/bench/collections/{q(args.name)}", body)
    if args.json:
        emit_json(col)
    else:
        say(f"Saved bench/{col['name']}: members {', '.join(col['members']) or '(none)'}; "
            f"{plural(col['explore'], 'explore seat')}.")
    return 0


def run_delete(args, client) -> int:
    client.get(f"/bench/collections/{q(args.name)}")   # an unknown name is refused (404) before anyone is asked
    return delete_confirmed(args, client, f"Delete the collection {args.name!r}?", f"/bench/collections/{q(args.name)}",
                            f"Deleted {args.name}.")
