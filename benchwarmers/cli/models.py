"""bench models / candidates / model retire|restore|show|probe: the roster and what the endpoints serve."""
from __future__ import annotations

import time
from urllib.parse import urlencode

from ..servicelink import q
from ..words import plural
from . import catalog
from .output import confirm, json_asked, note, say, table, when
from .parsers import asks_first, command, verbs
from .suite import pct

def register(sub, parent) -> None:
    p = command(sub, parent, "models", "the roster: alias, endpoint, served name, status, facts, speed, record, suite",
                run_models,
                description="Every model on the bench, in two tables. First: alias, endpoint, served name, status "
                            "(active, resting until T, held or retired, the reason printed below) and catalog facts. "
                            "Then: the last probe, the latest speed figures (time to first token, output tokens per "
                            "second, how long ago measured), and its record over all collections with the judged "
                            "answers and claims each rate rests on, and its suite scores (a column of their own, never "
                            "mixed into the record). On a terminal, cells too wide for it are cut (…); `bench model "
                            "show ALIAS` and --json have everything.",
                example=("bench models", "bench models --find llama --json"))
    p.add_argument("--find", metavar="TEXT", help="only models whose alias, served name or endpoint contain TEXT")
    command(sub, parent, "candidates", "what each endpoint serves, marked when on the bench", run_candidates,
            description="Ask every endpoint for its model list; models already on the bench show their alias.",
            example=("bench candidates", "bench candidates --new")
            ).add_argument("--new", action="store_true", help="only models not on the bench yet")
    register_model(sub, parent)


def register_model(sub, parent) -> None:
    p = command(sub, parent, "model", "one model: retire, restore, show, probe, set, role, confirm",
                description="One model: retire it with a reason, restore it, show it with its facts and probes, probe "
                            "it now, set your own facts or roles, or confirm a new price.",
                example=("bench model retire slowpoke --reason 'times out on long prompts' --yes",
                         "bench model restore slowpoke", "bench model show slowpoke --json",
                         "bench model set slowpoke --context 32768 --no-vision"))
    under = verbs(p)
    r = command(under, parent, "retire", "take a model off the bench, with a reason (asks first)", run_retire,
                example="bench model retire slowpoke --reason 'wrong on every review' --yes")
    r.add_argument("alias")
    r.add_argument("--reason", required=True, help="why (kept with the model)")
    r.add_argument("--from-hub", action="store_true", help="also remove it from the hub it came through (never done "
                                                          "otherwise)")
    asks_first(r)
    for name, helptext, func in (("restore", "bring a retired model back once it answers a probe", run_restore),
                                 ("show", "one model with its recent probes", run_show),
                                 ("probe", "probe now; retire after a confirming failure", run_probe)):
        command(under, parent, name, helptext, func, example=f"bench model {name} slowpoke").add_argument("alias")
    catalog.register_model_verbs(under, parent)


def merged(m: dict) -> dict:
    """The facts the bench uses (every source merged), else what the endpoint's list said."""
    sourced = (m.get("catalog") or {}).get("facts")
    return {k: v["value"] for k, v in sourced.items()} if sourced else (m.get("facts") or {})


def tokens(n) -> str:
    """A token count as people say it: 32768 and 32000 -> 32k, 131072 -> 128k, 1048576 -> 1M."""
    if not isinstance(n, int) or n < 1000:
        return str(n)
    unit = 1024 if n % 1024 == 0 and n % 1000 else 1000    # windows come in round thousands or powers of two
    kilo = n / unit
    return f"{kilo:.0f}k" if kilo < 999.5 else f"{round(kilo / unit, 1):g}M"


def facts_text(facts: dict, brief: bool = False) -> str:
    """The facts that decide seating and cost in a few words (`brief`, for the roster's table: the window in
    thousands, no output cap, the price's unit in the header)."""
    shown = []
    if facts.get("context_window"):
        shown.append(f"{tokens(facts['context_window'])} ctx" if brief else f"ctx {facts['context_window']}")
    if facts.get("max_output") and not brief:
        shown.append(f"out {facts['max_output']}")
    for flag in ("vision", "tools"):
        if facts.get(flag):
            shown.append(flag)
    pin, pout = facts.get("price_in"), facts.get("price_out")
    if pin is not None and pout is not None:
        shown.append("free" if pin == 0 and pout == 0 else f"${pin:g}/${pout:g}" + ("" if brief else " per M"))
    return ", ".join(shown)


def status_word(m: dict) -> str:
    """active, held, retired, or resting to a time (the day too when it is not today)."""
    until = m.get("resting_until")
    if m["status"] != "resting" or not until:
        return m["status"]
    stamp = when(until)
    return "resting to " + (stamp[11:] if stamp[:10] == when(time.time())[:10] else stamp[5:])


def ago(epoch) -> str:
    """How long ago, in one unit: 5m, 3h (up to two days), 6d."""
    if not epoch:
        return "?"
    seconds = max(0.0, time.time() - epoch)
    if seconds < 3600:
        return f"{seconds // 60:.0f}m ago"
    return f"{seconds // 3600:.0f}h ago" if seconds < 2 * 86400 else f"{seconds // 86400:.0f}d ago"


def probe_text(p: dict | None) -> str:
    """Its outcome and age (`bench model show` has each probe's time and seconds)."""
    return f"{p['status']} {ago(p.get('created'))}" if p else "never probed"


def speed_text(perf: dict | None, brief: bool = False) -> str:
    """Time to first token and tokens per second, with the date measured (`brief`: how long ago)."""
    measured = ago(perf.get("measured")) if brief and perf else when(perf.get("measured") if perf else None)[:10]
    if not perf or perf.get("ttft") is None and perf.get("tokens_per_second") is None:
        return "never measured" if not perf else f"failed {measured}"
    ttft = f"{perf['ttft']:.2f}s" if perf.get("ttft") is not None else "?"
    tps = f"{perf['tokens_per_second']:.0f} tok/s" if perf.get("tokens_per_second") else "? tok/s"
    return f"{ttft} to 1st, {tps}, {measured}" if brief else f"{ttft} to first, {tps} ({measured})"


def record_text(r: dict | None) -> str:
    """The record in a few words, each rate with the count of judged answers or claims it rests on."""
    if not r:
        return "no calls yet"
    tools = f"tool calls failed in {r['tool_errors']}/{r['tool_turns']} turns" if r.get("tool_turns") else ""
    if not r["judged"]:
        return f"none judged of {r['asks']} asks" + (f", {tools}" if tools else "")
    parts = ["confidently wrong"] if r["judged_claims"] and r["confidently_wrong"] else []   # first: a cut keeps it
    parts.append(f"{r['useful_rate']:.0%} useful of {r['judged']} judged")
    if r.get("drop"):
        parts.append(f"lately {r['drop']['useful_rate']:.0%} of {r['drop']['judged']}")
    if r["judged_claims"]:
        parts.append(f"{r['false_claims']}/{r['judged_claims']} claims false")
    return ", ".join(parts + ([tools] if tools else []))


def run_models(args, client) -> int:
    path = "/bench/models" + (("?" + urlencode({"find": args.find})) if args.find else "")
    d = client.get(path)
    if json_asked(args, d):
        return 0
    if not d["models"]:
        note("No models match." if args.find else "No models on the bench yet. See: bench candidates --new")
        return 0
    # two tables, as one of all eight columns is twice a terminal's width: who each model is, then how it does;
    # a status's reason goes under the first, whole; on a terminal, cells still too wide are cut to fit
    models = d["models"]
    table(["ALIAS", "ENDPOINT", "SERVED", "STATUS", "FACTS (PRICE $/M IN/OUT)"],
          [[m["alias"], m["endpoint"], m["served"], status_word(m), facts_text(merged(m), brief=True)]
           for m in models], fit=True)
    for m in models:
        if m["status_text"] != status_word(m) and m["status"] != "resting":
            say(f"{m['alias']}: {m['status_text']}")
    say("")
    table(["ALIAS", "LAST PROBE", "SPEED", "RECORD", "SUITE"],
          [[m["alias"], probe_text(m.get("last_probe")), speed_text(m.get("perf"), brief=True),
            record_text(m.get("record")), suite_text(m.get("suite"))]
           for m in models], fit=True)
    return 0


def suite_text(s: dict | None) -> str:
    """The suite's scores, per purpose: kept apart from the verdicts."""
    if not s:
        return ""
    return ", ".join(f"{purpose} {pct(s[purpose]['score'])}" for purpose in ("review", "claims") if s.get(purpose))


def run_candidates(args, client) -> int:
    d = client.get("/bench/candidates" + ("?new=1" if args.new else ""))
    if json_asked(args, d):
        return 0
    for e in d.get("errors", []):
        note(f"{e['endpoint']}: {e['error']}")
    if not d["candidates"]:
        note("Nothing new on your endpoints." if args.new else "Your endpoints list no models.")
        return 1 if d.get("errors") else 0
    table(["ENDPOINT", "SERVED", "ON BENCH", "FACTS"],
          [[c["endpoint"], c["served"], c["on_bench"] or "", facts_text(merged(c))]
           for c in d["candidates"]])
    return 0


def run_retire(args, client) -> int:
    if not confirm(f"Retire the model {args.alias!r}? It leaves every panel until `bench model restore`.", args.yes):
        return 1
    d = client.post(f"/bench/models/{q(args.alias)}/retire", {"reason": args.reason,
                                                               **({"from_hub": True} if args.from_hub else {})})
    if d.get("hub") and not args.json:
        note(f"Removed from the hub of endpoint {d['hub']['endpoint']}." if d["hub"]["removed"] else
             f"The hub of endpoint {d['hub']['endpoint']} had nothing of it to remove.")
    return _one(args, d, "Retired")


def run_restore(args, client) -> int:
    note(f"Probing {args.alias} before it comes back...")
    d = client.post(f"/bench/models/{q(args.alias)}/restore", {})
    return _one(args, d, "Restored")


def _one(args, d: dict, verb: str) -> int:
    if json_asked(args, d):
        return 0
    m = d["model"]
    say(f"{verb}: {m['alias']} is now {m['status_text']}.")
    return 0


def run_show(args, client) -> int:
    d = client.get(f"/bench/models/{q(args.alias)}")
    if json_asked(args, d):
        return 0
    m = d["model"]
    for k, v in (("Alias", m["alias"]), ("Endpoint", m["endpoint"]), ("Served", m["served"]),
                 ("Status", m["status_text"]), ("Ad hoc", "yes" if m["ad_hoc"] else "no"),
                 ("Facts", facts_text(merged(m)) or "none known"), ("Added", when(m.get("added"))),
                 ("Speed", speed_text(m.get("perf"))), ("Record", record_text(m.get("record"))),
                 ("Suite", suite_text(m.get("suite")) or "not run")):
        say(f"{k + ':':<10}{v}")
    if m.get("retirement"):
        for p in m["retirement"]["evidence"].get("probes", []):
            say(f"Evidence: {p['kind']} #{p['id']} {p['status']} ({p.get('upstream_status') or p.get('error_kind')}): "
                f"{p.get('error')}")
        listing = m["retirement"]["evidence"].get("listing")
        if listing and listing.get("holds_it") is False:
            say(f"Evidence: {listing['endpoint']} listed {plural(listing['count'], 'model')}, not {m['served']}.")
    rows = catalog.fact_rows(m.get("catalog") or {})
    if rows:
        table(["FACT", "VALUE", "SOURCE"], rows)
        say(f"Roles:    {', '.join(m['catalog'].get('roles') or [])}")
    if m["probes"]:
        table(["WHEN", "KIND", "STATUS", "SECONDS", "TOKENS", "ANSWER / ERROR"],
              [[when(p["created"]), p["kind"], p["status"], p["seconds"], f"{p['input_tokens']}+{p['output_tokens']}",
                p["answer"] if p["status"] == "ok" else p["error"]] for p in m["probes"]])
    return 0


def run_probe(args, client) -> int:
    d = client.post(f"/bench/models/{q(args.alias)}/probe", {})
    if json_asked(args, d):
        return 0
    last = d.get("confirm") or d["probe"]
    say(f"{args.alias}: probe {last['status']}" + (f" ({last['error']})" if last.get("error") else
                                                   f", answered {last['answer']!r}"))
    if d["retired"]:
        say(f"Retired: {d['model']['reason']}")
    return 0 if last["status"] == "ok" else 1
