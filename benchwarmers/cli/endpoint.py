"""bench endpoint add/list/test/remove: connections to upstream APIs; keys only by prompt or stdin, never shown."""
from __future__ import annotations

import argparse
import getpass
import sys

from ..hubs import CHOICES as HUB_CHOICES, KINDS as HUBS
from ..roster.registry import APIS
from ..servicelink import CommandError, q
from ..words import plural
from . import terminal
from .output import confirm, json_asked, note, say, table
from .parsers import asks_first, command, verbs

NO_KEY_ARGS = ("Keys are never command-line arguments (they would stay in your shell history and process list).\n"
               "Let `bench endpoint add` prompt for it, or pipe it: "
               "bench endpoint add NAME --base URL --key-stdin < keyfile")


def register(sub, parent) -> None:
    p = command(sub, parent, "endpoint", "add, list or remove endpoints (upstream connections)",
                description="Endpoints are a base URL plus a protocol. Keys live in the environment "
                            "(BENCHWARMERS_KEY_<NAME>) or the llm CLI's keys.json, never in the data folder.",
                example=("bench endpoint add openrouter --base https://openrouter.ai/api/v1",
                         "bench endpoint add local --base http://localhost:11434 --api ollama --no-key",
                         "bench endpoint list", "bench endpoint remove local --yes"))
    under = verbs(p)
    register_add(under, parent)
    command(under, parent, "list", "each endpoint, its API, model count and key source", run_list,
            description="Each endpoint with its protocol, base URL, models on the bench, models it served when last "
                        "checked, and where its key comes from (never the key).",
            example="bench endpoint list --json")
    command(under, parent, "test", "list an endpoint's models now, with its key", run_test,
            description="Check an endpoint: list its models with its key now. The count and the time are kept beside "
                        "it (bench endpoint list shows them).",
            example="bench endpoint test openrouter").add_argument("name")
    rm = command(under, parent, "remove", "remove an endpoint (asks first)", run_remove,
                 description="Remove an endpoint. Its active models are retired (restorable once it is added back); "
                             "its key stays in keys.json, shared with the llm CLI.",
                 example="bench endpoint remove local --yes")
    rm.add_argument("name")
    asks_first(rm)


def register_add(under, parent) -> None:
    """`bench endpoint add`: its key never an argument (prompted, or read from stdin)."""
    add = command(under, parent, "add", "add an endpoint, checked by listing its models", run_add,
                  description="Add an endpoint. The key is prompted for without echo (or read from stdin with "
                              "--key-stdin) and stored in the llm CLI's keys.json. The endpoint is checked by listing "
                              "its models before anything is saved.",
                  example=("bench endpoint add openrouter --base https://openrouter.ai/api/v1",
                           "printf %s \"$KEY\" | bench endpoint add claude --base https://api.anthropic.com "
                           "--api anthropic --key-stdin",
                           "bench endpoint add local --base http://localhost:11434 --api ollama --no-key",
                           "bench endpoint add myhub --base http://localhost:4000/v1 --hub litellm"))
    add.add_argument("name", help="a short name: letters, digits, '.', '_' or '-'")
    add.add_argument("extra", nargs="*", help=argparse.SUPPRESS)   # caught: a key typed as an argument
    add.add_argument("--base", required=True, metavar="URL", help="the base URL (OpenAI-compatible: up to /v1)")
    add.add_argument("--api", choices=APIS, default="openai", help="the protocol (default openai)")
    add.add_argument("--key-stdin", action="store_true", help="read the key from the first line of stdin")
    add.add_argument("--no-key", action="store_true", help="a local server that takes no key")
    add.add_argument("--replace", action="store_true", help="replace an endpoint of the same name")
    add.add_argument("--hub", choices=tuple(HUBS), help="a hub that takes new models through its admin API: its "
                     "admin key is prompted for apart from the API key (kept in keys.json as NAME.admin)")
    add.add_argument("--admin-key-stdin", action="store_true",
                     help="with --hub: read the admin key from stdin (the line after the key with --key-stdin)")
    add.add_argument("--keep-key", action="store_true",
                     help="with --replace and a new base URL: send the stored key to the new URL (else give it again)")
    add.add_argument("--allow-link-local", action="store_true",
                     help="a base URL at a link-local or cloud metadata address (169.254.x.x, fe80::, fd00:ec2::254):"
                          " refused without this, as its key and requests would go there")
    add.add_argument("--key", nargs="?", const="", default=None, dest="key_arg", help=argparse.SUPPRESS)


def read_key(args) -> str | None:
    """The key from stdin or a no-echo prompt; None lets the service use its environment or keys.json."""
    if args.no_key:
        return None
    if args.key_stdin:
        return terminal.read_line().strip() or None
    if sys.stdin and sys.stdin.isatty():
        return getpass.getpass(f"Key for {args.name} (input hidden; Enter to use its environment variable "
                               "or keys.json): ").strip() or None
    return None


def read_admin_key(args) -> str | None:
    """A hub's admin key from stdin or a no-echo prompt; None lets the service use keys.json or the environment."""
    if args.admin_key_stdin:
        return terminal.read_line().strip() or None
    if sys.stdin and sys.stdin.isatty():
        return getpass.getpass(f"Admin key for hub {args.name} (input hidden; Enter to use the one kept): ").strip() \
            or None
    return None


def run_add(args, client) -> int:
    if args.extra or args.key_arg is not None:
        raise CommandError(NO_KEY_ARGS, 2)
    if args.no_key and args.key_stdin:
        raise CommandError("--no-key and --key-stdin contradict each other; pick one.", 2)
    body = {"name": args.name, "base_url": args.base, "api": args.api, "no_key": args.no_key,
            "replace": args.replace, "keep_key": args.keep_key}
    if args.allow_link_local:
        body["allow_link_local"] = True
    key = read_key(args)
    if key:
        body["key"] = key
    if args.hub:
        body["hub"] = args.hub
        admin = read_admin_key(args)
        if admin:
            body["admin_key"] = admin
    elif args.admin_key_stdin:
        raise CommandError(f"--admin-key-stdin is for a hub: add --hub {HUB_CHOICES}.", 2)
    d = client.post("/bench/endpoints", body)
    if json_asked(args, d):
        return 0
    e = d["endpoint"]
    source = e.get("key_source")
    key = f"key from {source}" if source and source != "none" else "no key"
    serves = plural(e.get("served_count"), "model")
    say(f"Added endpoint {e['name']} ({e['api']}, {e['base_url']}): serves {serves}; {key}.")
    note("Next: bench candidates --new   then   bench onboard SERVED_NAME")
    return 0


def run_list(args, client) -> int:
    d = client.get("/bench/endpoints")
    if json_asked(args, d):
        return 0
    rows = [[e["name"], e["api"], e["base_url"], e["models"], e.get("served_count") or "?", key_text(e)]
            for e in d["endpoints"]]
    if not rows:
        note("No endpoints yet. Add one: bench endpoint add NAME --base URL")
        return 0
    table(["NAME", "API", "BASE URL", "ON BENCH", "SERVES", "KEY FROM"], rows)
    return 0


def key_text(e: dict) -> str:
    source = e.get("key_source")
    if source == "none":
        return "no key (local)"
    if source == "missing":
        return f"missing: set {e.get('key_env')}"
    return str(source)


def run_test(args, client) -> int:
    d = client.post(f"/bench/endpoints/{q(args.name)}/test", {})
    if json_asked(args, d):
        return 0
    e = d["endpoint"]
    say(f"Endpoint {e['name']} answers: it serves {plural(e['served_count'], 'model')} "
        f"(e.g. {', '.join(e['sample'][:3])}).")
    return 0


def run_remove(args, client) -> int:
    found = {e["name"]: e for e in client.get("/bench/endpoints")["endpoints"]}
    if args.name not in found:
        raise CommandError(f"No endpoint named {args.name!r}. Known: {', '.join(sorted(found)) or 'none'}.")
    active = found[args.name].get("active_models") or 0
    question = f"Remove endpoint {args.name!r}" + (f" and retire its {active} active models?" if active else "?")
    if not confirm(question, args.yes):
        return 1
    d = client.delete(f"/bench/endpoints/{q(args.name)}")
    if json_asked(args, d):
        return 0
    say(f"Removed endpoint {d['removed']}." + (f" Retired: {', '.join(d['retired'])}." if d["retired"] else ""))
    if d.get("note"):
        note(d["note"])
    return 0
