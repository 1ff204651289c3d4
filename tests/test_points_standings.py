"""Point claims in the kept record: on random histories of panels, point verdicts given, turned over and withdrawn,
the standings and judged windows kept by each write equal a rebuild and a recomputation from the point claims; a
member whose points start failing is seen to drop."""
from __future__ import annotations

import random
import time
from contextlib import closing

import pytest

from benchwarmers.core.rankings import Rankings
from benchwarmers.settings import SETTINGS
from benchwarmers.store import Database, standings
from benchwarmers.store.calls import CallRecord, Calls
from benchwarmers.store.migrations import rebuild_kept
from benchwarmers.store.pointstore import PointStore
from benchwarmers.store.verdicts import Verdicts
from benchwarmers.store.windows import JUDGED
from tests.test_standings import kept

MODELS = ["m0", "m1", "m2"]


def panels(db: Database, rng: random.Random, n: int) -> list:
    """n three-seat panels with one point each (seat 1 asserts, seat 2 denies, seat 3 silent), some verdicts on
    seats; returns the point ids."""
    calls, store, points = Calls(db), PointStore(db), []
    base = time.time() - 86400
    for i in range(n):
        panel = f"p{i:04d}"
        calls.add_panel(panel, "c0", "panel", 3, None)
        order = rng.sample(MODELS, 3)
        for seat, model in enumerate(order, 1):
            calls.add(CallRecord(id=f"{panel}-{seat}", model=model, status="ok", collection="c0", kind="member",
                                 panel=panel, seat=seat, answer="x", seconds=1.0,
                                 created=base + i * 60 + rng.random() * 90))
        pid = f"pt_{i:04d}"
        store.save(panel, {"mode": "all"}, [{"id": pid, "claim": "x", "assert": [1], "deny": [2], "silent": [3],
                                             "quotes": {"1": "a", "2": "b"}}])
        points.append(pid)
    db.sync()
    return points


def judge(store: PointStore, point: str, verdict) -> None:
    claims = [] if verdict is None else [
        {"seat": 1, "real": verdict, "stance": "assert", "claim": "x", "quote": "a"},
        {"seat": 2, "real": not verdict, "stance": "deny", "claim": "not so: x", "quote": "b"}]
    store.judge(point, verdict, None, claims)


def from_claims(db: Database) -> dict:
    """(model, scope) -> [point_real, point_false] and the latest judged entries (a claim's CLAIM + real), worked out
    in Python."""
    counts, entries = {}, {}
    for r in db.query("SELECT c.model, c.created, pc.real FROM point_claims pc JOIN calls c ON c.id = pc.call"):
        c = counts.setdefault((r["model"], "c0"), [0, 0])
        c[0 if r["real"] else 1] += 1
        entries.setdefault((r["model"], "c0"), []).append((r["created"], standings.CLAIM + r["real"]))
    for r in db.query("SELECT c.model, c.created, v.useful FROM calls c JOIN verdicts v ON v.call = c.id "
                      "AND v.current = 1"):
        entries.setdefault((r["model"], "c0"), []).append((r["created"], r["useful"]))
    return {"counts": counts, "judged": {k: sorted(v)[-standings.JUDGED_WINDOW:] for k, v in entries.items()}}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_point_claims_kept_equal_a_rebuild_and_a_recomputation(tmp_path, monkeypatch, seed):
    monkeypatch.setattr(standings, "JUDGED_WINDOW", 6)    # small: taking a claim away refills from the history
    rng = random.Random(seed)
    db = Database(tmp_path / "bench.db")
    try:
        points = panels(db, rng, 60)
        store, verdicts = PointStore(db), Verdicts(db)
        for _ in range(260):
            roll = rng.random()
            if roll < 0.6:
                judge(store, rng.choice(points), rng.choice([True, False, True, None]))
            elif roll < 0.8:
                store.withdraw(rng.choice(points))
            else:
                verdicts.add(f"p{rng.choice(points)[3:]}-{rng.randint(1, 3)}", rng.random() < .5, None, [], [])
        want = from_claims(db)
        got = kept(db)
        rows = {(r["model"], r["scope"]): [r["point_real"], r["point_false"]]
                for r in db.query("SELECT * FROM standings")}
        assert {k: v for k, v in rows.items() if any(v)} == {k: v for k, v in want["counts"].items() if any(v)}
        assert got["judged"] == {k: v for k, v in want["judged"].items() if v}
        counts = got["counts"]
        db.call(rebuild_kept)                               # bench store rebuild comes to the same
        assert kept(db)["judged"] == got["judged"] and kept(db)["counts"] == counts
        assert {(r["model"], r["scope"]): [r["point_real"], r["point_false"]]
                for r in db.query("SELECT * FROM standings")} == rows
    finally:
        db.close()


def test_a_member_whose_points_start_failing_is_seen_to_drop(tmp_path):
    db = Database(tmp_path / "bench.db")
    try:
        rng = random.Random(7)
        points = panels(db, rng, 200)
        store = PointStore(db)
        rankings = Rankings(db, lambda: {s.name: s.default for s in SETTINGS.values()})
        fallen = "m0"
        for i, pid in enumerate(points):      # m0 right on every point it took a side on, then wrong on every one
            first = db.one("SELECT model FROM calls WHERE id = ?", (f"p{i:04d}-1",))["model"]
            judge(store, pid, first == fallen if i < 150 else first != fallen)
        stats = rankings.models("c0")[fallen]
        assert stats.point_claims > 100 and stats.judged == 0
        fell = stats.drop
        assert fell is not None and fell.useful_rate < 0.25 and fell.before_rate > 0.9
    finally:
        db.close()


def test_an_older_records_judged_windows_are_made_again_with_claims_told_from_answers(tmp_path):
    """Migration 24: windows written when a point claim's entry was 1 or 0, as an answer's, are made again."""
    with closing(Database(tmp_path / "bench.db")) as db:
        rng = random.Random(5)
        for pid in panels(db, rng, 30)[:20]:
            judge(PointStore(db), pid, rng.random() < 0.7)
        Verdicts(db).add("p0001-1", True, None, [], [])          # an answer's entry beside the claims'
        want = kept(db)["judged"]
        assert {v for w in want.values() for _, v in w} == {1, standings.CLAIM, standings.CLAIM + 1}

        def as_before(conn):
            for model, scope, window in conn.execute("SELECT model, scope, window FROM judged").fetchall():
                packed = b"".join(JUDGED.pack(c, v & 1) for c, v in standings.judged_entries(window))
                conn.execute("UPDATE judged SET window = ? WHERE model = ? AND scope = ?", (packed, model, scope))
            conn.execute("DELETE FROM migrations WHERE number = 24")
        db.call(as_before)
        assert kept(db)["judged"] != want
    with closing(Database(tmp_path / "bench.db")) as db:         # opening it migrates
        assert kept(db)["judged"] == want
