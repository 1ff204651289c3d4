"""One panel's refereeing as it goes: chosen at the panel's start, asked once its seats are in, over once; what a
reply says of it meanwhile (pending, and where the points will be)."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..canonical import Answer, Ask, Usage
from ..providers.hangup import Hangup
from ..roster.registry import Model
from ..store.ids import record_id
from .once import Once

if TYPE_CHECKING:
    from .points import Points


def where(panel: str) -> dict:
    """Where a panel's points are read once they are in: the API, the command, the ask's page."""
    return {"url": f"/bench/panels/{panel}/points", "command": f"bench points {panel}", "page": f"/calls/{panel}"}


class Judging:
    """`model` None: no model could referee (`why` says so). `notes`: the named referees passed over, with why."""

    def __init__(self, run, mode: str, model: Model | None, notes: list[dict], why: str | None):
        # `run` until the refereeing is over, then None: a run and its judging refer to each other, and a cycle is
        # freed only by the cyclic GC's oldest generation (a panel's objects piling up for it, then a long pass)
        self.run, self.mode, self.model, self.notes, self.why = run, mode, model, notes, why
        self.panel: str = run.id
        self.collection_name: str | None = run.collection_name   # read after the run is let go (_unavailable)
        self._where = where(self.panel)
        self.call = record_id()            # named to a client only once its record is committed
        self.hangup = Hangup()
        self.done = Once()
        self.once = threading.Lock()       # the one end of it takes it (and keeps it)
        self.over = False
        self.started = 0.0
        self.deadline: tuple = (float("inf"), "")   # (when it is given up, why), once asked
        self.shown: list = []              # the seats in the order the referee read them (its seat N: shown[N-1])
        self.ask: Ask | None = None          # the referee's, once asked
        self.call_over: tuple[str, str | None, bool, Answer | None, float] | None = None
        #                                     # (status, error, sent, answer, seconds) once the call is over
        self.usage = Usage()
        self.bench: dict | None = None     # `points` and `points_info` once over
        self.found: Points | None = None   # the Points it gave (a reply renders its block from them)
        self.records: list = []            # its writes (the call, the points), committed before a reply names them

    def info(self) -> dict:
        """What the points' info says of who referees, and where the points are read."""
        d = {"mode": self.mode, "referee": self.model.alias if self.model else None, **self._where}
        if self.notes:
            d["passed_over"] = list(self.notes)
        return d

    def pending(self) -> dict:
        return {**self.info(), "pending": True}

    def pending_line(self) -> str:
        """The one line a reply ends with when its points are not in yet."""
        pid = self.panel
        return (f"_Points: the referee {self.model.alias if self.model else '-'} is still reading the answers; they "
                f"will be at /bench/panels/{pid}/points (`bench points {pid}`) and on the ask's page /calls/{pid}._\n")

    def notes_line(self) -> str:
        """The named referees passed over, and why (after the block or the pending line)."""
        if not self.notes:
            return ""
        said = "; ".join(f"{n['model']} ({n['reason']})" for n in self.notes)
        return f"\n_Referee {self.model.alias if self.model else 'none'}; passed over: {said}._\n"
