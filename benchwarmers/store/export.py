"""The record as data: JSON Lines of preference pairs (from best picks), verdicts, claims and points, read a page at a
time in the order they were written, so an export of any size never sits in memory."""
from __future__ import annotations

import json
from typing import Iterator

from .calls import as_read
from .db import Database

PAGE = 200          # rows read at a time
KINDS = ("pairs", "verdicts", "claims", "points")
SEATS = ("SELECT id, seat, model, answer FROM calls WHERE panel = ? AND seat > 0 AND status = 'ok' "
         "AND kind IN ('member', 'explore', 'with') ORDER BY seat")
# Each kind: its rows walked by their integer key (a walk the LIMIT stops), with the filters of --since and
# --collection on the panel or call they belong to (CROSS JOIN: that row looked up by its key for each, never the
# collection's index first and every row found sorted).
WALKS = {
    "pairs": ("SELECT b.id AS k, b.panel, b.seat, b.blind, b.created, p.collection, p.request FROM best_picks b "
              "CROSS JOIN panels p ON p.id = b.panel WHERE b.id > ? AND b.current = 1 AND b.seat IS NOT NULL{where} "
              "ORDER BY b.id LIMIT ?", "b.created", "p.collection"),
    "verdicts": ("SELECT v.id AS k, v.call, v.useful, v.note, v.real, v.false, v.created, v.blind, v.from_points, "
                 "c.panel, c.seat, c.model, c.collection, c.kind FROM verdicts v CROSS JOIN calls c ON c.id = v.call "
                 "WHERE v.id > ? AND v.current = 1{where} ORDER BY v.id LIMIT ?", "v.created", "c.collection"),
    "claims": ("SELECT pc.id AS k, pc.point, pc.call, pc.seat, pc.real, pc.stance, pc.claim, pc.quote, pc.created, "
               "c.panel, c.model, c.collection FROM point_claims pc CROSS JOIN calls c ON c.id = pc.call "
               "WHERE pc.id > ?{where} ORDER BY pc.id LIMIT ?", "pc.created", "c.collection"),
    "points": ("SELECT pt.rowid AS k, pt.id, pt.panel, pt.claim, pt.asserts, pt.denies, pt.silent, pt.quotes, "
               "pt.shown, pt.created, p.collection, v.verdict, v.note AS v_note, v.created AS v_created, "
               "v.blind AS v_blind FROM points pt CROSS JOIN panels p ON p.id = pt.panel LEFT JOIN point_verdicts v "
               "ON v.point = pt.id AND v.current = 1 WHERE pt.rowid > ?{where} ORDER BY pt.rowid LIMIT ?",
               "pt.created", "p.collection"),
}


def rows(db: Database, kind: str, since: float | None = None, collection: str | None = None) -> Iterator[dict]:
    """Every row of `kind` written since `since` (of `collection`), oldest first, as its line's dict."""
    sql, created, col = WALKS[kind]
    where = ""
    params: list[object] = []
    if since is not None:
        where += f" AND {created} >= ?"
        params.append(since)
    if collection is not None:
        where += f" AND {col} = ?"
        params.append(collection)
    db.sync()
    shape = SHAPES[kind]
    last = 0
    while True:
        page = db.query(sql.format(where=where), (last, *params, PAGE))
        for row in page:
            yield from shape(db, row)
        if len(page) < PAGE:
            return
        last = page[-1]["k"]


def lines(db: Database, kind: str, since: float | None = None, collection: str | None = None) -> Iterator[bytes]:
    for row in rows(db, kind, since, collection):
        yield json.dumps(row, ensure_ascii=False).encode() + b"\n"


def _pairs(db: Database, row) -> Iterator[dict]:
    """A best pick as preference pairs: the chosen answer over each other answer of the panel."""
    seats = db.query(SEATS, (row["panel"],))
    chosen = next((s for s in seats if s["seat"] == row["seat"]), None)
    if chosen is None:
        return
    asked = _request(row["request"])
    prompt = next((m.get("content") for m in reversed(asked.get("messages") or []) if m.get("role") == "user"), "")
    for other in seats:
        if other["seat"] == chosen["seat"]:
            continue
        yield {"prompt": prompt, "chosen": as_read(chosen["answer"]), "rejected": as_read(other["answer"]),
               "chosen_model": chosen["model"], "rejected_model": other["model"], "panel": row["panel"],
               "collection": row["collection"], "system": asked.get("system"), "messages": asked.get("messages"),
               "chosen_seat": chosen["seat"], "rejected_seat": other["seat"], "blind": bool(row["blind"]),
               "created": row["created"]}


def _request(text: str | None) -> dict:
    try:
        found = json.loads(as_read(text) or "{}")
    except ValueError:      # cut at record_max_kb: the prompt is what there is
        return {"messages": [{"role": "user", "content": as_read(text)}]}
    return found if isinstance(found, dict) else {}


def _verdict(db: Database, row) -> Iterator[dict]:
    yield {"call": row["call"], "panel": row["panel"], "collection": row["collection"], "seat": row["seat"],
           "model": row["model"], "kind": row["kind"], "useful": bool(row["useful"]), "note": row["note"],
           "real": json.loads(row["real"] or "[]"), "false": json.loads(row["false"] or "[]"),
           "from_points": bool(row["from_points"]), "blind": bool(row["blind"]), "created": row["created"]}


def _claim(db: Database, row) -> Iterator[dict]:
    yield {"point": row["point"], "call": row["call"], "panel": row["panel"], "collection": row["collection"],
           "seat": row["seat"], "model": row["model"], "real": bool(row["real"]), "stance": row["stance"],
           "claim": row["claim"], "quote": row["quote"], "created": row["created"]}


def _point(db: Database, row) -> Iterator[dict]:
    verdict = None if row["v_created"] is None else {
        "true": None if row["verdict"] is None else bool(row["verdict"]), "note": row["v_note"],
        "blind": bool(row["v_blind"]), "created": row["v_created"]}
    yield {"id": row["id"], "panel": row["panel"], "collection": row["collection"], "claim": row["claim"],
           "assert": json.loads(row["asserts"]), "deny": json.loads(row["denies"]),
           "silent": json.loads(row["silent"]), "quotes": json.loads(row["quotes"]), "shown": bool(row["shown"]),
           "verdict": verdict, "created": row["created"]}


SHAPES = {"pairs": _pairs, "verdicts": _verdict, "claims": _claim, "points": _point}
