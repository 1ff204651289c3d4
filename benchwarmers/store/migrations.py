"""Numbered schema migrations, each recorded in the same transaction as its change."""
from __future__ import annotations

import logging
import sqlite3
import time
from typing import Callable

from . import bestpicks, blindkept, compaction, judgestore, ledgerkept, pointstore, spend, standings

log = logging.getLogger("benchwarmers.store")

MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "calls, verdicts and probes", """
        CREATE TABLE calls (
            id TEXT PRIMARY KEY, panel TEXT, collection TEXT, model TEXT NOT NULL, endpoint TEXT, served TEXT,
            kind TEXT, mode TEXT, seat INTEGER, status TEXT NOT NULL, error TEXT,
            request TEXT, prompt_hash TEXT, answer TEXT,
            ttft REAL, seconds REAL, input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
            caller TEXT, created REAL NOT NULL, extra TEXT);
        CREATE INDEX calls_collection ON calls (collection, created);
        CREATE INDEX calls_model ON calls (model, created);
        CREATE INDEX calls_panel ON calls (panel);
        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY, call TEXT NOT NULL REFERENCES calls(id), useful INTEGER NOT NULL,
            note TEXT, real TEXT, false TEXT, created REAL NOT NULL, current INTEGER NOT NULL DEFAULT 1);
        CREATE INDEX verdicts_call ON verdicts (call, current);
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY, model TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, answer TEXT,
            error TEXT, seconds REAL, ttft REAL, input_tokens INTEGER, output_tokens INTEGER, created REAL NOT NULL);
        CREATE INDEX probes_model ON probes (model, created);
    """),
    # Read by the service: ratelimits (what rests on a rate limit; keyed per model by migration 10), pins (route
    # mode), gateway_keys, jobs (the scheduler's runs), panels (one row per panel: the history of asks), usage (the
    # ledger of every call sent: its totals, and the counts the user's rate limits are enforced by).
    (2, "panels, usage ledger, rate limits, pins, jobs and gateway keys", """
        CREATE TABLE panels (
            id TEXT PRIMARY KEY, collection TEXT, mode TEXT, seats INTEGER, caller TEXT, created REAL NOT NULL);
        CREATE TABLE usage (
            id INTEGER PRIMARY KEY, month TEXT NOT NULL, endpoint TEXT, model TEXT, call TEXT,
            input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, created REAL NOT NULL);
        CREATE INDEX usage_month ON usage (month, endpoint);
        CREATE TABLE ratelimits (
            endpoint TEXT PRIMARY KEY, facts TEXT, resting_until REAL, updated REAL NOT NULL);
        CREATE TABLE pins (
            key TEXT PRIMARY KEY, collection TEXT NOT NULL, model TEXT NOT NULL, created REAL NOT NULL,
            last_used REAL NOT NULL, turns INTEGER DEFAULT 0);
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY, name TEXT NOT NULL, started REAL NOT NULL, finished REAL, status TEXT, detail TEXT);
        CREATE TABLE gateway_keys (
            name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, prefix TEXT, collections TEXT NOT NULL, rpm INTEGER,
            created REAL NOT NULL, revoked REAL);
    """),
    (3, "suite runs and results", """
        CREATE TABLE suite_runs (
            id INTEGER PRIMARY KEY, model TEXT NOT NULL, tasks TEXT, status TEXT NOT NULL, reason TEXT,
            total INTEGER DEFAULT 0, done INTEGER DEFAULT 0, failed INTEGER DEFAULT 0, error TEXT,
            created REAL NOT NULL, started REAL, finished REAL, lease_until REAL);
        CREATE INDEX suite_runs_status ON suite_runs (status, created);
        CREATE TABLE suite_results (
            id INTEGER PRIMARY KEY, run INTEGER NOT NULL REFERENCES suite_runs(id), model TEXT NOT NULL,
            task TEXT NOT NULL, variant TEXT NOT NULL, purpose TEXT NOT NULL, task_hash TEXT, outcome TEXT NOT NULL,
            correct INTEGER, confidence REAL, parse TEXT, flagged TEXT, call TEXT, answer TEXT, error TEXT,
            seconds REAL, created REAL NOT NULL);
        CREATE UNIQUE INDEX suite_results_item ON suite_results (run, task, variant);
        CREATE INDEX suite_results_model ON suite_results (model, task, variant, created);
    """),
    (4, "scheduler: job runs with their window and counts, leases, when each job's schedule began", """
        ALTER TABLE jobs ADD COLUMN trigger TEXT;
        ALTER TABLE jobs ADD COLUMN due REAL;
        ALTER TABLE jobs ADD COLUMN models INTEGER;
        ALTER TABLE jobs ADD COLUMN calls INTEGER;
        ALTER TABLE jobs ADD COLUMN outcome TEXT;
        ALTER TABLE jobs ADD COLUMN holder TEXT;
        CREATE UNIQUE INDEX jobs_window ON jobs (name, due) WHERE due IS NOT NULL;
        CREATE INDEX jobs_started ON jobs (started);
        CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, run INTEGER, until REAL NOT NULL);
        CREATE TABLE schedule (job TEXT PRIMARY KEY, since REAL NOT NULL);
    """),
    (5, "health evidence: probe fault kinds and status codes, speed figures, endpoint flags, retirements", """
        ALTER TABLE probes ADD COLUMN error_kind TEXT;
        ALTER TABLE probes ADD COLUMN upstream_status INTEGER;
        CREATE TABLE perf (
            id INTEGER PRIMARY KEY, model TEXT NOT NULL, prompt TEXT NOT NULL, status TEXT NOT NULL, ttft REAL,
            seconds REAL, input_tokens INTEGER, output_tokens INTEGER, tokens_per_second REAL, error TEXT,
            job INTEGER, created REAL NOT NULL);
        CREATE INDEX perf_model ON perf (model, created);
        CREATE TABLE endpoint_flags (endpoint TEXT PRIMARY KEY, flag TEXT NOT NULL, detail TEXT, since REAL NOT NULL);
        CREATE TABLE retirements (
            id INTEGER PRIMARY KEY, model TEXT NOT NULL, reason TEXT, evidence TEXT, created REAL NOT NULL);
        CREATE INDEX retirements_model ON retirements (model, created);
    """),
    (6, "the onboarding queue", """
        CREATE TABLE onboard_queue (
            id INTEGER PRIMARY KEY, served TEXT NOT NULL, endpoint TEXT, alias TEXT, mode TEXT NOT NULL,
            state TEXT NOT NULL, reason TEXT, error TEXT, model TEXT, suite TEXT,
            attempts INTEGER NOT NULL DEFAULT 0, owner TEXT, heartbeat REAL,
            created REAL NOT NULL, started REAL, finished REAL);
        CREATE INDEX onboard_queue_state ON onboard_queue (state, id);
    """),
    # An upstream that streams without usage (llama.cpp) leaves the token counts to our estimate: the call and
    # its ledger line say so, so totals can tell measured tokens from estimated ones.
    (7, "estimated token counts", """
        ALTER TABLE calls ADD COLUMN tokens_estimated INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
    """),
    (8, "onboarding's suite step: the progress of an item's suite run", """
        ALTER TABLE onboard_queue ADD COLUMN progress TEXT;
    """),
    # Who asked, for the answers still waiting for a verdict: `caller` (the gateway key) was there from the start;
    # `session` is the MCP session (or a client's X-Bench-Session) that asked, for callers without a key.
    (9, "the session that asked each call; indexes to find a caller's calls", """
        ALTER TABLE calls ADD COLUMN session TEXT;
        CREATE INDEX calls_caller ON calls (caller, created);
        CREATE INDEX calls_session ON calls (session, created);
    """),
    # A rate limit rests what it names: one model, or (model '') the whole connection.
    (10, "rate limits per model", """
        CREATE TABLE ratelimits_by_model (
            endpoint TEXT NOT NULL, model TEXT NOT NULL DEFAULT '', facts TEXT, resting_until REAL,
            updated REAL NOT NULL, PRIMARY KEY (endpoint, model));
        INSERT INTO ratelimits_by_model (endpoint, model, facts, resting_until, updated)
            SELECT endpoint, '', facts, resting_until, updated FROM ratelimits;
        DROP TABLE ratelimits;
        ALTER TABLE ratelimits_by_model RENAME TO ratelimits
    """),
    # The explore candidates a panel could not seat, each {model, reason} (JSON), for the ask's page.
    (11, "why explore candidates were passed over, kept with each panel", """
        ALTER TABLE panels ADD COLUMN passed_over TEXT;
    """),
    # The usage ledger gets the cuts its totals are made by (seat kind, collection), cached tokens, the cost at the
    # price known when the call was made (NULL: none known), and whether the scheduler made the call. Its lines are
    # the calls sent upstream: a seat skipped before sending is none (older ledgers held a line for each).
    (12, "the usage ledger: seat kind, collection, cached tokens, cost, scheduled calls", """
        ALTER TABLE usage ADD COLUMN kind TEXT;
        ALTER TABLE usage ADD COLUMN collection TEXT;
        ALTER TABLE usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage ADD COLUMN cost REAL;
        ALTER TABLE usage ADD COLUMN scheduled INTEGER NOT NULL DEFAULT 0;
        UPDATE usage SET kind = (SELECT c.kind FROM calls c WHERE c.id = usage.call),
            collection = (SELECT c.collection FROM calls c WHERE c.id = usage.call) WHERE call IS NOT NULL;
        DELETE FROM usage WHERE call IN (SELECT id FROM calls WHERE status = 'skipped');
        CREATE INDEX usage_created ON usage (created)
    """),
    # The waiting-for-a-verdict list leaves out the suite's own asks (its ledger lines say so), looked up by call.
    (13, "the usage ledger found by call", """
        CREATE INDEX usage_call ON usage (call)
    """),
    # Each index a row is in costs a page written with every commit. Most calls name no caller (no gateway key) and
    # no session, and only the suite's ledger lines are looked up by call: those indexes hold just the rows they serve.
    (14, "partial indexes on caller, session and the suite's ledger lines", """
        DROP INDEX calls_caller;
        CREATE INDEX calls_caller ON calls (caller, created) WHERE caller IS NOT NULL;
        DROP INDEX calls_session;
        CREATE INDEX calls_session ON calls (session, created) WHERE session IS NOT NULL;
        DROP INDEX usage_call;
        CREATE INDEX usage_call ON usage (call) WHERE kind = 'suite'
    """),
    # A panel's seats (and its merge) were asked the same thing: what was asked is kept once, in the panel's row, not
    # in each seat's (five copies of a long prompt were most of what a panel wrote). Older calls keep their own.
    (15, "what a panel was asked, kept once", """
        ALTER TABLE panels ADD COLUMN request TEXT
    """),
    # Why each answer ended (stop, length: cut at its output cap, ...), and asks set aside as only tests: their
    # answers no longer wait for a verdict.
    (16, "finish reasons; asks set aside", """
        ALTER TABLE calls ADD COLUMN finish_reason TEXT;
        ALTER TABLE panels ADD COLUMN set_aside REAL
    """),
    # An item onboarding a model through a hub says which of the hub's sources the model comes from (a catalog
    # provider id or the hub's own name for the source); null for every other item.
    (17, "the hub source of an onboarding item", """
        ALTER TABLE onboard_queue ADD COLUMN via TEXT
    """),
    # The record kept, not recomputed (store/standings.py): per model and collection its counts, latest answer times
    # and latest judged answers, and calls per day; made from the history once here (STEPS), then kept by each write.
    (18, "the record kept: standings, judged windows, calls per day", standings.SCHEMA),
    # The ledger's totals per month and cut, and per UTC day, kept as lines are written (store/ledgerkept.py); an
    # explore seat's line is found by its call (a verdict on it changes the month's judged explore seats).
    (19, "the usage ledger's totals kept; explore seats' lines indexed by call", ledgerkept.SCHEMA),
    # What still needs a query gets an index that serves it: the history and the Calls list newest first (keyset
    # pages on (created, id)), route turns by time, and the turn a shadow seat belongs to as a column of its own.
    (20, "indexes on time for calls, panels and route turns; a shadow's turn as a column", """
        ALTER TABLE calls ADD COLUMN turn TEXT;
        UPDATE calls SET turn = json_extract(extra, '$.turn') WHERE kind = 'shadow';
        CREATE INDEX calls_turn ON calls (turn) WHERE turn IS NOT NULL;
        CREATE INDEX calls_created ON calls (created);
        CREATE INDEX calls_route ON calls (created, id) WHERE kind = 'route';
        CREATE INDEX panels_created ON panels (created, id);
        CREATE INDEX panels_collection ON panels (collection, created, id)
    """),
    # The prompt and answer text kept per UTC day (store/compaction.py), so the retention setting can say what it
    # would prune without reading the history; where pruning has got to.
    (21, "the text kept per day; the state of pruning", compaction.SCHEMA),
    # Calls to a connection or model with a limit, counted by any process on this data folder (roster/limits/quota.py):
    # each process checks its limits against the others' rows, in the transaction that adds its own.
    (22, "calls counted against limits, shared between processes", """
        CREATE TABLE admits (
            id INTEGER PRIMARY KEY, endpoint TEXT, model TEXT, created REAL NOT NULL, tokens INTEGER NOT NULL DEFAULT 0,
            requests INTEGER NOT NULL DEFAULT 1, process TEXT NOT NULL)
    """),
    # A panel's points (the referee's reading of where its seats disagree), their verdicts (the latest counts) and
    # the claims a point's verdict gave each seat that took a side (kept in the standings with it); what the panel
    # asked of the referee and what came of it; verdicts a seat's judged points proposed.
    (23, "points, their verdicts and the claims they give", pointstore.SCHEMA),
    # A point claim's entry in a judged window is CLAIM + real, not 1 or 0 as an answer's, so the drop check can weigh
    # it as a claim: the windows of a record that has point claims are made again.
    (24, "the judged windows tell a point's claims from answers", ""),
    # Conversations (store/conversations.py): a panel's reply found again by the hash of its text when a client sends
    # it back (`replies`, narrow: keeping a hash never rewrites a panel's row with its prompt), the panel each
    # follow-up continued (`previous`) and its conversation's first panel (`conversation`: panels_conversation lists
    # the turns), where a turn's own messages begin in what it was asked (`turn_start`: the messages before it are
    # earlier turns the client sent back).
    (25, "conversations: replies found by their hash, the turns linked", """
        CREATE TABLE replies (reply INTEGER NOT NULL, panel TEXT NOT NULL, PRIMARY KEY (reply, panel)) WITHOUT ROWID;
        ALTER TABLE panels ADD COLUMN previous TEXT;
        ALTER TABLE panels ADD COLUMN conversation TEXT;
        ALTER TABLE panels ADD COLUMN turn_start INTEGER;
        CREATE INDEX panels_conversation ON panels (conversation, created) WHERE conversation IS NOT NULL
    """),
    # A panel's best answer and the comparisons it gives, counted per pair as written (store/bestpicks.py); blind
    # panels (no model named until judged) and which judgements were given blind.
    (26, "best picks, comparisons kept per pair, blind panels and judgements", bestpicks.SCHEMA),
    # What agent turns show without a verdict (issue 45): a call's signs (its tool calls checked, their faults, the
    # turn sent again) and their counts in the standings; a pin's last call, prompt and failing turns in a row; a
    # judge model's verdicts on route turns' shadow answers, kept apart from the user's, its spending per month and
    # how often it agreed with the user.
    (27, "what agent turns show; shadow answers judged", """
        ALTER TABLE calls ADD COLUMN signs TEXT;
        ALTER TABLE standings ADD COLUMN tool_turns INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN tool_failed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN tool_unoffered INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN tool_not_json INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN tool_schema INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN tool_reported INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN retried INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN judge_useful INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE standings ADD COLUMN judge_not_useful INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pins ADD COLUMN call TEXT;
        ALTER TABLE pins ADD COLUMN prompt TEXT;
        ALTER TABLE pins ADD COLUMN strikes INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE pins ADD COLUMN struck TEXT;
    """ + judgestore.SCHEMA),
    # Dollars spent per month against the user's budgets (per model, connection, collection, gateway key and the
    # whole bench, in the user's time zone), kept as calls are booked, and the holds a call reserves before it goes
    # (store/spend.py); this month's and last month's made from the ledger once here.
    (28, "month spend kept per budget; holds reserved before a call", spend.SCHEMA),
    # The useful rate from blind judgements alone (store/blindkept.py): the current verdicts given while their panel
    # was blind, counted per model and collection as they are written (migration 26 marks them; no index reaches them).
    (29, "verdicts given blind, counted per model and collection", blindkept.SCHEMA),
]
# Python run after a migration's statements, in its transaction: what SQL alone does not say.
STEPS: dict[int, Callable[[sqlite3.Connection], None]] = {18: standings.rebuild, 19: ledgerkept.rebuild,
                                                        21: compaction.rebuild, 23: pointstore.rebuild,
                                                        24: pointstore.rebuild_windows, 26: bestpicks.rebuild,
                                                        27: judgestore.rebuild, 28: spend.backfill,
                                                        29: blindkept.rebuild}


def rebuild_kept(conn: sqlite3.Connection) -> None:
    """Every kept table made again from the history (`bench store rebuild`), in the caller's transaction."""
    for number in sorted(STEPS):
        STEPS[number](conn)


def applied(conn: sqlite3.Connection) -> set[int]:
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (number INTEGER PRIMARY KEY, name TEXT, applied REAL)")
    return {row[0] for row in conn.execute("SELECT number FROM migrations")}


def migrate(conn: sqlite3.Connection, upto: int | None = None) -> list[int]:
    """Apply every migration not yet applied (up to `upto`); each in its own transaction with its record."""
    done = applied(conn)
    ran = []
    for number, name, sql in MIGRATIONS:
        if number in done or (upto is not None and number > upto):
            continue
        statements = [s.strip() for s in sql.split(";") if s.strip()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements:
                conn.execute(statement)
            if number in STEPS:   # made from the whole history once: on a large record this takes a while
                if conn.execute("SELECT 1 FROM calls LIMIT 1").fetchone():
                    log.info("Updating the record (migration %d: %s); on a large record this takes a minute, "
                             "once.", number, name)
                STEPS[number](conn)
            conn.execute("INSERT INTO migrations (number, name, applied) VALUES (?, ?, ?)",
                         (number, name, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        ran.append(number)
    return ran


def latest() -> int:
    return MIGRATIONS[-1][0]
