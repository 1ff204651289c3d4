"""Seats shown as they write: what each seat of a live panel wrote since it was last read (the Ask page's columns),
and a streamed reply's text with its first seat to write streamed as it writes (`Lead`)."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Iterator

from ..canonical import OK, KeepAlive, Seat, TextDelta
from .blind import Unnamed
from .panelwords import seat_block, seat_heading

WAKE = object()   # in a live run's queue of finished seats: new text to read (run.live)
EVERY = 0.05   # seconds a live panel's reader lets text gather between reads: one line a column a read, not a token


@dataclass
class Heard:
    """A seat's text written since the last read, and how many pieces (tokens, near enough) it has written so far."""
    call: str
    text: str
    pieces: int


class LiveText:
    """Each live seat's new text, gathered under a lock by the threads reading the seats' streams; `wake` is called
    once when text comes to an empty store (the panel's reader then takes it all at once), not once a token.
    `only`: the one seat still listened to (a streamed reply's lead; "" for none), when not every seat is."""

    def __init__(self, wake: Callable[[], None]):
        self._new: dict[str, list[str]] = {}
        self._pieces: dict[str, int] = {}
        self._lock = threading.Lock()
        self._wake = wake
        self.only: str | None = None

    def heard(self, call: str, text: str) -> None:
        if self.only is not None and call != self.only:   # nobody reads it: no lock, no wake-up
            return
        with self._lock:
            first = not self._new
            self._new.setdefault(call, []).append(text)
            self._pieces[call] = self._pieces.get(call, 0) + 1
        if first:
            self._wake()

    def forget(self, call: str) -> None:
        """A seat begins again (retried): its count starts from nothing."""
        with self._lock:
            self._new.pop(call, None)
            self._pieces.pop(call, None)

    def take(self) -> list[Heard]:
        with self._lock:
            new, self._new = self._new, {}
            return [Heard(call, "".join(parts), self._pieces[call]) for call, parts in new.items()]


class Reads:
    """When a live run's reader takes its seats' new text: at once when it comes after a quiet spell, else once
    EVERY seconds have passed since the last read (the text gathers meanwhile: one read, one line a column, for many
    tokens), without holding up a seat that finishes meanwhile. For a run that is not live, never."""

    def __init__(self, live: LiveText | None):
        self.live, self.last = live, float("-inf")
        self.next: float | None = None      # when the text that came too soon is read

    def within(self, now: float, wait: float) -> float:
        """How long the reader may wait for its queue: `wait`, or less when a read is due sooner."""
        return wait if self.next is None else min(wait, max(self.next - now, 0.0))

    def woken(self, now: float, pending: dict) -> list[Heard]:
        """New text came to an empty store: read it now, or once the interval is up (`due`)."""
        if now - self.last >= EVERY:
            return self._read(now, pending)
        self.next = self.last + EVERY
        return []

    def due(self, now: float, pending: dict) -> list[Heard]:
        return self._read(now, pending) if self.next is not None and now >= self.next else []

    def _read(self, now: float, pending: dict) -> list[Heard]:
        self.last, self.next = now, None
        if self.live is None:      # never woken: a run that is not live has nothing to read
            return []
        return [h for h in self.live.take() if h.call in pending]   # a seat done already: its answer has it all


def deltas(items: Iterator, run, merged: bool, said: list) -> Iterator:
    """The seats' part of a streamed reply, from Panel.finished's items: keep-alives as they are, each seat's block
    as a TextDelta as it finishes (none for a merged reply: the merge follows; a background task's answer bare), and
    a live run's lead seat's text as it writes (`Lead`). What goes out is added to `said` too (the reply's text)."""
    lead, seats = Lead(run.live, run.hidden), {s.call: s for s in run.seats}
    for item in items:
        if isinstance(item, KeepAlive):
            yield item
        elif isinstance(item, Heard) or not merged:
            if isinstance(item, Heard):
                texts = [lead.heard(item, seats.get(item.call))]
            else:
                texts = [item.answer] if run.task and item.status == OK else lead.finished(item)
            for text in filter(None, texts):
                said.append(text)
                yield TextDelta(text)


class Lead:
    """A streamed reply's text as it goes: the first seat to write is streamed under its heading as it writes, and
    every other seat's block follows whole once that seat is done (in the order they finished), so the text read
    at the end is what a whole reply's blocks say; each seat's block still begins a delta of its own (a client may
    tell the seats apart so: `bench ask` does), the lead's first delta with its heading. The lead's text is sent
    without its leading and trailing blank space, as its block has it; if its end differs from what was sent (cut
    at its cap, failed half-way), a line saying how it ended closes it. Once the lead is known only its text is
    listened to (`live`), and none once it is done."""

    def __init__(self, live: LiveText | None = None, hidden: Unnamed | None = None):
        self.live, self.hidden = live, hidden   # a blind panel: no lead (a name may be cut across pieces), blocks masked
        self.call: str | None = None
        self.head = self.sent = self.space = ""
        self.over = False
        self.held: list[Seat] = []

    def heard(self, item: Heard, seat: Seat | None) -> str:
        """What to send of a seat's new text ("" for nothing): the lead's, under its heading the first time."""
        if self.over or self.hidden or seat is None or (self.call is not None and item.call != self.call):
            return ""
        head = ""
        if self.call is None:
            self.call, self.head = item.call, seat_heading(seat) + "\n\n"
            head = self.head
            if self.live is not None:
                self.live.only = self.call
        text = self.space + item.text
        if not self.sent:
            text = text.lstrip()
        body = text.rstrip()
        self.space = text[len(body):]
        self.sent += body
        return head + body

    def finished(self, seat: Seat) -> list[str]:
        """What to send now a seat is done (nothing yet, while the lead writes): its block, or the lead's end and the
        blocks held, a delta each."""
        if self.call is None or self.over:
            return [seat_block(seat, self.hidden)]
        if seat.call != self.call:
            self.held.append(seat)
            return []
        self.over = True
        if self.live is not None:
            self.live.only = ""
        block, sent = seat_block(seat), self.head + self.sent
        end = block[len(sent):] if block.startswith(sent) else f"\n\n> {seat.error or seat.outcome()}\n\n"
        held, self.held = self.held, []
        return [end, *map(seat_block, held)]
