"""bench catalog [refresh] / discover / model set|role|confirm: the catalog, models worth adding, your own facts."""
from __future__ import annotations

import argparse
import os
from urllib.parse import urlencode

from ..servicelink import q
from ..words import plural
from .output import json_asked, note, say, shell_line, table
from .parsers import command, verbs

def register(sub, parent) -> None:
    p = command(sub, parent, "catalog", "the catalog copies in use; refresh them", run_show,
                description="Where model facts come from: each source's copy in use (shipped with the package or "
                            "fetched), its date, how many models it lists and the last fetch. `refresh` fetches "
                            "models.dev and OpenRouter's list now (no key is sent); a fetch that fails keeps the last "
                            "good copy.",
                example=("bench catalog", "bench catalog refresh", "bench catalog --json"))
    command(verbs(p, refuse=False), parent, "refresh", "fetch every source now", run_refresh,
            example="bench catalog refresh")
    d = command(sub, parent, "discover", "models worth adding, with your routes to them", run_discover,
                description="Free or cheap, capable, recent models from models.dev and FreeLLMAPI, each with the "
                            "endpoints of this install that serve it (and the command that onboards it), or the "
                            "provider to add when there is no route yet.",
                example=("bench discover --free --tools", "bench discover --min-context 128000 --find qwen",
                         "bench discover --vision --json"))
    for name, words in (("free", "only free models (price 0 or a free tier)"), ("tools", "only models that call tools"),
                        ("vision", "only models that read images")):
        d.add_argument(f"--{name}", action="store_true", help=words)
    d.add_argument("--min-context", type=int, default=0, metavar="N", help="only windows of at least N tokens")
    d.add_argument("--find", metavar="TEXT", help="only models whose id, name or provider contain TEXT")
    d.add_argument("--limit", type=int, default=40, metavar="N", help="show at most N (default 40)")


def register_model_verbs(verbs, parent) -> None:
    """`bench model set|role|confirm`, added to the `model` command."""
    s = command(verbs, parent, "set", "your own facts for a model (they beat every catalog)", run_set,
                example=("bench model set llama --context 32768 --no-vision",
                         "bench model set mini --price-in 0.15 --price-out 0.6",
                         "bench model set mini --clear price_in --clear price_out"))
    s.add_argument("alias")
    s.add_argument("--context", type=int, metavar="N", help="context window in tokens")
    s.add_argument("--max-output", type=int, metavar="N", help="output cap in tokens")
    s.add_argument("--vision", action=argparse.BooleanOptionalAction, help="reads images (or not)")
    s.add_argument("--tools", action=argparse.BooleanOptionalAction, help="calls tools (or not)")
    s.add_argument("--price-in", type=float, metavar="USD", help="dollars per million input tokens")
    s.add_argument("--price-out", type=float, metavar="USD", help="dollars per million output tokens")
    s.add_argument("--clear", action="append", default=[], metavar="FACT",
                   help="go back to the catalog for FACT (context_window, max_output, vision, tools, price_in, "
                        "price_out, reasoning); repeatable")
    r = command(verbs, parent, "role", "set a model's roles (or --auto: from its facts)", run_role,
                description="Roles: general, code, light, vision-only, image, reasoning. Explore seats go only to "
                            "models whose roles fit the collection's purpose.",
                example=("bench model role coder code reasoning", "bench model role coder --auto"))
    r.add_argument("alias")
    r.add_argument("roles", nargs="*", metavar="ROLE")
    r.add_argument("--auto", action="store_true", help="forget the roles you set; use the ones its facts give")
    command(verbs, parent, "confirm", "accept the new price of a held model", run_confirm,
            description="A free model that turned paid is held (not seated, not probed) until you confirm; "
                        "`bench status` lists held models.",
            example="bench model confirm kimi-free").add_argument("alias")


def when(text) -> str:
    return str(text or "")[:10]


def run_show(args, client) -> int:
    d = client.get("/bench/catalog")
    if json_asked(args, d):
        return 0
    rows = []
    for s in d["sources"]:
        fetch = s.get("fetch") or {}
        last = "ok" if fetch.get("ok") else f"failed: {fetch.get('error')}" if fetch else \
            ("never" if s.get("fetched_from") else "never: it ships with the package")
        rows.append([s["source"], s.get("from") or "none", when(s.get("date")), s.get("models", 0), last])
    table(["SOURCE", "COPY", "DATE", "MODELS", "LAST FETCH"], rows)
    held_notes(d.get("held") or [])
    return 0


def held_notes(held: list) -> None:
    for h in held:
        say(f"Held: {h['model']}: {h['reason']}. `bench model confirm {h['model']}` accepts it.")


def run_refresh(args, client) -> int:
    note("Fetching models.dev and OpenRouter's model list...")
    d = client.post("/bench/catalog/refresh", {})
    if json_asked(args, d):
        return 0
    for name, r in d["sources"].items():
        say(f"{name}: " + (f"fetched, {plural(r['models'], 'model')}" if r["ok"] else
                           f"failed ({r['error']}); kept {r['kept']}"))
    held_notes(d.get("held") or [])
    return 0 if all(r["ok"] for r in d["sources"].values()) else 1


def price_text(item: dict) -> str:
    f = item["facts"]
    if item["free"]:
        return "free"
    return f"${f.get('price_in', 0):g}/${f.get('price_out', 0):g}"


def run_discover(args, client) -> int:
    query = {k: v for k, v in (("free", args.free), ("tools", args.tools), ("vision", args.vision),
                               ("min_context", args.min_context), ("find", args.find), ("limit", args.limit)) if v}
    query = {k: (1 if v is True else v) for k, v in query.items()}
    d = client.get("/bench/discover" + ("?" + urlencode(query) if query else ""))
    if json_asked(args, d):
        return 0
    if not d["models"]:
        note("Nothing matches. Fewer filters, or `bench catalog refresh` for a newer list.")
        return 0
    rows = []
    for m in d["models"]:
        f = m["facts"]
        can = ",".join(k for k in ("tools", "vision", "reasoning") if f.get(k))
        route = ", ".join(r["endpoint"] + (f" (on bench: {r['on_bench']})" if r["on_bench"] else "")
                          for r in m["routes"]) or no_route(m)
        rows.append([m["model"], m["provider"], price_text(m), f.get("context_window") or "", can, route])
    table(["MODEL", "PROVIDER", "PRICE $/M", "CONTEXT", "CAN", "ROUTE"], rows)
    next_steps(d["models"])
    if d["total"] > len(d["models"]):
        note(f"{d['total'] - len(d['models'])} more: --limit, or narrow with --find.")
    return 0


def no_route(m: dict) -> str:
    if m.get("unlisted"):
        return f"no route: {', '.join(m['unlisted'])} does not list it"
    return f"no route yet: add {m['no_route']['name']}"


def next_steps(models: list) -> None:
    """The next command to type, quoted for this system's shell (a catalog's model id or URL may hold anything)."""
    routed = [pasteable(r.get("onboard_argv"), r.get("onboard")) for m in models for r in m["routes"]
              if not r["on_bench"]]
    unrouted = [pasteable(m["no_route"].get("argv"), m["no_route"].get("command")) for m in models
                if m["no_route"] and not m.get("unlisted")]
    onboard, add = [x for x in routed if x], list(dict.fromkeys(x for x in unrouted if x))
    if onboard:
        note("To queue one for onboarding: " + onboard[0] + (f"  ({len(onboard)} routed models are not on the "
                                                               "bench yet)" if len(onboard) > 1 else ""))
        note("It returns at once; `bench onboard` lists the queue, and --wait follows the model to the end.")
    if add:
        note("To add a provider: " + add[0] + (f"  (or one of {len(add) - 1} more)" if len(add) > 1 else ""))


def pasteable(argv: list | None, line: str | None) -> str | None:
    """The command for this system's shell, from its words (a service before they were given: its POSIX line)."""
    return shell_line(argv) if isinstance(argv, list) else (line if os.name != "nt" else None)


def run_set(args, client) -> int:
    body = {k: v for k, v in (("context_window", args.context), ("max_output", args.max_output),
                              ("vision", args.vision), ("tools", args.tools), ("price_in", args.price_in),
                              ("price_out", args.price_out)) if v is not None}
    body.update({fact: None for fact in args.clear})
    if not body:
        note("Say which facts to set, e.g. --context 32768 --no-vision (see --help).")
        return 2
    d = client.request("PUT", f"/bench/models/{q(args.alias)}/facts", body)
    return show_facts(args, d)


def run_role(args, client) -> int:
    if bool(args.roles) == bool(args.auto):
        note("Give the roles (e.g. code reasoning) or --auto, not both.")
        return 2
    d = client.request("PUT", f"/bench/models/{q(args.alias)}/roles", {"roles": None if args.auto else args.roles})
    return show_facts(args, d)


def run_confirm(args, client) -> int:
    d = client.post(f"/bench/models/{q(args.alias)}/confirm", {})
    if json_asked(args, d):
        return 0
    say(f"Confirmed: {d['confirmed']} is seated and probed again ({d['was']['reason']}).")
    return 0


def fact_rows(catalog: dict) -> list[list]:
    return [[name, fact["value"], fact["source"]] for name, fact in catalog.get("facts", {}).items()]


def show_facts(args, d: dict) -> int:
    if json_asked(args, d):
        return 0
    m = d["model"]
    c = m.get("catalog") or {}
    table(["FACT", "VALUE", "SOURCE"], fact_rows(c))
    chosen = "set by you" if c.get("roles_set_by") == "user" else "from its facts"
    say(f"Roles: {', '.join(c.get('roles') or [])} ({chosen})")
    return 0
