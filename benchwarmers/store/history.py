"""The history of asks: panels and route turns, newest first, filtered and paged, each with its seats and verdicts."""
from __future__ import annotations

import json
import re
import time

from .calls import as_read, request_of
from .db import Database
from .verdicts import as_dict

SCAN = 2000          # asks each kind of item a page looks through at most for its matches (then: `searched_to`)
COUNT_CAP = 10_000   # a count of every ask stops here ("10,000+")
COUNT_SCAN = 1000    # a count of the asks a filter keeps looks through the latest this many
CURSOR = re.compile(r"^(\d{1,12}(?:\.\d{1,9})?)~([A-Za-z0-9_-]{1,64})$")
# The two kinds of item, newest first by (created, id) on their own index: panels, and route turns (their call).
SOURCES = {"panel": "panels h", "route": "calls h"}
BASE = {"panel": "1", "route": "h.kind = 'route'"}
# A blind panel not judged yet: its list entry names no model (Seat N) until a judgement shows who sat where.
HIDDEN = {"panel": "h.blind = 1 AND h.revealed IS NULL", "route": "0"}
JUDGED = "EXISTS (SELECT 1 FROM verdicts v WHERE v.call = {call} AND v.current = 1)"
# Each filter for each kind: a panel's by its seats (calls_panel), a route turn's by its own call. A blind panel not
# judged yet is never found by a model: being listed would say that model sat on it.
FILTERS = {
    "collection": {"panel": "h.collection = ?", "route": "h.collection = ?"},
    "model": {"panel": "(COALESCE(h.blind, 0) = 0 OR h.revealed IS NOT NULL) AND EXISTS (SELECT 1 FROM calls s "
                       "WHERE s.panel = h.id AND s.model = ?)", "route": "h.model = ?"},
    "status": {"panel": "EXISTS (SELECT 1 FROM calls s WHERE s.panel = h.id AND s.status = ?)",
               "route": "h.status = ?"},
}
VERDICT_FILTERS = {
    "given": {"panel": "EXISTS (SELECT 1 FROM calls s WHERE s.panel = h.id AND " + JUDGED.format(call="s.id") + ")",
              "route": JUDGED.format(call="h.id")},
    "missing": {"panel": "EXISTS (SELECT 1 FROM calls s WHERE s.panel = h.id AND s.status = 'ok' AND "
                         "s.kind NOT IN ('merge', 'referee') AND NOT " + JUDGED.format(call="s.id") +
                         ") AND h.set_aside IS NULL",
                "route": "h.status = 'ok' AND NOT " + JUDGED.format(call="h.id")},
}


AFTER_SEATS = ("merge", "referee", "judge")   # calls that are not seats: a panel's merge and referee, a turn's judge


def cursor_of(item) -> str:
    """Where a page ends (or starts): an item's (created, id), as `before=` / `after=` take it."""
    return f"{item['created']!r}~{item['id']}"


def read_cursor(text: str) -> tuple[float, str] | None:
    found = CURSOR.match(text or "")
    return (float(found.group(1)), found.group(2)) if found else None


def prompt_of(request: str | None, limit: int = 240) -> str:
    """The last user message of a recorded request, shortened: what the history shows for an ask."""
    try:
        messages = json.loads(request or "{}").get("messages") or []
    except ValueError:
        return ""
    text = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verdict_of(row) -> dict | None:
    if row["v_id"] is None:
        return None
    return as_dict(row["v_useful"], row["v_note"], row["v_real"], row["v_false"], row["v_created"],
                   row["v_from_points"])


SEATS_SQL = """
SELECT c.*, v.id AS v_id, v.useful AS v_useful, v.note AS v_note, v.real AS v_real, v.false AS v_false,
       v.created AS v_created, v.from_points AS v_from_points, p.request AS panel_request
FROM calls c LEFT JOIN verdicts v ON v.call = c.id AND v.current = 1 LEFT JOIN panels p ON p.id = c.panel
WHERE {where} ORDER BY c.seat, c.created"""


class History:
    def __init__(self, db: Database):
        self.db = db

    def page(self, filters: dict, per_page: int = 25, before: tuple | None = None, after: tuple | None = None) -> dict:
        """The asks that match `filters` (collection, model, status, verdict), newest first, `per_page` at most: the
        newest, those older than `before` or those newer than `after` (each an item's (created, id)). Keyset pages:
        each reads about per_page rows of each kind's time index, and looks through SCAN asks at most. `next`: the
        cursor for older ones (None: no more), `newer`: for newer ones, `searched_to`: when the page stopped looking
        there (older asks may still match), `total`: see count()."""
        self.db.sync()
        clauses = {kind: self._where(kind, filters) for kind in SOURCES}
        newest_first = after is None
        mark = before if newest_first else after
        floor = self._floor(mark, newest_first)
        found = []
        for kind, (where, params) in clauses.items():
            found += self._walk(kind, where, params, mark, floor, newest_first, per_page + 1)
        found.sort(key=lambda r: (r["created"], r["id"]), reverse=True)
        more = len(found) > per_page
        found = found[:per_page] if newest_first else found[-per_page:]
        seats = self._seats([r["id"] for r in found])
        items = [self._summary(r, seats.get(r["id"], [])) for r in found]
        older = cursor_of(found[-1]) if found and (more or not newest_first) else None
        if newest_first and not more and floor is not None:
            older = f"{floor[0]!r}~{floor[1]}"    # the search stopped at the floor: older asks may still match
        return {"items": items, "per_page": per_page, "next": older,
                "newer": cursor_of(found[0]) if found and (before or (after and more)) else None,
                "searched_to": floor[0] if floor is not None and not more else None, **self.count(filters)}

    def count(self, filters: dict) -> dict:
        """{"total", "total_capped", "counted_in"}: every ask counted up to COUNT_CAP (capped: there are more), or,
        with filters, the matches among the latest COUNT_SCAN asks of each kind (`counted_in`: how many asks were
        looked at, when that is not all of them)."""
        clauses = {kind: self._where(kind, filters) for kind in SOURCES}
        if not any(params or where != BASE[kind] for kind, (where, params) in clauses.items()):
            n = sum(self.db.first(f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {SOURCES[kind]} WHERE {BASE[kind]} "
                                "LIMIT ?)", (COUNT_CAP + 1,))["n"] for kind in SOURCES)
            return {"total": min(n, COUNT_CAP), "total_capped": n > COUNT_CAP, "counted_in": None}
        total, looked, cut = 0, 0, False
        for kind, (where, params) in clauses.items():
            floor = self._floor(None, True, COUNT_SCAN, kinds=(kind,))
            cut = cut or floor is not None
            bound = floor or (0.0, "")
            total += self.db.first(f"SELECT COUNT(*) AS n FROM {SOURCES[kind]} WHERE {where} AND "
                                 "(h.created, h.id) >= (?, ?)", (*params, *bound))["n"]
            looked += COUNT_SCAN if floor else self.db.first(
                f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {SOURCES[kind]} WHERE {BASE[kind]} LIMIT ?)",
                (COUNT_SCAN,))["n"]
        return {"total": total, "total_capped": False, "counted_in": looked if cut else None}

    @staticmethod
    def _where(kind: str, filters: dict) -> tuple[str, list]:
        where, params = [BASE[kind]], []
        for name, clause in FILTERS.items():
            if filters.get(name):
                where.append(clause[kind])
                params.append(filters[name])
        if filters.get("verdict"):
            where.append(VERDICT_FILTERS[filters["verdict"]][kind])
        return " AND ".join(where), params

    def _floor(self, mark: tuple | None, newest_first: bool, scan: int | None = None,
               kinds: tuple = tuple(SOURCES)) -> tuple | None:
        """How far a page may look: past `mark`, `scan` items of each kind along its index (whatever the filters);
        the nearer of the kinds' limits (so neither kind is left looked at less far). None: the whole history is
        within reach."""
        limits, scan = [], scan or SCAN
        for kind in kinds:
            cond, params = self._past(mark, newest_first)
            row = self.db.one(f"SELECT h.created, h.id FROM {SOURCES[kind]} WHERE {BASE[kind]} AND {cond} ORDER BY "
                              f"h.created {'DESC' if newest_first else 'ASC'}, h.id {'DESC' if newest_first else 'ASC'}"
                              " LIMIT 1 OFFSET ?", (*params, scan - 1))
            if row is not None:
                limits.append((row["created"], row["id"]))
        if not limits:
            return None
        return max(limits) if newest_first else min(limits)

    @staticmethod
    def _past(mark: tuple | None, newest_first: bool) -> tuple[str, tuple]:
        """Past `mark` along the (created, id) index (a row value: the index's own range)."""
        if mark is None:
            return "1", ()
        return f"(h.created, h.id) {'<' if newest_first else '>'} (?, ?)", tuple(mark)

    def _walk(self, kind: str, where: str, params: list, mark, floor, newest_first: bool, limit: int) -> list:
        past, more = self._past(mark, newest_first)
        bound, within = ("1", ())
        if floor is not None:
            bound, within = f"(h.created, h.id) {'>=' if newest_first else '<='} (?, ?)", tuple(floor)
        order = "DESC" if newest_first else "ASC"
        return [dict(r, kind=kind) for r in self.db.query(
            f"SELECT h.id, h.collection, h.mode, h.created, {HIDDEN[kind]} AS hidden FROM {SOURCES[kind]} "
            f"WHERE {where} AND {past} AND {bound} "
            f"ORDER BY h.created {order}, h.id {order} LIMIT ?", (*params, *more, *within, limit))]

    def _seats(self, ids: list[str]) -> dict[str, list]:
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        out: dict[str, list] = {}
        for row in self.db.query(SEATS_SQL.format(where=f"c.panel IN ({marks}) OR (c.id IN ({marks}) AND c.kind = "
                                                        "'route')"), (*ids, *ids)):
            out.setdefault(row["panel"] or row["id"], []).append(row)
        return out

    @staticmethod
    def _summary(item, rows: list) -> dict:
        seats = [dict({k: r[k] for k in ("seat", "kind", "model", "status", "seconds")}, call=r["id"],
                      useful=bool(r["v_useful"]) if r["v_id"] is not None else None)
                 for r in rows if r["kind"] not in AFTER_SEATS]
        if item.get("hidden"):
            seats = [dict(s, model=f"Seat {s['seat']}") for s in seats]
        return {"id": item["id"], "kind": item["kind"], "collection": item["collection"], "mode": item["mode"],
                "created": item["created"], "prompt": prompt_of(request_of(rows[0])) if rows else "",
                "seats": seats, "answered": sum(s["status"] == "ok" for s in seats),
                "judged": sum(s["useful"] is not None for s in seats)}

    def item(self, item_id: str) -> dict | None:
        """One panel (every seat and its merge) or one route turn (and its shadow seats), with answers and verdicts."""
        self.db.sync()
        panel = self.db.one("SELECT * FROM panels WHERE id = ?", (item_id,))
        if panel is not None:
            rows = self.db.query(SEATS_SQL.format(where="c.panel = ?"), (item_id,))
            head = {"id": panel["id"], "kind": "panel", "collection": panel["collection"], "mode": panel["mode"],
                    "created": panel["created"], "passed_over": json.loads(panel["passed_over"] or "[]"),
                    "set_aside": panel["set_aside"], "blind": bool(panel["blind"]), "revealed": panel["revealed"]}
        else:
            rows = self.db.query(SEATS_SQL.format(where="(c.id = ? AND c.kind = 'route') OR c.turn = ?"),
                                 (item_id, item_id))
            turn = next((r for r in rows if r["id"] == item_id), None)
            if turn is None:
                return None
            head = {"id": item_id, "kind": "route", "collection": turn["collection"], "mode": turn["mode"],
                    "created": turn["created"], "passed_over": [], "set_aside": None, "blind": False,
                    "revealed": None}
        request = next(filter(None, map(request_of, rows)), None)
        head["request"] = json.loads(request) if request else None
        head["prompt"] = prompt_of(request)
        seats = [self._seat(r) for r in rows if r["kind"] not in AFTER_SEATS]
        replaced = {s["retry_of"] for s in seats if s["retry_of"]}   # a retried seat's answer takes its place
        head["seats"] = [s for s in seats if s["call"] not in replaced]
        head["replaced"] = [s for s in seats if s["call"] in replaced]
        asked = ((head["request"] or {}).get("params") or {}).get("max_tokens")
        for seat in head["seats"]:       # the client's own cap, when the seat's record keeps none of its own
            seat["max_tokens"] = seat["max_tokens"] or asked
        merge = next((r for r in rows if r["kind"] == "merge"), None)
        head["merge"] = self._seat(merge) if merge else None
        judge = next((r for r in rows if r["kind"] == "referee"), None)
        head["referee"] = self._seat(judge) if judge else None
        if head["kind"] == "route":
            head["judge"] = self._judged(item_id, next((r for r in rows if r["kind"] == "judge"), None))
        return head

    def _judged(self, turn: str, call) -> dict | None:
        """A route turn's judge model (its call) and its verdicts on the turn's answers, apart from the user's."""
        said = {r["call"]: bool(r["useful"]) for r in self.db.query(
            "SELECT call, useful FROM judge_verdicts WHERE turn = ?", (turn,))}
        if call is None and not said:
            return None
        return {**(self._seat(call) if call is not None else {}), "verdicts": said}

    def set_aside(self, panel: str, aside: bool) -> bool:
        """Set a panel aside as only a test (now), or bring it back; False when there is no such panel."""
        # through the writer, after whatever it has queued (the panel's own row, for one just asked)
        return self.db.execute("UPDATE panels SET set_aside = ? WHERE id = ?", (time.time() if aside else None, panel),
                               wait=True) > 0

    @staticmethod
    def _seat(r) -> dict:
        extra = json.loads(r["extra"]) if r["extra"] else {}
        return {"call": r["id"], "seat": r["seat"], "kind": r["kind"], "model": r["model"], "served": r["served"],
                "status": r["status"],
                "seconds": r["seconds"], "answer": as_read(r["answer"]), "error": as_read(r["error"]),
                "ttft": r["ttft"],
                "input_tokens": r["input_tokens"], "output_tokens": r["output_tokens"],
                "tokens_estimated": bool(r["tokens_estimated"]), "created": r["created"],
                "finish_reason": r["finish_reason"], "max_tokens": extra.get("max_tokens"),
                "late": bool(extra.get("late")), "retry_of": extra.get("retry_of"), "verdict": verdict_of(r)}
