"""No page, API read or hot path reads the whole history: every statement they run is traced, and its plan (EXPLAIN
QUERY PLAN) must reach calls, usage, verdicts, panels and the kept tables by an index (a search, or a walk that a
LIMIT stops), never by a full scan, and never sort every row it found."""
from __future__ import annotations

import re

import pytest

from benchwarmers.server.routes import GATEWAY, ADMIN, PUBLIC
from benchwarmers.service.table import build_table
from benchwarmers.store import standings
from tests.fakes import FakeOpenAI
from tests.fakes.referee import FakeReferee
from tests.helpers.data import configure, write
from tests.helpers.panel import wait_for

# The history and what is kept of it: none may be scanned. The kept standings (a row per model and collection)
# and the few small tables of state (settings, keys, pins, limits, jobs) may be.
HISTORY = {"calls", "usage", "verdicts", "panels", "replies", "days", "usage_totals", "usage_days", "probes", "perf",
           "points", "point_verdicts", "point_claims", "judge_verdicts",
           "spend", "spend_holds", "best_picks"}
TABLE_REF = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)(?:\s+(?:AS\s+)?(?!ON\b|WHERE\b|LEFT\b|JOIN\b|ORDER\b|GROUP\b|LIMIT\b"
                       r"|INDEXED\b|USING\b)(\w+))?", re.I)
# A search by one of these finds a bounded few rows (a panel's seats, a call's verdicts, a turn's shadows, the calls
# within the latest REACH, a month's kept totals): sorting them is no sort of the history.
BOUNDED = re.compile(r"\b(?:panel|id|call|turn|rowid|month|point)=\?|created>\?|\(created,id\)[<>]=?\(\?,\?\)")
# The statistics PRAGMA optimize gathers (within its analysis_limit, so the rows per value are a guess: these are
# what it wrote on the 100,000-call folder of benchmarks/record_scale.py, the rows made a million): the planner
# chooses with them as it will on such a record, and may choose otherwise than on a record without any.
AT_A_MILLION = [("calls", "sqlite_autoindex_calls_1", "1000000 1"), ("calls", "calls_created", "1000000 1"),
                ("calls", "calls_model", "1000000 401 1"), ("calls", "calls_collection", "1000000 401 1"),
                ("calls", "calls_panel", "1000000 12"), ("calls", "calls_route", "80000 1 1"),
                ("calls", "calls_turn", "80000 1"), ("calls", "calls_session", "160000 401 1"),
                ("calls", "calls_caller", "160000 401 1"), ("panels", "sqlite_autoindex_panels_1", "150000 1"),
                ("panels", "panels_created", "150000 1 1"), ("panels", "panels_collection", "150000 401 1 1"),
                ("usage", "usage_created", "1000000 1"), ("usage", "usage_month", "1000000 401 401"),
                ("usage", "usage_explore_call", "170000 1"), ("usage", "usage_call", "2000 1"),
                ("verdicts", "verdicts_call", "340000 2 1"), ("days", "sqlite_autoindex_days_1", "20000 41 4 1 1 1"),
                ("usage_totals", "sqlite_autoindex_usage_totals_1", "4000 41 41 4 1 1"),
                ("standings", "sqlite_autoindex_standings_1", "60 4 1"), ("judged", "sqlite_autoindex_judged_1",
                                                                         "60 3 1")]
EXTRA_PATHS = ["/calls?verdict=missing", "/calls?verdict=given", "/calls?model=a", "/calls?status=failed",
               "/calls?collection=core", "/bench/history?model=a&verdict=given", "/bench/history?status=ok",
               "/bench/history?collection=core&verdict=missing", "/bench/calls?model=a", "/bench/calls?collection=core",
               "/bench/calls?panel={panel}", "/bench/pending?session=s-1", "/bench/pending?calls={call}",
               "/bench/record?collection=core", "/bench/record?blind=1", "/bench/stats/daily?model=a", "/bench/stats/daily?collection=core",
               "/bench/rankings?collection=core", "/bench/rankings?blind=1", "/models?blind=1",
               "/bench/export/pairs", "/bench/export/pairs?collection=core&since=1", "/bench/export/verdicts",
               "/bench/export/verdicts?collection=core&since=1", "/bench/export/claims?collection=core",
               "/bench/export/points?collection=core&since=1", "/bench/export/claims",
               "/bench/usage?by=kind", "/bench/usage?by=collection", "/bench/usage?by=connection", "/calls/{route}",
               "/bench/history/{route}", "/models/a.json", "/.json", "/calls.json?verdict=missing",
               "/bench/collections/agent/overview", "/collections/agent", "/bench/calls/{route}"]


@pytest.fixture
def fake():
    f = FakeOpenAI().start()
    yield f
    f.stop()


class Recording:
    """A connection that notes each statement with its parameters (EXPLAIN of the statement as SQLite ran it: with
    literals in their place the planner may choose another plan), and otherwise is the connection."""

    def __init__(self, conn, seen: list):
        self._conn, self._seen = conn, seen

    def execute(self, sql, params=()):
        self._seen.append((sql, params))
        return self._conn.execute(sql, params)

    def executemany(self, sql, rows):
        rows = list(rows)
        if rows:
            self._seen.append((sql, rows[0]))
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name):
        return getattr(self._conn, name)


def traced(bench) -> list:
    """Every statement the bench's database connections run from now on, each (sql, its parameters)."""
    seen: list = []
    db = bench.db
    readers = []
    while not db._readers.empty():
        readers.append(db._readers.get_nowait())
    db._writer_conn = Recording(db._writer_conn, seen)
    for conn in readers:
        db._readers.put(Recording(conn, seen))
    return seen


def aliases(sql: str) -> dict:
    out = {}
    for table, alias in TABLE_REF.findall(sql):
        out[table.lower()] = table.lower()
        if alias:
            out[alias.lower()] = table.lower()
    return out


def problems(conn, sql: str, params=()) -> list[str]:
    """What is wrong with a statement's plan: a table of the history scanned whole, or every row it found sorted."""
    head = sql.lstrip().split(None, 1)[0].upper()
    if head not in ("SELECT", "UPDATE", "DELETE", "WITH"):
        return []
    names = aliases(sql)
    plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
    out = []
    reached = []     # how each table of the history was reached: what a sort after it would sort
    for line in plan:
        scan = re.match(r"SCAN (\w+)( USING (?:COVERING )?INDEX (\w+))?", line)
        search = re.match(r"SEARCH (\w+) USING .*\((.*)\)", line)
        if scan and names.get(scan.group(1).lower()) in HISTORY:
            if not scan.group(2):
                out.append(f"a full scan of {names[scan.group(1).lower()]}: {line}")
            elif "LIMIT" not in sql.upper():
                out.append(f"a walk of a whole index of {names[scan.group(1).lower()]} (no LIMIT): {line}")
            reached.append(line)
        if search and names.get(search.group(1).lower()) in HISTORY and not BOUNDED.search(search.group(2)):
            reached.append(line)
        if line == "USE TEMP B-TREE FOR ORDER BY" and reached:
            out.append(f"every row found is sorted (its index does not give the order): {reached}")
    return out


def drive(app, home) -> dict:
    """Asks, route turns with a shadow seat, verdicts; returns ids the paths need."""
    ids = {}
    for i in range(3):
        status, _, d = app("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
            {"role": "user", "content": f"question {i}"}], "bench": {"points": "contested"}},
                           headers={"X-Bench-Session": "s-1"})
        assert status == 200, d
        ids["panel"], ids["call"] = d["bench"]["panel"], d["bench"]["seats"][0]["call"]
        ids["point"] = d["bench"]["points"][0]["id"]
        ids.setdefault("seats", []).append(ids["call"])
    # follow-ups: the reply sent back (found by its hash), then `bench.continue` (the turns read by their ids); the
    # replies this process remembers are forgotten first, so the record is read as another process would
    said = d["choices"][0]["message"]["content"]
    app.bench.db.sync()
    app.bench.panel.threads.store._recent.clear()
    status, _, d = app("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "question 2"}, {"role": "assistant", "content": said},
        {"role": "user", "content": "and then?"}]})
    assert status == 200 and d["bench"]["previous"] == ids["panel"], d
    app.bench.db.sync()
    app.bench.panel.threads.store._recent.clear()
    status, _, again = app("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "question 2"}, {"role": "assistant", "content": said},
        {"role": "user", "content": "and then?"},
        {"role": "assistant", "content": d["choices"][0]["message"]["content"]}, {"role": "user", "content": "so?"}]})
    assert status == 200 and again["bench"]["previous"] == d["bench"]["panel"], again
    status, _, d = app("POST", "/v1/chat/completions", {"model": "bench/core", "messages": [
        {"role": "user", "content": "and after?"}], "bench": {"continue": d["bench"]["panel"]}})
    assert status == 200, d
    ids["panel"] = d["bench"]["panel"]      # /bench/panels/{id} then shows a conversation of three turns
    status, _, d = app("POST", "/v1/chat/completions", {"model": "bench/core:merged", "messages": [
        {"role": "user", "content": "merge this"}]})
    assert status == 200, d
    for i in range(2):
        status, headers, d = app("POST", "/v1/chat/completions", {"model": "bench/agent:route", "messages": [
            {"role": "user", "content": f"agent turn {i}"}]}, headers={"x-claude-code-session-id": f"conv-{i}"})
        assert status == 200, d
        ids["route"] = headers["x-bench-call"]
    # the agent collection's judge reads the turn and its shadow (off the path): its verdicts, spending, agreement
    wait_for(lambda: app.bench.judges.store.of_call(ids["route"]))
    for call in (*ids["seats"], ids["route"]):
        assert app("POST", "/bench/verdict", {"call": call, "useful": True, "real": ["x"]})[0] == 200
    # a point judged, judged again the other way, withdrawn and judged once more: claims in and out of the standings
    point = ids["point"]
    for verdict in ({"true": True}, {"true": False, "note": "checked"}):
        assert app("POST", f"/bench/points/{point}/verdict", verdict)[0] == 200
    assert app("DELETE", f"/bench/points/{point}/verdict")[0] == 200
    assert app("POST", f"/bench/points/{point}/verdict", {"true": True})[0] == 200
    # a best pick, picked again, withdrawn and picked once more: comparisons in and out of the kept counts
    for seat in (1, 2):
        assert app("POST", f"/bench/panels/{ids['panel']}/best", {"seat": seat})[0] == 200
    assert app("DELETE", f"/bench/panels/{ids['panel']}/best")[0] == 200
    assert app("POST", f"/bench/panels/{ids['panel']}/best", {"seat": None})[0] == 200
    for which in ({"collection": "core", "before": 1}, {"before": 1}):   # nothing so old: only its plan is read
        assert app("POST", "/bench/pending/set-aside", which)[2]["set_aside"] == 0
    assert app("POST", "/bench/verdict", {"call": ids["call"], "useful": True, "from_points": True})[0] == 200
    assert app("POST", "/bench/verdict", {"call": ids["call"], "useful": False})[0] == 200   # revised
    # a late answer that makes a row again (the panel had told its client the seat timed out): its old answer time
    # leaves a full window, which is made good from the history
    app.bench.db.sync()
    newest = app.bench.db.one("SELECT id FROM calls WHERE model = 'a' AND collection = 'core' AND kind = 'member' "
                              "AND status = 'ok' ORDER BY created DESC LIMIT 1")["id"]
    late = app.bench.calls.get(newest)
    late.status, late.seconds = "timeout", None
    app.bench.calls.add(late, amend=0.0).result(10)
    return ids


def test_no_page_api_read_or_hot_path_scans_the_history(home, fake, make_app, monkeypatch):
    monkeypatch.setattr(standings, "SPEED_WINDOW", 2)    # windows full at once: a change in one is made good from
    monkeypatch.setattr(standings, "JUDGED_WINDOW", 2)   # the history, and those queries are checked too
    configure(home, {"fake": (fake, "openai")},
              {**{m: ("fake", f"m-{m}") for m in ("a", "b", "c", "x", "y")},     # the judge is never an explore seat
               "judge": {"endpoint": "fake", "served": "m-judge", "ad_hoc": True, "facts": {}},
               "arbiter": {"endpoint": "fake", "served": "m-arbiter", "ad_hoc": True,
                           "facts": {"price_in": 1.0, "price_out": 1.0}}},
              {"core": {"members": ["a", "b", "c"], "explore": 1, "description": "reviewers", "referee": "judge",
                        "points": "contested"},
               "agent": {"members": ["a", "b"], "explore": 0, "shadow": 1, "judge": "arbiter", "judge_budget": 5}})
    write(home, "limits.json", {"limits": {"connections": {"fake": {"rpm": 1000}}, "models": {},
                                           "collections": {"core": {"usd_month": 100}},   # calls held and booked
                                           "bench": {"all": {"usd_month": 1000}}}})
    fake.script("m-a", "The cache is stale.")           # seats that disagree, and a referee that says where
    fake.script("m-b", "The cache is fresh.")
    fake.script("m-judge", FakeReferee().reply())
    fake.script("m-arbiter", '{"answers": [{"answer": 1, "useful": true}, {"answer": 2, "useful": false}]}')
    app = make_app()
    seen = traced(app.bench)
    ids = drive(app, home)
    values = {"name": "core", "alias": "a", "id": ids["panel"], "model": "bench/core", "provider": "openrouter"}
    paths = [re.sub(r"\{(\w+)(?::path)?\}", lambda m: values.get(m.group(1), "x"), r.pattern)
             for r in build_table().routes if r.method == "GET" and r.auth in (PUBLIC, GATEWAY, ADMIN)
             and not r.pattern.startswith(("/static/", "/connect/"))]
    paths += [p.format(**{k: v for k, v in ids.items() if k != "seats"}) for p in EXTRA_PATHS] + [f"/bench/calls/{ids['call']}", f"/calls/{ids['panel']}"]
    for path in paths:
        app("GET", path)
    key = app("POST", "/bench/keys", {"name": "narrow", "collections": ["core", "agent"]})[2]["key"]
    write(home, "settings.json", {"require_keys": True})   # a key of two collections reads only theirs
    for path in ("/bench/calls", "/bench/pending", "/bench/record", "/v1/models", "/bench/collections",
                 "/bench/rankings"):
        assert app("GET", path, headers={"Authorization": f"Bearer {key}"})[0] == 200, path
    app.bench.db.sync()
    found = {}
    conn = app.bench.db._writer_conn._conn
    statements = {sql: params for sql, params in seen}
    for stats in ("none (a new record)", "a million calls'"):
        if stats != "none (a new record)":
            conn.execute("ANALYZE sqlite_schema")                       # makes sqlite_stat1, read again below
            conn.execute("DELETE FROM sqlite_stat1")
            conn.executemany("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)", AT_A_MILLION)
            conn.execute("ANALYZE sqlite_schema")
        for sql, params in statements.items():
            wrong = problems(conn, sql, params)
            if wrong:
                found[f"statistics {stats}: {sql[:400]}"] = wrong
    assert len(statements) > 100 and any("FROM standings" in s for s in statements)
    assert any(s.startswith("SELECT created, seconds FROM calls") for s in statements)        # a window refilled
    assert any(s.startswith("SELECT c.created, v.useful FROM calls c") for s in statements)
    assert any("FROM point_claims" in s for s in statements) and any("FROM points" in s for s in statements)
    assert any("FROM best_picks" in s for s in statements) and any("FROM comparisons" in s for s in statements)
    assert any("UPDATE panels AS p SET set_aside" in s for s in statements)
    assert any("FROM point_claims pc CROSS JOIN calls c" in s for s in statements)   # an export walked
    assert any("WHERE reply = ?" in s for s in statements) and any("WHERE reply IN" in s for s in statements)
    assert any("WHERE conversation = ?" in s for s in statements)
    assert any("FROM judge_verdicts" in s for s in statements) and any("FROM judge_agreement" in s for s in statements)
    assert any("FROM spend_holds" in s for s in statements) and any("FROM spend WHERE" in s for s in statements)
    assert not found, "\n\n".join(f"{sql}\n  -> {'; '.join(w)}" for sql, w in found.items())
