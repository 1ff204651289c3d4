"""Run a blocking event generator on a worker and hand its events over a queue, with keep-alives while it waits."""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Executor
from typing import Iterable, Iterator

from ..canonical import KeepAlive
from .lanes import LaneExecutor

_END = object()


def pump(events: Iterable, executor: Executor | LaneExecutor, keepalive: float) -> Iterator:
    """Yield what `events` yields; KeepAlive() after every `keepalive` seconds of silence.
    Closing this generator (client gone) tells the worker to stop pulling at its next event."""
    q: queue.Queue = queue.Queue()
    stop = threading.Event()

    def work():
        try:
            for ev in events:
                q.put(ev)
                if stop.is_set():
                    break
        except BaseException as e:   # handed over, re-raised on the reading side
            q.put(_Raised(e))
        finally:
            close = getattr(events, "close", None)
            if close:
                close()
            q.put(_END)

    executor.submit(work)
    try:
        while True:
            try:
                item = q.get(timeout=keepalive)
            except queue.Empty:
                yield KeepAlive()
                continue
            if item is _END:
                return
            if isinstance(item, _Raised):
                raise item.error
            yield item
    finally:
        stop.set()


class _Raised:
    def __init__(self, error: BaseException):
        self.error = error
