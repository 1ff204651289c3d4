"""bench status: what is running and where."""
from __future__ import annotations

from .catalog import held_notes
from .output import json_asked, say
from .parsers import command


def register(sub, parent) -> None:
    command(sub, parent, "status", "what is running and where", run,
            description="Show the running service: URL, version, data folder, bind address, whether an admin token "
                        "is set, whether gateway keys are enforced (and how to turn that on), and counts of endpoints, "
                        "models and collections.",
            example=("bench status", "bench status --url http://192.168.1.5:8122 --json"))


def run(args, client) -> int:
    d = client.get("/bench/status")
    if json_asked(args, d):
        return 0
    counts, keys = d.get("counts", {}), d.get("gateway_keys") or {}
    rows = [("Service", f"running ({d.get('role')}) at {client.url}"), ("Version", d.get("version")),
            ("Data folder", d.get("data_folder")), ("Listening on", d.get("bind")),
            ("Admin token", "set" if d.get("admin_token_set") else "not set"),
            ("Gateway keys", "enforced" if keys.get("enforced") else "not enforced"),
            ("Endpoints", counts.get("endpoints")), ("Models", counts.get("models")),
            ("Collections", counts.get("collections"))]
    for k, v in rows:
        say(f"{k + ':':<14}{v}")
    if keys.get("note") and not keys.get("enforced"):
        say(keys["note"])
    for problem in d.get("config_problems", []):
        say(f"Config problem: {problem}")
    held_notes(d.get("held") or [])
    store = d.get("store") or {}
    if store.get("ok") is False:
        say(f"Store failing: {store.get('error')} ({store.get('lost')} writes lost so far); free disk space, "
            "writing resumes by itself.")
        return 1
    return 0
