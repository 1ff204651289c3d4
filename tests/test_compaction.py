"""A record that does not grow forever: the retention prunes old prompt and answer text and keeps every count,
verdict, claim and ledger line; Settings and `bench store` say how big it is and what the retention would prune."""
from __future__ import annotations

import time

from benchwarmers.store import Database, compaction
from benchwarmers.store.calls import CallRecord, Calls
from benchwarmers.store.ledger import Line
from benchwarmers.store.verdicts import Verdicts
from tests.helpers.data import write
from tests.helpers.panel import body, fake, setup_bench  # noqa: F401 (fake is a fixture)


def test_old_text_is_pruned_and_nothing_a_standing_needs_is_lost(tmp_path, monkeypatch):
    monkeypatch.setattr(compaction, "CHUNK", 7)           # several transactions, each going on where one stopped
    db = Database(tmp_path / "bench.db")
    try:
        calls, now = Calls(db), time.time()
        for i in range(40):                                # 20 old ones (100 days ago), 20 new
            created = now - (100 if i < 20 else 1) * 86400 + i
            calls.add_panel(f"p{i}", "core", "panel", 1, None, request='{"messages": ["' + "q" * 50 + '"]}')
            calls.add(CallRecord(id=f"c{i}", model="a", status="ok", panel=f"p{i}", collection="core", kind="member",
                                 answer="an answer " * 600, seconds=1.0, created=created),
                      Line("e", "a", "member", 10, 5, call=f"c{i}", collection="core", created=created))
        db.sync()
        db.call(lambda conn: conn.execute("UPDATE panels SET created = created - 100 * 86400 WHERE rowid <= 20"))
        db.call(compaction.rebuild)
        for i in (0, 30):
            Verdicts(db).add(f"c{i}", True, "kept", ["a real claim"], [])
        before = compaction.size(db, 30, now)
        standings = db.query("SELECT * FROM standings")
        assert before["would_prune_chars"] == 20 * (6000 + len('{"messages": ["' + "q" * 50 + '"]}'))
        done = compaction.compact(db, 30, now=now)
        assert (done["pruned_calls"], done["pruned_panels"]) == (20, 20)
        old = db.one("SELECT answer, request, status, seconds FROM calls WHERE id = 'c0'")
        assert old["answer"] is None and old["status"] == "ok" and old["seconds"] == 1.0
        assert db.one("SELECT answer FROM calls WHERE id = 'c30'")["answer"].startswith("an answer")
        assert db.one("SELECT request FROM panels WHERE id = 'p0'")["request"] is None
        assert [dict(r) for r in db.query("SELECT * FROM standings")] == [dict(r) for r in standings]
        assert db.one("SELECT COUNT(*) AS n FROM usage")["n"] == 40
        assert db.one("SELECT note, real FROM verdicts WHERE call = 'c0'")["real"] == '["a real claim"]'
        after = done["store"]
        assert after["text_chars"] == before["text_chars"] - before["would_prune_chars"]
        assert compaction.size(db, 30, now)["would_prune_chars"] == 0      # nothing left to prune
        assert compaction.compact(db, 30, now=now)["pruned_calls"] == 0    # and a second run finds nothing
        assert after["auto_vacuum"] == "incremental" and after["free_bytes"] == 0   # free pages given back
        assert done["freed_bytes"] >= 10 * 4096        # the old answers' overflow pages: the file is smaller
    finally:
        db.close()


def test_the_store_routes_the_cli_and_settings_show_it(home, fake, app, monkeypatch):
    setup_bench(home, fake)
    assert app("POST", "/v1/chat/completions", body())[0] == 200
    status, _, d = app("GET", "/bench/store")
    assert status == 200 and d["bytes"] > 0 and d["text_chars"] > 0 and d["keep_days"] == 0
    write(home, "settings.json", {"record_keep_days": 30})
    assert app("GET", "/bench/store")[2]["would_prune_chars"] == 0        # nothing is 30 days old
    assert app("POST", "/bench/store/compact", {"full": "yes"})[0] == 400
    done = app("POST", "/bench/store/compact", {})[2]
    assert done["pruned_calls"] == 0 and done["keep_days"] == 30
    rebuilt = app("POST", "/bench/store/rebuild", {})[2]
    assert rebuilt["rebuilt"] is True and rebuilt["store"]["text_chars"] == d["text_chars"]
    page = app("GET", "/settings")[2]
    assert "The record" in page and "compacting now prunes 0 characters" in page
