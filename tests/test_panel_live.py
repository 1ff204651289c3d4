"""Seats read as they write (issue 42, "Live columns"): a streamed reply streams its first seat to write as it writes,
the others' blocks after it; a whole reply asks remote seats whole; the text read at the end is the blocks' text."""
from __future__ import annotations

import json

import pytest

from tests.fakes import Reply
from tests.helpers.panel import body, fake, headings, setup_bench  # noqa: F401
from tests.helpers.http import Http
from tests.test_panel_stream import open_stream

WORDS = " ".join(f"word{n}" for n in range(1, 31))


@pytest.fixture
def two(home, fake, make_service):
    """duo = w (writes a word every 0.05 s) and f (answers after 0.3 s, after w began); the fake stands for a remote
    provider (stream_seats none: its seats are asked whole unless read as they write)."""
    setup_bench(home, fake, {"duo": {"members": ["w", "f"], "explore": 0, "points": "off"}},
                {"stream_seats": "none"}, w=("fake", "m-w"), f=("fake", "m-f"))
    fake.script("m-w", Reply(text=f"  {WORDS}\n\n\n", chunk_delay=0.05))
    fake.script("m-f", Reply(text="f is sure.", delay=0.3))
    return make_service()


def deltas(resp) -> list[str]:
    """The content of each chunk of a raw streamed body, in order."""
    out = []
    for line in iter(resp.fp.readline, b""):
        if line.startswith(b"data: [DONE]"):
            break
        if line.startswith(b"data: {"):
            chunk = json.loads(line[6:])
            if chunk.get("choices") and chunk["choices"][0]["delta"].get("content"):
                out.append(chunk["choices"][0]["delta"]["content"])
    return out


def test_the_first_seat_to_write_streams_as_it_writes_and_the_others_follow(two, fake):
    conn, resp = open_stream(two.url, body("bench/duo"))
    try:
        pieces = deltas(resp)
    finally:
        conn.close()
    text = "".join(pieces)
    assert [(m, s) for _, m, _, s in headings(text)] == [("w", ""), ("f", "")]   # f held until w was done
    w_pieces = [p for p in pieces if "word" in p]
    assert len(w_pieces) >= 4                     # w's text came in many pieces, not one block
    assert pieces[0].startswith("## Seat 1 · w · member\n\nword1")   # its heading, and its text as it comes
    whole = Http(two.url)("POST", "/v1/chat/completions", body("bench/duo"))[2]["choices"][0]["message"]["content"]
    block = lambda t, model: t[t.index(f"· {model} ·"):].split("## Seat")[0].rstrip()
    assert block(text, "w") == block(whole, "w")  # trimmed as its whole block is: the same text at the end
    assert block(text, "f") == block(whole, "f")
    asked = [(r.body["model"], bool(r.body.get("stream"))) for r in list(fake.requests) if r.body]
    assert ("m-w", True) in asked[:2] and ("m-f", True) in asked[:2]      # streamed reply: seats asked streamed
    assert ("m-w", False) in asked[2:] and ("m-f", False) in asked[2:]    # whole reply: remote seats asked whole


def test_a_lead_seat_that_fails_half_way_says_so_and_the_reply_goes_on(home, fake, make_service):
    setup_bench(home, fake, {"duo": {"members": ["w", "f"], "explore": 0, "points": "off"}},
                w=("fake", "m-w"), f=("fake", "m-f"))
    fake.script("m-w", Reply(text=WORDS, chunk_delay=0.05, drop_after=8))
    fake.script("m-f", Reply(text="f is sure.", delay=0.3))
    svc = make_service()
    conn, resp = open_stream(svc.url, body("bench/duo"))
    try:
        text = "".join(deltas(resp))
    finally:
        conn.close()
    assert "word3" in text and "word30" not in text
    w_block = text[text.index("· w ·"):text.index("## Seat 2")]
    assert "\n\n> " in w_block                     # how it ended, under what it wrote
    assert "f is sure." in text
