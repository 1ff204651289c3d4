"""The history of asks: panels and route turns, newest first, filtered and paged, each with its seats and verdicts."""
from __future__ import annotations

import json
import time

from .calls import as_read, request_of
from .db import Database
from .verdicts import as_dict

ITEMS = """
SELECT * FROM (
    SELECT 'panel' AS kind, id, collection, mode, created FROM panels
    UNION ALL
    SELECT 'route' AS kind, id, collection, mode, created FROM calls WHERE kind = 'route'
) h"""
# A seat of item h: a panel's calls, or the route turn's own call.
OF_ITEM = "(s.panel = h.id OR s.id = h.id)"
JUDGED = "EXISTS (SELECT 1 FROM verdicts v WHERE v.call = s.id AND v.current = 1)"
FILTERS = {
    "collection": "h.collection = ?",
    "model": f"EXISTS (SELECT 1 FROM calls s WHERE {OF_ITEM} AND s.model = ?)",
    "status": f"EXISTS (SELECT 1 FROM calls s WHERE {OF_ITEM} AND s.status = ?)",
}
VERDICT_FILTERS = {
    "given": f"EXISTS (SELECT 1 FROM calls s WHERE {OF_ITEM} AND {JUDGED})",
    "missing": f"EXISTS (SELECT 1 FROM calls s WHERE {OF_ITEM} AND s.status = 'ok' AND s.kind != 'merge' "
               f"AND NOT {JUDGED}) AND NOT EXISTS (SELECT 1 FROM panels a WHERE a.id = h.id AND a.set_aside IS NOT NULL)",
}


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
    return as_dict(row["v_useful"], row["v_note"], row["v_real"], row["v_false"], row["v_created"])


SEATS_SQL = """
SELECT c.*, v.id AS v_id, v.useful AS v_useful, v.note AS v_note, v.real AS v_real, v.false AS v_false,
       v.created AS v_created, p.request AS panel_request
FROM calls c LEFT JOIN verdicts v ON v.call = c.id AND v.current = 1 LEFT JOIN panels p ON p.id = c.panel
WHERE {where} ORDER BY c.seat, c.created"""


class History:
    def __init__(self, db: Database):
        self.db = db

    def page(self, filters: dict, page: int = 1, per_page: int = 25) -> dict:
        """{"items", "total", "page", "per_page", "pages"}; filters: collection, model, status, verdict."""
        self.db.sync()
        where, params = [], []
        for name, clause in FILTERS.items():
            if filters.get(name):
                where.append(clause)
                params.append(filters[name])
        if filters.get("verdict"):
            where.append(VERDICT_FILTERS[filters["verdict"]])
        sql_where = (" WHERE " + " AND ".join(where)) if where else ""
        total = self.db.one(f"SELECT COUNT(*) AS n FROM ({ITEMS}{sql_where})", tuple(params))["n"]
        rows = self.db.query(f"{ITEMS}{sql_where} ORDER BY created DESC LIMIT ? OFFSET ?",
                             (*params, per_page, (page - 1) * per_page))
        seats = self._seats([r["id"] for r in rows])
        items = [self._summary(r, seats.get(r["id"], [])) for r in rows]
        return {"items": items, "total": total, "page": page, "per_page": per_page,
                "pages": max(1, -(-total // per_page))}

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
                 for r in rows if r["kind"] != "merge"]
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
                    "set_aside": panel["set_aside"]}
        else:
            rows = self.db.query(SEATS_SQL.format(where="(c.id = ? AND c.kind = 'route') OR (c.kind = 'shadow' AND "
                                                        "json_extract(c.extra, '$.turn') = ?)"), (item_id, item_id))
            turn = next((r for r in rows if r["id"] == item_id), None)
            if turn is None:
                return None
            head = {"id": item_id, "kind": "route", "collection": turn["collection"], "mode": turn["mode"],
                    "created": turn["created"], "passed_over": [], "set_aside": None}
        request = next(filter(None, map(request_of, rows)), None)
        head["request"] = json.loads(request) if request else None
        head["prompt"] = prompt_of(request)
        head["seats"] = [self._seat(r) for r in rows if r["kind"] != "merge"]
        asked = ((head["request"] or {}).get("params") or {}).get("max_tokens")
        for seat in head["seats"]:       # the client's own cap, when the seat's record keeps none of its own
            seat["max_tokens"] = seat["max_tokens"] or asked
        merge = next((r for r in rows if r["kind"] == "merge"), None)
        head["merge"] = self._seat(merge) if merge else None
        return head

    def set_aside(self, panel: str, aside: bool) -> bool:
        """Set a panel aside as only a test (now), or bring it back; False when there is no such panel."""
        # through the writer, after whatever it has queued (the panel's own row, for one just asked)
        return self.db.execute("UPDATE panels SET set_aside = ? WHERE id = ?", (time.time() if aside else None, panel),
                               wait=True) > 0

    @staticmethod
    def _seat(r) -> dict:
        extra = json.loads(r["extra"]) if r["extra"] else {}
        return {"call": r["id"], "seat": r["seat"], "kind": r["kind"], "model": r["model"], "status": r["status"],
                "seconds": r["seconds"], "answer": as_read(r["answer"]), "error": as_read(r["error"]),
                "ttft": r["ttft"],
                "input_tokens": r["input_tokens"], "output_tokens": r["output_tokens"],
                "tokens_estimated": bool(r["tokens_estimated"]), "created": r["created"],
                "finish_reason": r["finish_reason"], "max_tokens": extra.get("max_tokens"),
                "late": bool(extra.get("late")), "verdict": verdict_of(r)}
