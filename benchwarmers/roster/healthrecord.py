"""What health checks found beyond the probes: endpoint flags (a refused key) and the evidence of each retirement."""
from __future__ import annotations

import json
import time

from ..errors import FaultKind
from ..providers.ratelimits import KEY
from .limits.resting import WHOLE

KEY_REFUSED, SIGNIN_AGAIN = "key_refused", "signin_again"
FLAG_TEXT = {KEY_REFUSED: "key refused", SIGNIN_AGAIN: "sign in again"}
REST_SECONDS = 60.0           # a rate limit that says nothing of its reset rests what it names this long


def note(db, resting, endpoint: str, outcome, what: str = "probe", served: str = WHOLE) -> None:
    """What a probe (or speed figure) of the model `served` says beyond the model's own answer: a refused key flags
    the endpoint, a rate limit rests what it names (that model, or the whole connection when it is the key's
    limit; every caller then skips it until the reset), an answer clears the flag."""
    if outcome.ok:
        clear(db, endpoint)
    elif outcome.error_kind is FaultKind.AUTH:
        flag(db, endpoint, KEY_REFUSED, f"{outcome.error} ({what} #{outcome.id} of {outcome.model})")
    elif outcome.error_kind is FaultKind.RATE_LIMITED:
        rest(resting, endpoint, outcome.reset_at, WHOLE if outcome.scope == KEY else served)


def stops_endpoint(resting, endpoint: str, kind) -> bool:
    """Whether a fault that is not the model's leaves the rest of its endpoint unaskable in this run: a refused
    key or a refused request does; a rate limit only when the whole connection now rests."""
    return kind != FaultKind.RATE_LIMITED or resting.until(endpoint) is not None


def reset_of(exc) -> float | None:
    """When a rate limit that refused a call resets: its reset time, else now plus its retry-after."""
    if exc.reset_at:
        return exc.reset_at
    return time.time() + exc.retry_after if exc.retry_after else None


def rest(resting, endpoint: str, until: float | None, served: str = WHOLE) -> float:
    """Mark the model `served` (WHOLE: the whole endpoint) resting on a rate limit, in the bench's one Resting, so
    every caller skips it; returns until when."""
    until = until or time.time() + REST_SECONDS
    resting.mark(endpoint, until, served=served)
    return until


def flag(db, endpoint: str, kind: str, detail: str) -> None:
    db.call(lambda c: c.execute(
        "INSERT INTO endpoint_flags (endpoint, flag, detail, since) VALUES (?, ?, ?, ?) ON CONFLICT(endpoint) DO "
        "UPDATE SET flag = excluded.flag, detail = excluded.detail", (endpoint, kind, detail, time.time())))


def clear(db, endpoint: str) -> None:
    db.call(lambda c: c.execute("DELETE FROM endpoint_flags WHERE endpoint = ?", (endpoint,)))


def flags(db) -> dict[str, dict]:
    """endpoint -> {flag, text, detail, since}."""
    return {r["endpoint"]: {"flag": r["flag"], "text": FLAG_TEXT.get(r["flag"], r["flag"]), "detail": r["detail"],
                            "since": r["since"]} for r in db.query("SELECT * FROM endpoint_flags")}


def endpoint_state(db, resting, endpoint: str, found: dict | None = None) -> dict:
    """How an endpoint stands for the roster: its flag, whether it rests, and the words for both (`found`: the
    flags, read once for a list)."""
    found = flags(db).get(endpoint) if found is None else found.get(endpoint)
    until = resting.until(endpoint)
    words = [found["text"]] if found else []
    if until:
        words.append("resting until " + time.strftime("%Y-%m-%d %H:%M", time.localtime(until)))
    return {"flag": found, "resting_until": until, "state": ", ".join(words) or "ok"}


# ---- retirements -------------------------------------------------------------------------------

def keep_retirement(db, alias: str, reason: str, evidence: dict) -> None:
    db.call(lambda c: c.execute("INSERT INTO retirements (model, reason, evidence, created) VALUES (?, ?, ?, ?)",
                                (alias, reason, json.dumps(evidence), time.time())))


def retirement(db, alias: str) -> dict | None:
    """The latest automatic retirement of a model, with its evidence (the probes, the endpoint's list)."""
    row = db.one("SELECT * FROM retirements WHERE model = ? ORDER BY id DESC LIMIT 1", (alias,))
    if row is None:
        return None
    return {"reason": row["reason"], "evidence": json.loads(row["evidence"] or "{}"), "created": row["created"]}
