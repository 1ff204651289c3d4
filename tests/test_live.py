"""core/live.py on its own: a streamed reply's lead seat (its text as it comes adds up to its block), the other seats
held until it is done, and when a live run's new text is read."""
from __future__ import annotations

from benchwarmers.canonical import FAILED, OK, Seat
from benchwarmers.core.live import EVERY, Heard, Lead, LiveText, Reads
from benchwarmers.core.panelwords import seat_block


def seat(n: int, model: str, answer: str = "", status: str = OK, error: str | None = None) -> Seat:
    return Seat(n, "member", model, status=status, call=f"c{n}", answer=answer, error=error)


def test_the_lead_streams_its_block_and_the_others_follow_it():
    a, b = seat(1, "a"), seat(2, "b", "b's answer")
    lead = Lead()
    said = [lead.heard(Heard("c1", "\n  The race", 1), a), lead.heard(Heard("c2", "ignored", 1), b),
            lead.heard(Heard("c1", " is here.\n\n", 2), a), *lead.finished(b)]
    assert said == ["## Seat 1 · a · member\n\nThe race", "", " is here."]   # blank ends held back; b held
    a.answer = "\n  The race is here.\n\n"
    ended = lead.finished(a)
    assert ended == ["\n\n", seat_block(b)]                 # its end, then the held block, a delta of its own
    assert "".join(said + ended) == seat_block(a) + seat_block(b)     # what a whole reply's blocks say
    c = seat(3, "c", "x")
    assert lead.heard(Heard("c1", "late", 3), a) == "" and lead.finished(c) == [seat_block(c)]   # after it: as before


def test_a_lead_that_fails_half_way_says_how_it_ended():
    a = seat(1, "a")
    lead = Lead()
    text = lead.heard(Heard("c1", "half an ans", 1), a)
    a.status, a.error = FAILED, "the connection dropped"
    assert text + "".join(lead.finished(a)) == "## Seat 1 · a · member\n\nhalf an ans\n\n> the connection dropped\n\n"


def test_once_the_lead_is_known_only_it_is_listened_to():
    woken = []
    live = LiveText(lambda: woken.append(1))
    lead = Lead(live)
    live.heard("c1", "a")
    live.heard("c2", "b")
    assert len(woken) == 1                                  # once, when text came to an empty store
    for h in live.take():
        lead.heard(h, seat(int(h.call[1]), h.call))
    live.heard("c2", "more b")
    live.heard("c1", "more a")
    assert [(h.call, h.text, h.pieces) for h in live.take()] == [("c1", "more a", 2)]
    lead.finished(seat(1, "c1", "a more a"))
    live.heard("c1", "after")
    assert live.take() == []


def test_new_text_is_read_at_once_after_a_quiet_spell_then_at_most_every_interval():
    live = LiveText(lambda: None)
    reads, pending = Reads(live), {"c1": None}
    live.heard("c1", "x")
    assert [h.text for h in reads.woken(100.0, pending)] == ["x"]
    live.heard("c1", "y")
    assert reads.woken(100.0 + EVERY / 2, pending) == []                  # too soon: it waits
    assert abs(reads.within(100.0 + EVERY / 2, 10.0) - EVERY / 2) < 1e-9  # ... no longer than the interval
    assert reads.due(100.0 + EVERY / 4 * 3, pending) == []
    assert [h.text for h in reads.due(100.0 + EVERY, pending)] == ["y"]
    assert Reads(None).within(0.0, 3.0) == 3.0 and Reads(None).due(1.0, pending) == []
