"""bench store: the record's size and what the retention would prune; `compact` prunes and gives space back,
`rebuild` makes what the record keeps (its standings, calls per day, the ledger's totals) again from the history."""
from __future__ import annotations

from .output import confirm, emit_json, json_asked, note, say, shown
from .parsers import asks_first, command, verbs


def register(sub, parent) -> None:
    s = command(sub, parent, "store", "the record's size; compact it; rebuild what it keeps",
                description="The record (bench.db in the data folder): its size, its prompt and answer text, and what "
                            "the record_keep_days setting would prune of it.",
                example=("bench store show", "bench settings set record_keep_days 90", "bench store compact --yes",
                         "bench store rebuild"))
    under = verbs(s, dest="action")
    command(under, parent, "show", "the record's size and what the retention would prune", run_show,
            example="bench store show --json")
    c = command(under, parent, "compact", "prune text older than record_keep_days, give free space back", run_compact,
                description="Prunes the prompt and answer text of calls older than record_keep_days (none while it is "
                            "0), keeping every count, verdict, claim and ledger line, then gives free pages back to "
                            "the disk, in batches that keep the disk's use near the record's size. It is refused, "
                            "before anything changes, when the disk lacks the room it needs (bench store show says how "
                            "much). --full rewrites the file (it needs twice what the record holds free, and the "
                            "service's writes wait for it).",
                example=("bench store compact --yes", "bench store compact --full --yes"))
    c.add_argument("--full", action="store_true", help="rewrite the whole file (once, on a record made before "
                                                       "incremental vacuum)")
    asks_first(c)
    command(under, parent, "rebuild", "make the kept standings and totals again from the history", run_rebuild,
            description="Makes every table the record keeps as it goes (its standings, calls per day, the ledger's "
                        "totals, the text per day) again from the calls, verdicts and ledger lines, in one "
                        "transaction: the service's writes wait for it (seconds at a million calls).",
            example="bench store rebuild")


def mb(n: int) -> str:
    return f"{n / 2 ** 20:,.1f} MB"


def show_store(d: dict) -> None:
    say(f"Record: {mb(d['bytes'])} ({mb(d['free_bytes'])} free inside it), WAL {mb(d['wal_bytes'])}; prompt and "
        f"answer text kept: {d['text_chars']:,} characters.")
    if d["keep_days"]:
        say(f"record_keep_days {d['keep_days']}: compacting now would prune {d['would_prune_chars']:,} of them.")
    else:
        say("record_keep_days is 0: all text is kept (bench settings set record_keep_days N prunes text older "
            "than N days).")
    room = d.get("room")
    if room:
        short = "" if room["enough"] else ": too little, compaction is refused until space is freed"
        say(f"Free disk: {mb(room['free_bytes'])}; a compaction needs {mb(room['needed_bytes'])}{short}.")


def run_show(args, client) -> int:
    return shown(args, client.get("/bench/store"), show_store)


def run_compact(args, client) -> int:
    d = client.get("/bench/store")
    if d["keep_days"] and d["would_prune_chars"] and not confirm(
            f"Prune {d['would_prune_chars']:,} characters of prompt and answer text older than {d['keep_days']} "
            "days? Counts, verdicts and the ledger stay.", args.yes):
        return 1
    done = client.post("/bench/store/compact", {"full": args.full})
    if json_asked(args, done):
        return 0
    note(f"Pruned the text of {done['pruned_calls']:,} calls and {done['pruned_panels']:,} panels; gave back "
         f"{mb(done['freed_bytes'])} in {done['seconds']} s.")
    for n in done.get("notes") or []:
        note(f"Note: {n}.")
    show_store(done["store"])
    return 0


def run_rebuild(args, client) -> int:
    done = client.post("/bench/store/rebuild", {})
    emit_json(done) if args.json else note(f"Rebuilt what the record keeps in {done['seconds']} s.")
    return 0
