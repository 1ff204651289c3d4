"""The record kept, not recomputed: on random histories (late answers amending rows, verdicts revised, calls written
out of order) the standings kept by each write equal a full recomputation, and so does a rebuild."""
from __future__ import annotations

import random
import statistics
import time

import pytest

from benchwarmers.core.rankings import Rankings
from benchwarmers.store import Database, compaction, ledgerkept, standings
from benchwarmers.store.calls import CallRecord, Calls
from benchwarmers.store.ledger import Ledger, Line
from benchwarmers.store.verdicts import Verdicts

MODELS = ["m0", "m1", "m2", "m3"]
SCOPES = ["c0", "c1", None]
KINDS = ["member", "member", "explore", "with", "route", "shadow", "merge"]
STATUSES = ["ok", "ok", "ok", "failed", "timeout", "skipped"]


def history(db: Database, rng: random.Random, n: int) -> None:
    """n calls written through Calls.add (batched, some amended later), and verdicts on a third, a quarter revised;
    then only amends and revisions (a window a change took an entry from is not healed by newer calls then)."""
    calls, verdicts = Calls(db), Verdicts(db)
    made, pending = [], []
    base = time.time() - 86400 * 3
    for i in range(n + n // 5):
        if i >= n:
            late_and_revised(db, calls, verdicts, made, rng)
            continue
        status = rng.choice(STATUSES)
        rec = CallRecord(id=f"c{i:05d}", model=rng.choice(MODELS), status=status, collection=rng.choice(SCOPES),
                         answer="x" * rng.randint(0, 300) if status == "ok" else None,
                         request='{"messages": []}' if rng.random() < .5 else None,
                         kind=rng.choice(KINDS), created=base + i * 97 + rng.random() * 400,   # some out of order
                         seconds=round(rng.uniform(0.1, 9.0), 4) if status != "skipped" and rng.random() < .9 else None)
        pending.append(calls.add(rec, line(rec, rng)))
        made.append(rec)
        if rng.random() < 0.05:              # a probe's line: no call
            pending.append(Ledger(db).add(Line("e1", rng.choice(MODELS), "probe", 3, 1, created=rec.created)))
        if rng.random() < 0.3:               # a batch is committed now and then, as replies wait for theirs
            pending.pop().result(10)
        if made and rng.random() < 0.08:     # a late answer: a row made again, keeping its moment
            old = rng.choice(made)
            status = rng.choice(["ok", "ok", "timeout", "failed"])
            late = CallRecord(id=old.id, model=old.model, status=status, collection=old.collection, kind=old.kind,
                              created=time.time(), seconds=round(rng.uniform(5, 30), 4) if status == "ok" else None,
                              answer="late " * rng.randint(0, 40) or None)
            pending.append(calls.add(late, line(late, rng, old.created), amend=0.0))
        if made and rng.random() < 0.35:
            target = rng.choice(made).id
            for _ in range(1 + (rng.random() < 0.25)):   # sometimes revised at once
                db.sync()
                verdicts.add(target, rng.random() < 0.6, None, ["r"] * rng.randint(0, 2), ["f"] * rng.randint(0, 3))
    db.sync()


def late_and_revised(db: Database, calls: Calls, verdicts: Verdicts, made: list, rng: random.Random) -> None:
    """A late answer amending a row that answered, or a verdict revised (both take an entry from a window)."""
    db.sync()
    old = rng.choice(made)
    if rng.random() < 0.5:
        status = rng.choice(["failed", "timeout", "ok"])
        late = CallRecord(id=old.id, model=old.model, status=status, collection=old.collection, kind=old.kind,
                          seconds=round(rng.uniform(5, 30), 4) if status == "ok" else None)
        calls.add(late, line(late, rng, old.created), amend=0.0).result(10)
    else:
        verdicts.add(old.id, rng.random() < 0.5, None, [], ["f"] * rng.randint(0, 2))


def line(rec: CallRecord, rng: random.Random, created: float | None = None) -> Line | None:
    """A call's ledger line (none for one never sent), priced or not."""
    if rec.status == "skipped" or rng.random() < 0.1:
        return None
    return Line(rng.choice(["e1", "e2"]), rec.model, rec.kind, rng.randint(0, 50), rng.randint(0, 20),
                rng.randint(0, 5), rng.choice([None, 0.001, 0.0002]), rec.collection, rec.id,
                rng.random() < 0.2, rng.random() < 0.1, created or rec.created)


def recompute(db: Database) -> dict:
    """The kept record worked out from scratch, in Python, from every call and its current verdict."""
    current = {r["call"]: standings.verdict_of(r["useful"], r["real"], r["false"])
               for r in db.query("SELECT * FROM verdicts WHERE current = 1")}
    rows = db.query(f"SELECT id, {standings.CALL_COLS} FROM calls")
    counts, speeds, judged, days = {}, {}, {}, {}
    for r in rows:
        p = standings.part(r, current.get(r["id"]))
        d = days.setdefault(p.day, [0] * len(standings.DAY_COUNTS))
        for i, v in enumerate(p.day_counts):
            d[i] += v
        if p.key is None:
            continue
        c = counts.setdefault(p.key, [0] * len(standings.COUNTS))
        for i, v in enumerate(p.counts):
            c[i] += v
        if p.speed:
            speeds.setdefault(p.key, []).append(p.speed)
        if p.judged:
            judged.setdefault(p.key, []).append(p.judged)
    latest = lambda entries, k: sorted(entries)[-k:]   # noqa: E731
    return {"counts": counts, "speeds": {k: latest(v, standings.SPEED_WINDOW) for k, v in speeds.items()},
            "judged": {k: latest(v, standings.JUDGED_WINDOW) for k, v in judged.items()},
            "days": {k: v for k, v in days.items()}}


def kept(db: Database) -> dict:
    out = {"counts": {}, "speeds": {}, "judged": {}, "days": {}}
    for r in db.query("SELECT * FROM standings"):
        key = (r["model"], r["scope"])
        out["counts"][key] = [r[c] for c in standings.COUNTS]
        if r["speeds"]:
            out["speeds"][key] = standings.speeds(r["speeds"])
    for r in db.query("SELECT * FROM judged"):
        if r["window"]:
            out["judged"][(r["model"], r["scope"])] = standings.judged_entries(r["window"])
    for r in db.query("SELECT * FROM days WHERE calls != 0"):   # a row an amend took to nothing counts nothing
        out["days"][(r["day"], r["model"], r["scope"], r["counted"], r["status"])] = [r[c] for c in
                                                                                      standings.DAY_COUNTS]
    return out


def kept_ledger(db: Database) -> dict:
    cols = ledgerkept.KEY + ledgerkept.SUMS
    return {"totals": {tuple(r[c] for c in ledgerkept.KEY): tuple(round(r[c], 9) for c in ledgerkept.SUMS)
                       for r in db.query(f"SELECT {', '.join(cols)} FROM usage_totals WHERE calls != 0")},
            "days": {r["day"]: (r["calls"], r["tokens"], round(r["cost"], 9), r["priced"])
                     for r in db.query("SELECT * FROM usage_days WHERE calls != 0")}}


def assert_same(got: dict, want: dict) -> None:
    assert got["counts"] == want["counts"]
    assert got["speeds"] == want["speeds"]
    assert got["judged"] == want["judged"]
    assert got["days"].keys() == want["days"].keys()
    for key, values in want["days"].items():
        assert got["days"][key] == pytest.approx(values, abs=1e-6), key


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kept_record_equals_a_full_recomputation(tmp_path, monkeypatch, seed):
    # small windows, so trimming and refilling a full window from the history happen often
    monkeypatch.setattr(standings, "SPEED_WINDOW", 5)
    monkeypatch.setattr(standings, "JUDGED_WINDOW", 7)
    db = Database(tmp_path / "bench.db")
    try:
        history(db, random.Random(seed), 700)
        want = recompute(db)
        assert sum(c[standings.COUNTS.index("useful")] for c in want["counts"].values()) > 20   # judged plenty
        assert_same(kept(db), want)
        db.call(standings.rebuild)                     # a rebuild from the history comes to the same
        assert_same(kept(db), want)
        ledger = kept_ledger(db)
        assert ledger["totals"] and ledger["days"]
        db.call(ledgerkept.rebuild)                    # the ledger's totals: as from its lines
        assert kept_ledger(db) == ledger
        text = {r["day"]: r["chars"] for r in db.query("SELECT * FROM text_days WHERE chars != 0")}
        db.call(compaction.rebuild)                    # the text kept per day: as from the rows
        assert text and {r["day"]: r["chars"] for r in db.query("SELECT * FROM text_days WHERE chars != 0")} == text
    finally:
        db.close()


def test_the_record_reads_what_is_kept(tmp_path):
    db = Database(tmp_path / "bench.db")
    try:
        history(db, random.Random(9), 400)
        want = recompute(db)
        rankings = Rankings(db, lambda: {"confidently_wrong_ratio": 0.5})
        for scope in ("c0", "c1"):
            got = rankings.models(scope)
            for model in MODELS:
                counts = want["counts"].get((model, scope))
                if counts is None:
                    assert model not in got
                    continue
                c = dict(zip(standings.COUNTS, counts))
                assert (got[model].asks, got[model].answers, got[model].failures, got[model].useful,
                        got[model].not_useful, got[model].false_claims) == \
                    (c["asks"], c["answers"], c["failures"], c["useful"], c["not_useful"], c["false_claims"])
                times = [s for _, s in want["speeds"].get((model, scope), [])]
                assert got[model].median_seconds == (round(statistics.median(times), 3) if times else None)
        overall = rankings.models()
        for model in MODELS:   # every collection and the calls of none, summed
            asks = sum(c[standings.COUNTS.index("asks")] for (m, _), c in want["counts"].items() if m == model)
            assert overall[model].asks == asks
        everything = sorted(e for (m, _), w in want["speeds"].items() if m == "m1" for e in w)
        latest = [s for _, s in everything[-standings.SPEED_WINDOW:]]
        assert overall["m1"].median_seconds == round(statistics.median(latest), 3)
    finally:
        db.close()
