"""bench ask's view of a streamed panel: who it still waits for (on a terminal's stderr), and the seats' answers
on stdout: as they finish on a terminal, in seat order otherwise (a file or a pipe gets a stable order)."""
from __future__ import annotations

import queue
import re
import threading
import time
from typing import Iterable, Iterator, TextIO
from urllib.parse import unquote

from .output import for_terminal

HEADING = re.compile(r"^## Seat (\d+) · ([^\n]*)")
# What follows the seats: the points block, the line saying where they will be, a referee's note, the not-kept note
AFTER = re.compile(r"\n*(## Where they disagree\n|_Points: |_Referee |> \*\*Not recorded:\*\*)")
TICK = 1.0      # seconds between updates of the waiting line


def planned_seats(header: str | None) -> list[str]:
    """The seats' models in seat order, from the service's x-bench-seats header."""
    return [unquote(name.strip()) for name in (header or "").split(",") if name.strip()]


class PanelView:
    """Writes a panel's text as it streams; `ticks` says whether to keep a waiting line on `err`."""

    def __init__(self, seats: list[str], merged: bool, out: TextIO, err: TextIO, *, ticks: bool, in_order: bool):
        self.planned = dict(enumerate(seats, 1))     # seat number -> model
        self.pending = dict(self.planned)             # ... until its block arrives
        self.heard: dict[int, str] = {}               # seat number -> its heading after the number (model · kind ...)
        self.merged, self.out, self.err = merged, out, err
        self.ticks, self.in_order = ticks, in_order
        self.started = time.monotonic()
        self.blocks: dict[int, str] = {}              # held back to print in seat order
        self.open: int | None = None                  # the seat whose text may go on (one streamed as it writes)
        self.after = ""                               # held back too: what follows the seats (their points)
        self.ended = ""
        self._shown = 0                               # width of the waiting line on screen

    def text(self, text: str) -> None:
        """One piece of the reply's text: a seat's block (each begins a piece of its own; the first seat to write
        goes on in the pieces after it), what follows the seats, or a piece of the merged answer."""
        match = None if self.merged else HEADING.match(text)
        if match:
            self.open = int(match.group(1))
            self.pending.pop(self.open, None)
            self.heard[self.open] = match.group(2)
            if self.in_order:
                self.blocks[self.open] = text
                return
        elif not self.merged and self.open is not None and not AFTER.match(text):   # a seat's text going on
            if self.in_order:
                self.blocks[self.open] += text
                return
        elif self.in_order and not self.merged:       # after the seats (where they disagree): after them in order
            self.open = None
            self.after += text
            return
        elif self.merged:
            self.pending.clear()                      # the merge is writing: the seats are done
        self.clear()
        self.write(text)

    def write(self, text: str) -> None:
        self.out.write(for_terminal(text, self.out))     # upstream text: no escape sequence drives a terminal
        self.out.flush()
        self.ended = text or self.ended

    def tick(self) -> None:
        """Redraw the waiting line: the models not answered yet and the seconds since the ask."""
        if not self.ticks or not self.pending:
            return self.clear()
        names = ", ".join(self.pending.values())
        if self.merged:
            names = f"{names}, then the merge"
        line = f"waiting: {names} {time.monotonic() - self.started:.0f} s"
        self.err.write("\r" + line.ljust(self._shown))
        self.err.flush()
        self._shown = len(line)

    def clear(self) -> None:
        if self._shown:   # spaces, not an escape sequence: every console understands them
            self.err.write("\r" + " " * self._shown + "\r")
            self.err.flush()
            self._shown = 0

    def so_far(self) -> list[list]:
        """[seat, model, what is known] of every seat: its heading's words, or still waiting (a reply cut short)."""
        rows = []
        for number, model in self.planned.items():
            said = self.heard.get(number)
            if said is None:
                rows.append([number, model, "", "no answer yet"])
                continue
            parts = said.split(" · ")
            rows.append([number, parts[0], parts[1] if len(parts) > 1 else "",
                         parts[2] if len(parts) > 2 else "ok"])
        return rows

    def finish(self) -> None:
        """Print what was held back, in seat order, and end on a newline."""
        self.clear()
        for number in sorted(self.blocks):
            self.write(self.blocks[number])
        self.blocks.clear()
        if self.after:
            self.write(self.after)
            self.after = ""
        if not self.ended.endswith("\n"):
            self.write("\n")


def ticking(items: Iterable, every: float, tick) -> Iterator:
    """`items`, read on a thread so `tick()` runs every `every` seconds while the next one is awaited; an error
    of the reader is raised here."""
    box: queue.Queue = queue.Queue()
    done = object()

    def read() -> None:
        try:
            for item in items:
                box.put((item, None))
        except BaseException as e:   # handed to the main thread, which raises it
            box.put((None, e))
        box.put((done, None))

    threading.Thread(target=read, daemon=True, name="ask-reader").start()
    while True:
        try:
            item, error = box.get(timeout=every)
        except queue.Empty:
            tick()
            continue
        if error is not None:
            raise error
        if item is done:
            return
        yield item
