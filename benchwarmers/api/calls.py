"""/bench/calls, /bench/verdict, /bench/pending and /bench/record: what each seat said, what the user judged, what
still waits for a verdict, and the tally."""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Protocol

from ..core.rankings import Rankings
from ..core.shadowjudge import ShadowJudge
from ..errors import BadRequest, NotFound
from ..names import CLAIM_MOST, CLAIMS_MOST, NOTE_MOST, check_text
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import GATEWAY, Route
from ..store import Database
from ..store.calls import Calls
from ..store.pending import blind_among, pending
from ..store.verdicts import Verdicts
from .gateway import check_session
from .onboard import whole_number
from .ratings import flag

if TYPE_CHECKING:
    from ..bench import Bench


class VerdictParts(Protocol):
    """The user's verdicts, read beside a page of calls (the model page's too)."""
    verdicts: Verdicts


class CallsParts(VerdictParts, Protocol):
    calls: Calls
    db: Database
    rankings: Rankings
    judges: ShadowJudge


SEAT_KINDS = ("member", "explore", "with")   # a panel's seats: what a blind panel names no model of
CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_CALLS = 200

CALL = obj(("id", "model", "status"), id=STRING, model=STRING, status=STRING)
VERDICT = obj(("call", "useful"), False, call=STRING, useful={"type": "boolean"}, note={"type": ["string", "null"]},
              real={"type": ["array", "null"], "items": STRING}, false={"type": ["array", "null"], "items": STRING},
              from_points={"type": "boolean"})


def _visible(req: Request, rec) -> bool:
    """A key sees calls of its collections; direct calls (no collection) only with '*', which may make them."""
    key = req.caller
    if key is None:
        return True
    return key.allows(rec.collection) if rec.collection else "*" in key.collections


def get_call(req: Request, bench: CallsParts) -> Response:
    rec = bench.calls.get(req.params["id"])
    if rec is None or not _visible(req, rec):
        raise NotFound(f"No call {req.params['id']!r}.", "Call ids come in each seat's `call` field.")
    [d] = unseen(bench.db, [rec.to_dict()])
    d["verdicts"] = bench.verdicts.history(rec.id)
    d["judge_verdict"] = bench.judges.store.of_call(rec.id)   # a judge model's, apart from the user's
    return Response.json(d)


def list_calls(req: Request, bench: CallsParts) -> Response:
    try:
        limit = int(req.query.get("limit", 50))
    except ValueError:
        raise BadRequest("limit must be a whole number.") from None
    if not 1 <= limit <= 1000:
        raise BadRequest("limit must be from 1 to 1000.")
    pages = bench.calls.pages(collection=req.query.get("collection"), model=req.query.get("model"),
                              panel=req.query.get("panel"), limit=limit,
                              collections=req.caller.collections if req.caller else None)
    return Response.streaming(json_list("calls", with_verdicts(bench, pages, by_model=bool(req.query.get("model")))),
                              "application/json")


def with_verdicts(bench: VerdictParts, pages, by_model: bool = False):
    """Each page of calls as dicts, each with its current verdict (read a page at a time too); a blind panel's seats
    not judged yet as unseen() gives them (`by_model`: a listing of one model's calls, left out)."""
    for page in pages:
        current = bench.verdicts.current([c.id for c in page])
        yield unseen(bench.verdicts.db, [dict(c.to_dict(), verdict=current.get(c.id)) for c in page], by_model)


def unseen(db: Database, calls: list[dict], by_model: bool = False) -> list[dict]:
    """`calls` as their asker reads them: a seat of a blind panel not judged yet names no model ("Seat N", no served
    name or endpoint, the panel's model names out of its text), as GET /bench/panels/{id} shows it; `by_model`: such
    seats left out (a listing of one model's calls would name it). Two reads of the panels listed, never more."""
    hidden, unnamed = blind_among(db, list({c["panel"] for c in calls if c.get("panel")}))
    if not hidden:
        return calls
    out = []
    for c in calls:
        if c.get("panel") not in hidden:
            out.append(c)
            continue
        seat = c.get("kind") in SEAT_KINDS
        if seat and by_model:
            continue
        masked = {**c, "answer": c["answer"] and unnamed(c["answer"]), "error": c["error"] and unnamed(c["error"])}
        out.append({**masked, "model": f"Seat {c['seat']}", "served": None, "endpoint": None} if seat else masked)
    return out


def json_list(name: str, pages):
    """{"<name>": [...]} written a page at a time: up to 1,000 large calls never sit in memory at once."""
    yield f'{{"{name}":['.encode()
    first = True
    for page in pages:
        for item in page:
            yield (b"" if first else b",") + json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()
            first = False
    yield b"]}"


def _string_list(body: dict, name: str) -> list:
    value = body.get(name, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"`{name}` must be a list of strings (the claims you checked).")
    if len(value) > CLAIMS_MOST:
        raise BadRequest(f"`{name}` holds {len(value):,} claims; at most {CLAIMS_MOST} are kept.",
                         "Keep the claims you checked, one line each.")
    return [check_text(v, f"claim in `{name}`", CLAIM_MOST) for v in value]


def post_verdict(req: Request, bench: CallsParts) -> Response:
    body = req.json()
    known = {"call", "useful", "note", "real", "false", "from_points"}
    extra = sorted(set(body) - known)
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.",
                         "A verdict has call, useful, note, real, false, from_points.")
    call = body.get("call")
    if not isinstance(call, str) or not call:
        raise BadRequest("`call` must be the call id (a string) of the seat you judged.")
    useful = body.get("useful")
    if not isinstance(useful, bool):
        raise BadRequest("`useful` must be true or false.")
    note = check_text(body.get("note"), "note", NOTE_MOST)
    from_points = body.get("from_points", False)
    if not isinstance(from_points, bool):
        raise BadRequest("`from_points` must be true (the verdict is what the seat's judged points proposed) or false.")
    real, false = _string_list(body, "real"), _string_list(body, "false")
    rec = bench.calls.get(call)
    if rec is None or not _visible(req, rec):
        raise NotFound(f"No call {call!r}.", "Use a call id from a seat's `call` field.")
    verdict = bench.verdicts.add(call, useful, note, real, false, from_points)   # the standings change with it
    verdict["revisions"] = len(bench.verdicts.history(call))
    return Response.json(verdict)


def get_pending(req: Request, bench: CallsParts) -> Response:
    """The answers the caller asked that have no verdict yet: a key's own (within its collections), those of the
    session named in `?session=`, or every one; `?calls=` keeps only those calls."""
    limit = whole_number(req.query.get("limit", 50), "limit", 1, 200)
    session = check_session(req.query["session"], "session") if req.query.get("session") else None
    calls = None
    if "calls" in req.query:
        calls = [c.strip() for c in req.query["calls"].split(",") if c.strip()]
        if len(calls) > MAX_CALLS or not all(CALL_ID.match(c) for c in calls):
            raise BadRequest(f"calls must be up to {MAX_CALLS} call ids, separated by commas.",
                             "Call ids come in each seat's `call` field.")
    key = req.caller
    found = pending(bench.db, caller=key.name if key else None, since=key.created if key else None,
                    collections=key.collections if key else None, session=session, calls=calls, limit=limit)
    scope = {"key": key.name} if key else {"session": session} if session else {"everyone": True}
    return Response.json({**found, "limit": limit, "asked_by": scope})


def get_record(req: Request, bench: CallsParts) -> Response:
    collection = req.query.get("collection")
    blind = flag(req, "blind")     # each model's useful rate from blind verdicts alone, beside its own
    if collection:
        if req.caller:
            req.caller.check_collection(collection)
        return Response.json({"collection": collection, "models": bench.rankings.figures((collection,), blind)})
    limited = req.caller and "*" not in req.caller.collections
    # a limited key sees the record of its own collections only, the overall figures included
    return Response.json(bench.rankings.summary(req.caller.allows if limited else None, blind))


ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/calls", list_calls, "bench", GATEWAY, doc=op(
        "Recorded calls, newest first (a gateway key sees those of its collections).",
        query={"collection": STRING, "model": STRING, "panel": STRING, "limit": {"type": "integer"}},
        ok=obj(("calls",), calls={"type": "array", "items": CALL}))),
    Route("GET", "/bench/calls/{id}", get_call, "bench", GATEWAY, doc=op(
        "One call: request, answer, timings, tokens, status, and its verdicts.", ok=CALL)),
    Route("POST", "/bench/verdict", post_verdict, "bench", GATEWAY, doc=op(
        "Judge a seat's answer (the latest verdict on a call counts).", body=VERDICT,
        ok=obj(("id", "call", "useful", "revisions"), call=STRING, useful={"type": "boolean"}))),
    Route("GET", "/bench/pending", get_pending, "bench", GATEWAY, doc=op(
        "The answers the caller asked that have no verdict yet (a key's own, a session's, or every one).",
        query={"session": STRING, "calls": STRING, "limit": {"type": "integer"}},
        ok=obj(("limit", "asked_by"), limit={"type": "integer"}, asked_by={"type": "object"}))),
    Route("GET", "/bench/record", get_record, "bench", GATEWAY, doc=op(
        "The record per model, overall and per collection (or of one collection); blind=1: each model's useful rate "
        "from blind verdicts alone beside it (`blind`).", query={"collection": STRING, "blind": STRING},
        ok=obj(("models",), models={"type": "object"}))),
]
