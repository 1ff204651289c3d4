"""One ask in flight: its plan, its seats as they finish, its deadlines (seat_timeout, the explore grace), the
seats' hang-ups, and its reply as data."""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..askparts import ANYONE, Asker
from ..canonical import EXPLORE, OK, Ask, PanelReply, Seat, Usage
from .blind import Unnamed
from .collection import Collection
from .once import Once
from .recorder import not_kept
from .seating import Plan

if TYPE_CHECKING:
    from .conversation import Thread
    from .live import LiveText


@dataclass(eq=False)   # by identity: a live run is kept in a set
class PanelRun:
    """One ask in flight: seats finish into a queue in completion order."""
    id: str
    ask: Ask
    collection: Collection | None
    plan: Plan
    deadline: float                                   # when the panel stops waiting: `hard`, or the explore grace's end
    hard: float = 0.0                                 # seat_timeout from the start: a seat out then is given up
    grace: float = 0.0                                # seconds for explore seats once every other seat is in
    seats: list = field(default_factory=list)        # Seat, in seat order
    done: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    merge_info: dict | None = None
    merge_usage: Usage = field(default_factory=Usage)
    points: dict | None = None                        # the points as the reply tells them (its `bench` fields)
    judging: object = None                            # its refereeing (core/judging.py), None when it shows no points
    referee_usage: Usage = field(default_factory=Usage)
    request: tuple[str, str] | None = None            # (summary, prompt hash) of the ask for the record, once a panel:
                                                      # the summary is kept in the panel's row, not in each seat's
    endpoints: dict = field(default_factory=dict)     # the registry's endpoints when the panel started
    memo: dict | None = None                          # the config as the ask read it (Config.steady), for its seats
    records: list = field(default_factory=list)       # its call records' writes (committed before the reply ends)
    left: int = 0                                     # seats not in yet
    members_left: int = 0                             # of them, seats not in that are not explore seats
    answered: bool = False                            # a seat is in with an answer
    graced: bool = False                              # the explore grace has begun (`deadline` moved up to its end)
    hangups: dict = field(default_factory=dict)       # call id -> Hangup, of the seats sent and not in
    timer: threading.Timer | None = None              # gives up at `hard` on seats left running past the grace
    ready: Once = field(default_factory=Once)        # set when the last seat is in, or the grace began
    lock: threading.Lock = field(default_factory=threading.Lock)
    gave_up: float | None = None                      # past the deadline, when (the ledger's clock) the seats not in
                                                      # were recorded as timed out: their lines are no older
    asker: Asker = ANYONE                             # who asked: for its records, never sent upstream
    limited: dict = field(default_factory=dict)       # call id -> when its limit resets (or None), of the seats a
                                                      # rate limit failed when sent (the provider's 429, or our own)
    retried: str | None = None                        # a retried seat's run: the call it replaces (core/again.py)
    again: dict = field(default_factory=dict)         # seat number -> the run of its latest retry
    live: LiveText | None = None                      # its seats' text as they write, when asked live
    unkept: str | None = None                         # why its records could not be kept (settled, a full disk):
                                                      # its reply then says so and names none of their ids
    hidden: Unnamed | None = None                     # a blind panel: what its reply names no model with
    thread: Thread | None = None                             # a follow-up's Thread (core/conversation.py): each seat's own
    task: bool = False                                # a chat UI's background task: one member, its answer bare

    collection_name: str | None = field(init=False, default=None)   # its collection's name (records name it a seat)
    # What a seat's (or the merge's) record keeps of the ask: its hash; the summary is in the panel's row. Made once
    # a run, not once a seat (its request stays as made); None only for a run made without one (a test's).
    seat_request: tuple[None, str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.collection_name = self.collection.name if self.collection else None   # (the collection stays as made)
        self.seat_request = (None, self.request[1]) if self.request is not None else None

    def reply(self) -> PanelReply:
        return PanelReply(self.collection.name if self.collection else self.ask.aim.name, self.id,
                          self.seats, merge_model=(self.merge_info or {}).get("model"))

    def usage(self) -> Usage:
        """Its tokens in all: the seats', the merge's and the referee's."""
        return self.reply().usage + self.merge_usage + self.referee_usage

    def bench(self) -> dict:
        d = self.reply().to_dict()
        if self.hidden:   # blind: Seat 1..N until judged (GET /bench/panels/{id} then says who sat where)
            d["seats"], d["blind"] = [self.hidden.seat(s) for s in d["seats"]], True
        d["mode"] = self.ask.aim.mode
        if self.plan.passed_over:
            d["passed_over"] = self.hidden.passed(self.plan.passed_over) if self.hidden else self.plan.passed_over
        if self.merge_info:
            d["merge"] = self.merge_info
        if self.points is not None:
            d.update(self.points)
            if self.hidden and d.get("points"):     # a seat's quoted words name no model either
                d["points"] = [dict(p, quotes={n: self.hidden.text(q) for n, q in p["quotes"].items()})
                               for p in d["points"]]
        if self.hidden:   # who was passed over (for explore, as referee or merge model) names no model either
            for key in ("merge", "points_info"):
                if d.get(key) and d[key].get("passed_over"):
                    d[key] = {**d[key], "passed_over": self.hidden.passed(d[key]["passed_over"])}
        if self.thread is not None:   # a follow-up: the panel it continued
            d["previous"] = self.thread.links.previous
        return not_kept(d, self.unkept) if self.unkept else d

    def hang_up(self, reason: str, tag: str) -> None:
        """Stop every seat still out: its upstream connection is shut down (a one-slot local server stops generating
        for nobody), and the seat comes back as `tag` (cancelled, or timeout when given up)."""
        with self.lock:
            hangups = list(self.hangups.values())
        for hangup in hangups:
            hangup.hang_up(reason, tag)

    def count_in(self, seat: Seat) -> bool:
        """(Lock held.) Counts a seat in; True when the explore grace begins with it: every seat but explore ones is
        in and one seat has answered, so the panel waits `grace` more seconds at most for the explore seats."""
        if seat.kind != EXPLORE:
            self.members_left -= 1
        self.answered = self.answered or seat.status == OK
        if self.graced or self.members_left or not self.answered:
            return False
        self.graced = True
        self.deadline = min(self.hard, time.monotonic() + self.grace)
        return True
