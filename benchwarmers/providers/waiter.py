"""One thread that waits for the answers to many requests already written (a panel's seats) on non-blocking sockets,
where a thread blocked in recv for each would cost a hand-off per seat while its model thinks."""
from __future__ import annotations

import heapq
import logging
import math
import select
import selectors
import socket
import threading
import time
from typing import Callable

from .transport import Sent

log = logging.getLogger("benchwarmers.waiter")
MOST = 400                  # requests watched at once (select() on Windows takes 512 sockets); past it, watch() says no
MAX_BUFFERED = 16 << 20     # an answer this large is read the blocking way, as it comes


def read_at_once(sent: Sent) -> bool:
    """Whether the answer to `sent` can be read with no wait on the network and no request sent again: all of a 2xx
    is in, or nothing came within the timeout (reading it then raises the timeout at once). Anything else (an error
    a provider may adapt to and send again, a stale connection to replace, an answer still coming) may block."""
    assert sent.conn is not None     # sent: it has its connection
    status = sent.conn.whole()
    return sent.expired or (status is not None and 200 <= status < 300)


class _Epoll:
    """What the waiter asks of a selector, on epoll itself: selectors' register and unregister each go through four
    layers of Python, twice a request. The same refusals: a socket registered twice (or a new one on the number of
    one closed while registered) is a KeyError, one closed is an OSError; unregistering one closed meanwhile
    forgets it all the same."""
    live = True                   # epoll sees a socket registered while another thread waits in it

    def __init__(self):
        self._epoll = select.epoll()
        self._data: dict = {}     # fd -> what select() gives for it
        self._fds: dict = {}      # socket -> its fd when it was registered (a closed socket's fileno() is -1)

    def register(self, sock, data) -> None:
        fd = sock.fileno()
        if fd in self._data:
            raise KeyError(f"{sock!r} (fd {fd}) is already registered")
        self._epoll.register(fd, select.EPOLLIN)
        self._data[fd], self._fds[sock] = data, fd

    def unregister(self, sock) -> None:
        fd = self._fds.pop(sock)
        del self._data[fd]
        try:
            self._epoll.unregister(fd)
        except OSError:           # closed meanwhile: the kernel forgot it already
            pass

    def select(self, timeout: float | None) -> list:
        """What was registered for each socket that is ready (or ended, or failed), within `timeout` seconds."""
        if timeout is None:
            timeout = -1
        elif timeout <= 0:
            timeout = 0
        else:   # rounded up to the millisecond, as epoll counts: rounded down, it would wake just before it is due
            timeout = math.ceil(timeout * 1e3) * 1e-3
        ready = self._epoll.poll(timeout, max(len(self._data), 1))   # a signal: retried by Python (PEP 475)
        data = self._data
        return [data[fd] for fd, _event in ready if fd in data]

    def close(self) -> None:
        self._epoll.close()
        self._data.clear()
        self._fds.clear()


class _Selector:
    """The same on selectors' DefaultSelector, where there is no epoll."""

    def __init__(self):
        self._selector = selectors.DefaultSelector()
        # kqueue sees a socket registered while another thread waits in it; select() and poll() do not
        self.live = type(self._selector).__name__ in ("KqueueSelector", "DevpollSelector")

    def register(self, sock, data) -> None:
        self._selector.register(sock, selectors.EVENT_READ, data)

    def unregister(self, sock) -> None:
        self._selector.unregister(sock)

    def select(self, timeout: float | None) -> list:
        return [key.data for key, _events in self._selector.select(timeout)]

    def close(self) -> None:
        self._selector.close()


class Waiter:
    """watch(sent, heard): heard(sent) is called on the waiter's thread once the response can be read with no wait
    for the network (all of it is in, or the connection ended), or once it has waited its timeout: nothing came
    within the first-byte timeout (sent.expired; receive() then says so at once), or the rest of a started answer
    not within the idle timeout. heard() decides whether to read it there or hand it to a thread that may block."""

    def __init__(self):
        self._selector = _Epoll() if hasattr(select, "epoll") else _Selector()
        self._live = self._selector.live
        self._wake_in, self._wake_out = socket.socketpair()
        for sock in (self._wake_in, self._wake_out):
            sock.setblocking(False)
        self._selector.register(self._wake_in, None)
        self._lock = threading.Lock()  # the watched requests, their timeouts and the selector's registrations
        # sent -> (sent, heard): a Sent hashes as itself (no id() call a look-up)
        self._watched: dict[Sent, tuple] = {}
        self._expiries: list = []     # (when, n, sent): a heap, stale entries skipped
        self._order = 0               # the n of the next entry (with the lock held), so no two entries compare sents
        self._asleep = False          # the thread waits in select() ...
        self._wake_at = math.inf      # ... until this time at the latest
        self._closed = False
        self._thread: threading.Thread | None = None
        self.passed_on = 0            # answers heard of so far (for tests and the curious)

    def watch(self, sent: Sent, heard: Callable[[Sent], None]) -> bool:
        """Wait for `sent`'s response on the waiter's thread; False (and nothing changed) when it is closed or full."""
        with self._lock:
            if self._closed or len(self._watched) >= MOST:
                return False
            assert sent.conn is not None
            try:
                self._selector.register(sent.conn.sock, (sent, heard))
            except (ValueError, KeyError, OSError):   # a socket it cannot wait on: a worker reads it instead
                return False
            # non-blocking from its first drain(), which sets it: nothing reads it before
            sent.since = time.monotonic()
            due = sent.since + sent.t.first_byte
            self._watched[sent] = (sent, heard)
            self._order += 1
            heapq.heappush(self._expiries, (due, self._order, sent))
            # a waiting select() must start again to see it (select, poll) or to wake by its timeout (an earlier one)
            wake = self._asleep and (not self._live or due < self._wake_at)
            if wake:
                self._asleep = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="waiter", daemon=True)
                self._thread.start()
        if wake:
            self._nudge()
        return True

    def close(self) -> None:
        """Stop: what is still watched is given up (its connections closed)."""
        with self._lock:
            self._closed, started = True, self._thread is not None
        if not started:
            self._selector.close()
            self._wake_in.close()
            self._wake_out.close()
            return
        self._nudge()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)

    def _nudge(self) -> None:
        try:
            self._wake_out.send(b"!")
        except OSError:   # a full wake-up pipe wakes it all the same; a closed one: it has stopped
            pass

    # ---- the waiter's thread ------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                try:
                    if not self._turn():
                        break
                except Exception:   # e.g. select() on a socket closed under it: the workers take over what it held
                    log.exception("the waiter failed; what it waited for is read the blocking way")
                    self._give_all()
        finally:
            with self._lock:
                watched, self._watched = list(self._watched.values()), {}
            for sent, _heard in watched:
                sent.close()
            self._selector.close()
            self._wake_in.close()
            self._wake_out.close()

    def _turn(self) -> bool:
        """Wait for the network or the next timeout, pass on what is ready. False: closed."""
        with self._lock:
            if self._closed:
                return False
            timeout = self._timeout()
            self._wake_at = math.inf if timeout is None else time.monotonic() + timeout
            self._asleep = True
        ready = self._selector.select(timeout)
        with self._lock:
            self._asleep = False
        for data in ready:
            if data is None:
                self._drain_wake()
            elif data[0] in self._watched:
                self._readable(*data)
        self._expire()
        return True

    def _readable(self, sent: Sent, heard: Callable) -> None:
        conn = sent.conn
        assert conn is not None
        if conn.drain():
            sent.since = time.monotonic()
        # a stream is passed on as soon as it starts: its reader then hears each piece as it comes
        if conn.ended or conn.whole() is not None or conn.buffered > MAX_BUFFERED or (sent.streamed and conn.buffered):
            self._pass_on(sent, heard)

    def _timeout(self) -> float | None:
        while self._expiries and self._expiries[0][2] not in self._watched:
            heapq.heappop(self._expiries)
        return max(0.0, self._expiries[0][0] - time.monotonic()) if self._expiries else None

    def _expire(self) -> None:
        now, due_now = time.monotonic(), []
        with self._lock:
            while self._expiries and self._expiries[0][0] <= now:
                _when, _n, sent = heapq.heappop(self._expiries)
                watched = self._watched.get(sent)
                if watched is None:
                    continue
                due = sent.since + (sent.t.idle if sent.conn.buffered else sent.t.first_byte)
                if due > now:        # it heard something since: its idle timeout counts from then
                    self._order += 1
                    heapq.heappush(self._expiries, (due, self._order, sent))
                    continue
                sent.expired = not sent.conn.buffered
                due_now.append(watched)
        for sent, heard in due_now:
            self._pass_on(sent, heard)

    def _prune(self) -> None:
        """Drop the timeouts of requests already passed on (with the lock held): each entry keeps its request alive,
        so a heap that only dropped them as they came due would hold every answered request of the last timeout's
        span, tens of thousands under load. Rebuilt once as many have gone as are watched: O(1) a request."""
        watched = self._watched
        self._expiries = [e for e in self._expiries if e[2] in watched]
        heapq.heapify(self._expiries)

    def _give_all(self) -> None:
        with self._lock:
            watched = list(self._watched.values())
        for sent, heard in watched:
            self._pass_on(sent, heard)

    def _pass_on(self, sent: Sent, heard: Callable) -> None:
        with self._lock:
            assert sent.conn is not None
            try:
                self._selector.unregister(sent.conn.sock)
            except (KeyError, ValueError, OSError):   # a socket closed meanwhile
                pass
            del self._watched[sent]
            self.passed_on += 1
            if len(self._expiries) > 2 * len(self._watched) + 64:
                self._prune()
        try:
            heard(sent)
        except Exception:   # heard() reports its own faults; a bug there must not stop the other seats' waiting
            log.exception("a watched request's handler failed")
            sent.close()

    def _drain_wake(self) -> None:
        try:
            while self._wake_in.recv(4096):
                pass
        except OSError:
            pass
