"""A standing's packed windows (its latest answer times, its latest judged answers and point claims), changed
in place and made good from the history by index when a change takes an entry out of a full one."""
from __future__ import annotations

import bisect
import struct

KINDS_SQL = "('member', 'explore', 'with', 'route', 'shadow')"   # the calls that count (store/standings.py)
SPEED = struct.Struct("<dd")      # (created, seconds)
JUDGED = struct.Struct("<dB")     # (created, value): a judged answer's value is 1 useful, 0 not; a point claim's
CLAIM = 2                         # CLAIM + 1 real, CLAIM false (so the record can weigh a claim as it weighs one)
NONE = ""                         # the scope of calls of no collection (a model asked directly)


def appended(shape: struct.Struct, packed: bytes | None, size: int, ops: list) -> bytes | None:
    """The window with `ops` done, when they only add entries newer than all it holds (nearly every write: answers
    come in order), without unpacking it; None otherwise (Window does the rest)."""
    if min(ops)[0] < 0:   # (lists, not generators: this runs for every standing a batch changes)
        return None
    entries = sorted([entry for _, entry in ops])
    packed = packed or b""
    if packed and shape.unpack_from(packed, len(packed) - shape.size) > entries[0]:
        return None
    out = packed + b"".join([shape.pack(*e) for e in entries])
    return out[-size * shape.size:]


class Window:
    """The latest `size` entries of a standing, sorted oldest first; entries are (created, value) tuples."""

    def __init__(self, shape: struct.Struct, packed: bytes | None, size: int):
        self.shape, self.size = shape, size
        self.entries = list(shape.iter_unpack(packed)) if packed else []

    def pack(self) -> bytes:
        return b"".join(self.shape.pack(*e) for e in self.entries)

    def change(self, ops: list, total: int, refill) -> None:
        """Take away each (-1, entry), then add each (1, entry); `total`: entries of the standing before, in the
        history. What is taken from a full window is made good from the history (`refill(below, n)`: the n latest
        entries at or older than `below`), so the window is always the latest `size` of them."""
        for sign, entry in ops:
            if sign < 0:
                total -= 1
                at = bisect.bisect_left(self.entries, entry)
                if at < len(self.entries) and self.entries[at] == entry:
                    del self.entries[at]
                    want = min(self.size, total) - len(self.entries)
                    if want > 0:
                        self.entries[:0] = self._older(refill, want)
        for sign, entry in ops:
            if sign > 0:
                bisect.insort(self.entries, entry)
                if len(self.entries) > self.size:
                    del self.entries[0]

    def _older(self, refill, want: int) -> list:
        """The `want` latest entries of the history older than the window's first, or equal to it and not in the
        window: several entries may be equal (a seat's point claims share its call's moment), so those equal to the
        first are read too and the window's own copies left out."""
        below = self.entries[0] if self.entries else None
        same = self.entries.count(below) if below is not None else 0
        got = sorted(refill(below, want + same))
        for _ in range(same):
            if below in got:
                got.remove(below)
        return got[-want:]


def _scope_sql(scope: str, alias: str = "") -> tuple[str, tuple]:
    column = f"{alias}collection"
    return (f"{column} IS NULL", ()) if scope == NONE else (f"{column} = ?", (scope,))


def _older(alias: str, below: tuple | None, second: str) -> tuple[str, tuple]:
    """Entries older than `below` ((created, value)) or equal to it; the plain `created <= ?` is the index's range to
    walk down."""
    if below is None:
        return "1", ()
    return (f"{alias}created <= ? AND ({alias}created < ? OR {second} <= ?)", (below[0], below[0], below[1]))


def refill_speed(conn, key: tuple, below: tuple | None, n: int, exclude: str | None) -> list:
    """The n latest answered calls of a standing at or older than `below`, from the history (the model's index)."""
    scope, params = _scope_sql(key[1])
    older, more = _older("", below, "seconds")
    rows = conn.execute(f"SELECT created, seconds FROM calls WHERE model = ? AND {scope} AND kind IN {KINDS_SQL} "
                        f"AND status = 'ok' AND seconds IS NOT NULL AND {older} AND id IS NOT ? "
                        "ORDER BY created DESC, seconds DESC LIMIT ?", (key[0], *params, *more, exclude, n))
    return [(r[0], r[1]) for r in rows]


def refill_judged(conn, key: tuple, below: tuple | None, n: int, exclude: str | None) -> list:
    """The n latest judged answers and point claims (entries CLAIM + real) of a standing at or older than `below`, from
    the history (`exclude`: the call whose verdict is changing; its point claims stay)."""
    scope, params = _scope_sql(key[1], "c.")
    older, more = _older("c.", below, "v.useful")
    rows = conn.execute(f"SELECT c.created, v.useful FROM calls c JOIN verdicts v ON v.call = c.id AND v.current = 1 "
                        f"WHERE c.model = ? AND {scope} AND c.kind IN {KINDS_SQL} AND {older} AND c.id IS NOT ? "
                        "ORDER BY c.created DESC, v.useful DESC LIMIT ?", (key[0], *params, *more, exclude, n))
    found = [(r[0], int(r[1])) for r in rows]
    if has_point_claims(conn):
        older, more = _older("c.", below, f"{CLAIM} + pc.real")
        found += [(r[0], int(r[1])) for r in conn.execute(
            f"SELECT c.created, {CLAIM} + pc.real FROM calls c JOIN point_claims pc ON pc.call = c.id WHERE c.model = ? "
            f"AND {scope} AND c.kind IN {KINDS_SQL} AND {older} ORDER BY c.created DESC, pc.real DESC LIMIT ?",
            (key[0], *params, *more, n))]
    return sorted(found)[-n:]


def has_point_claims(conn) -> bool:
    """Whether the points' migration has run (a migration before it rebuilds the standings without them)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'point_claims'").fetchone() \
        is not None
