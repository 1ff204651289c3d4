"""bench onboard: put models on the service's onboarding queue, list it, and follow items to the end."""
from __future__ import annotations

import sys
import time

from ..servicelink import CommandError
from . import terminal
from .output import emit_json, for_terminal, note, say, table, write
from .parsers import command

POLL = 0.5
FINISHED = ("done", "failed")
UNFINISHED = 1000          # the most recent items --wait without names looks through (the API's largest page)


def register(sub, parent) -> None:
    p = command(sub, parent, "onboard", "queue models to register, probe and score", run_onboard,
                description="Put models on the onboarding queue: the service finds the endpoint serving each name, "
                            "probes it with a one-word prompt, times a few dozen tokens (so its panels ask it for what "
                            "it writes in panel_seconds) and registers it only if it answers. Models onboard one at a "
                            "time, in order. The command returns the queue ids at once; --wait follows them to the end "
                            "(a live line per model on a terminal, plain lines otherwise). Without names it lists the "
                            "queue, and with --wait follows every item still queued or running. By default each model "
                            "then runs the suite (one call per suite item, paced), and its line ends with the scores; "
                            "--quick records a suite run the model owes instead, which the scheduler's suite job "
                            "plays; --ad-hoc is quick, and the bench never calls the model unprompted (pay-per-use or "
                            "trial keys), so it is not timed and owes none.",
                example=("bench onboard openai/gpt-4o-mini qwen/qwen3-coder:free --quick --wait",
                         "bench onboard llama3.2 --endpoint local --alias llama",
                         "bench onboard some/paid-model --ad-hoc",
                         "bench onboard          (the queue)", "bench onboard --wait   (follow what is queued)"))
    p.add_argument("served", nargs="*", metavar="SERVED_NAME",
                   help="each model's name as its endpoint serves it (a name without a tag also finds its :latest)")
    p.add_argument("--endpoint", help="which endpoint serves them (needed when several serve a name)")
    p.add_argument("--via", metavar="SOURCE", help="for a hub endpoint that does not list the model yet: the hub's "
                   "source it is added from (a provider such as openrouter, or the hub's name for it)")
    p.add_argument("--alias", help="what users will type (one model only; default: a readable unique name)")
    p.add_argument("--quick", action="store_true", help="probe and time now; record a suite run the model owes (no "
                   "suite now)")
    p.add_argument("--ad-hoc", action="store_true", help="quick, and never called by the bench on its own")
    p.add_argument("--wait", action="store_true", help="follow the models until each is done or failed")


def run_onboard(args, client) -> int:
    if not args.served:
        return follow_queue(args, client) if args.wait else show_queue(args, client)
    if args.alias and len(args.served) > 1:
        raise CommandError("--alias names one model; onboard the others without it.", 2)
    body = {"models": args.served, "mode": "adhoc" if args.ad_hoc else "quick" if args.quick else "full"}
    body.update({k: v for k, v in (("endpoint", args.endpoint), ("alias", args.alias), ("via", args.via)) if v})
    items = client.post("/bench/onboard", body)["items"]
    if not args.wait:
        if args.json:
            emit_json({"items": items})
        else:
            table(["ID", "MODEL", "MODE", "STATE"], [[i["id"], i["served"], i["mode"], i["state"]] for i in items])
            note("Queued; follow them with: bench onboard --wait, or list the queue with: bench onboard")
        return 0
    return report(args, follow(client, [i["id"] for i in items]))


def follow_queue(args, client) -> int:
    """--wait without names: follow every item still queued or running (the queue plays them oldest first, so
    they are among its newest)."""
    items = client.get(f"/bench/onboard?limit={UNFINISHED}")["items"]
    ids = sorted(i["id"] for i in items if i["state"] not in FINISHED)
    if not ids:
        if args.json:
            emit_json({"items": []})
        else:
            note("Nothing on the queue is waiting or running. List it with: bench onboard")
        return 0
    return report(args, follow(client, ids))


def report(args, items: list[dict]) -> int:
    if args.json:
        emit_json({"items": items})
    else:
        for item in items:
            say(outcome(item))
    return 0 if all(i["state"] == "done" for i in items) else 1


def show_queue(args, client) -> int:
    items = client.get("/bench/onboard?limit=20")["items"]
    if args.json:
        emit_json({"items": items})
    elif not items:
        note("Nothing has been queued yet. Queue models with: bench onboard NAME ... (see bench candidates --new)")
    else:
        table(["ID", "MODEL", "MODE", "STATE", "DETAIL"],
              [[i["id"], i["served"], i["mode"], i["state"], detail(i)] for i in items])
    return 0


def detail(item: dict) -> str:
    if item["state"] == "done":
        return f"as {item['model']}"
    return item.get("reason") or ""


def outcome(item: dict) -> str:
    if item["state"] == "done":
        return f"Onboarded {item['model']} ({item['served']}); suite {item['suite']}"
    if item["state"] == "failed":
        return f"Failed {item['served']}: {item['reason']}"
    return f"Still {item['state']}: {item['served']} (item {item['id']}); follow it with bench onboard --wait"


def progress_line(item: dict) -> str:
    text = f"#{item['id']:<4} {item['served']:<40} {item['state']}"
    if item["state"] == "suite" and item.get("progress"):
        text += f" {item['progress']['done']}/{item['progress']['total']}"
    return text + (f": {detail(item)}" if item["state"] in FINISHED and detail(item) else "")


def follow(client, ids: list[int]) -> list[dict]:
    """Poll the queue until every item finished (or BENCHWARMERS_TIMEOUT passed), showing progress on stderr."""
    live = terminal.can_redraw(sys.stderr)
    deadline = time.monotonic() + client.timeout
    shown: dict[int, str] = {}
    path = "/bench/onboard?ids=" + ",".join(str(i) for i in ids)
    while True:
        items = client.get(path)["items"]
        lines = [for_terminal(progress_line(i), sys.stderr) for i in items]   # a reason may quote an upstream
        if live:
            if shown:
                sys.stderr.write(f"\x1b[{len(shown)}F")     # back to the first line, then redraw each
            sys.stderr.write("".join(f"\x1b[2K{line}\n" for line in lines))
            shown = {i["id"]: line for i, line in zip(items, lines)}
        else:
            for item, line in zip(items, lines):
                if shown.get(item["id"]) != item["state"]:
                    write(line + "\n", sys.stderr)
                    shown[item["id"]] = item["state"]
        sys.stderr.flush()
        if all(i["state"] in FINISHED for i in items) or time.monotonic() > deadline:
            return items
        time.sleep(POLL)
