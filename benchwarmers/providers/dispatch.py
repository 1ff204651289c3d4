"""Sending one member call without saying how the bytes move: written now and heard by the waiter, asked by a worker
that waits, or through the llm client; the caller is told once, with the Answer or the error."""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator

from ..askparts import NO_PASSTHROUGH, PassThrough
from ..canonical import Answer, Ask, estimate_usage
from .base import Heard, Provider
from .llmcalls import LlmCalls
from .transport import Sent, Timeouts
from .waiter import Waiter, read_at_once

# What a dispatched call says when it is over: (the call, its Answer or None, the error that ended it or None).
Done = Callable[["Call", "Answer | None", "BaseException | None"], None]
# Runs a function on a thread that may block; `starting` True when that function is the one that sends the call
# (the caller may then decline to start it, late, and report the call itself).
Worker = Callable[[Callable[[], None], bool], None]


class SeatTap:
    """What a panel knows of a seat's call before it goes: the id its record will have, and who hears it write.
    Read-only by use; a plain class, as one is made each seat (a frozen dataclass sets each field with a call)."""
    __slots__ = ("record", "heard")

    def __init__(self, record: str | None = None, heard: Heard | None = None):
        self.record, self.heard = record, heard

    def __repr__(self) -> str:
        return f"SeatTap(record={self.record!r}, heard={self.heard!r})"


NO_TAP = SeatTap()


@dataclass
class Call:
    """One member call to dispatch: `client` is a Provider or the llm client; `admit(wait)` counts it against the
    rate limits (False: not without a wait; QuotaRefused: not at all); `started` is when it was last set going.
    `streamed`: asked for a stream (collected into the whole answer) rather than whole, so that hanging it up stops
    the upstream's work; None: `local()`, which may wait for DNS, decides on the worker that asks it. `heard`: told
    the answer's text as it is read (a live column; the call is then asked streamed, on a worker)."""
    client: Provider | LlmCalls
    ask: Ask
    served: str
    timeouts: Timeouts
    admit: Callable[[bool], bool]
    reported: Ask | None = None      # the ask its usage is estimated against (the client's, not the budgeted one)
    started: float = 0.0
    streamed: bool | None = False
    local: Callable[[], bool | None] | None = None
    heard: Heard | None = None


class Dispatch:
    """The one way core sends a member's call; it picks the request's shape (streamed, the client's own body, or
    whole) and the path (the waiter, a worker, llm) from the call itself."""

    def __init__(self):
        self.waiter = Waiter()

    def close(self) -> None:
        self.waiter.close()

    def stream(self, client: Provider | LlmCalls, ask: Ask, served: str, timeouts: Timeouts,
               native: PassThrough = NO_PASSTHROUGH) -> Iterator:
        """The member's events: the client's own body (`native`) when client and member speak the same API (the
        client's format declared which), so nothing is lost; never through llm."""
        if isinstance(client, Provider) and native.takes(client.api):
            return client.stream(ask, served, timeouts=timeouts, native=native)
        return client.stream(ask, served, timeouts=timeouts)

    def submit(self, call: Call, worker: Worker, done: Done) -> None:
        """Send `call`: written now on a kept-alive connection and heard by the waiter (no thread waits while the model
        thinks; a streamed call is passed on to a worker that reads it as it comes as soon as its answer starts, or
        read at once when it is all in), or, where that cannot be (through llm, a limit to wait for, no connection
        free, a local server not known yet), asked by a `worker` that waits; a hang-up wakes whichever thread waits.
        `done` is called once, on whichever thread finished it."""
        call.started = time.monotonic()
        try:
            if not isinstance(call.client, Provider) or call.streamed is None or not call.admit(False):
                worker(partial(self._ask, call, done, False), True)
                return
            sent = call.client.send_whole(call.ask, call.served, timeouts=call.timeouts, streamed=call.streamed)
        except Exception as exc:   # a limit refused it, or its request could not be written: the call is over
            done(call, None, exc)
            return
        if sent is None:
            worker(partial(self._ask, call, done, True), True)
        elif not self.waiter.watch(sent, partial(self._heard, call, worker, done)):
            worker(partial(self._read, call, done, sent), False)

    def _heard(self, call: Call, worker: Worker, done: Done, sent: Sent) -> None:
        """The waiter heard back: read on its thread what can be read at once, anything else by a worker."""
        if read_at_once(sent):
            self._read(call, done, sent)
        else:
            worker(partial(self._read, call, done, sent), False)

    def _read(self, call: Call, done: Done, sent: Sent) -> None:
        client = call.client
        assert isinstance(client, Provider)   # only a Provider's request is written ahead (_send)
        self._finish(call, done, partial(client.complete, call.ask, call.served, timeouts=sent.t, sent=sent,
                                         heard=call.heard))

    def _ask(self, call: Call, done: Done, admitted: bool) -> None:
        call.started = time.monotonic()

        def ask() -> Answer:
            if call.streamed is None:
                assert call.local is not None      # None: local() decides
                call.streamed = call.local()
            if not admitted:
                call.admit(True)
            if isinstance(call.client, Provider):
                return call.client.complete(call.ask, call.served, timeouts=call.timeouts, whole=not call.streamed,
                                            heard=call.heard)
            # llm: it streams every call anyway
            return call.client.complete(call.ask, call.served, timeouts=call.timeouts, heard=call.heard)
        self._finish(call, done, ask)

    @staticmethod
    def _finish(call: Call, done: Done, ask: Callable[[], Answer]) -> None:
        try:
            answer = ask()
            estimate_usage(answer, call.reported or call.ask)
        except Exception as exc:   # every fault, ours too, goes to `done`: it decides what the call's status is
            done(call, None, exc)
            return
        done(call, answer, None)
