"""/bench/usage: the usage ledger's month, totalled by model, connection, collection or kind, with what exploration
cost and found, and calls and tokens per day."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.collection import Collections
from ..errors import BadRequest
from ..roster.limits.quota import DAY
from ..scheduler import Clock
from ..server.messages import Request, Response
from ..server.openapi import STRING, obj, op
from ..server.routes import ADMIN, Route
from ..store import Database
from ..store.ledger import BY, Ledger, check_by, check_month

if TYPE_CHECKING:
    from ..bench import Bench


class UsageParts(Protocol):
    clock: Clock
    collections: Collections
    db: Database


MOST_DAYS = 366


def days_of(value) -> int:
    if value in (None, ""):
        return 30
    try:
        days = int(value)
    except ValueError:
        days = 0
    if not 1 <= days <= MOST_DAYS:
        raise BadRequest(f"days must be a whole number from 1 to {MOST_DAYS}, not {value!r}.", "e.g. ?days=30")
    return days


def usage_view(bench: UsageParts, month: str | None = None, by: str | None = None, days: int = 30) -> dict:
    ledger = Ledger(bench.db)
    now = bench.clock.now()
    month, by = check_month(month, now), check_by(by)
    members = {name: list(c.members) for name, c in bench.collections.all().items()}
    today_end = (now // DAY + 1) * DAY
    return {**ledger.totals(month, by), "cuts": list(BY), "months": ledger.months(),
            "exploration": ledger.exploration(month, members),
            "daily": ledger.daily(today_end - days * DAY, today_end)}


def get_usage(req: Request, bench: UsageParts) -> Response:
    """?month=YYYY-MM (default: this month, UTC) &by=model|connection|collection|kind &days=N (the daily series)."""
    extra = sorted(set(req.query) - {"month", "by", "days"})
    if extra:
        raise BadRequest(f"Unknown parameter(s): {', '.join(extra)}.", "Use month, by and days.")
    q = req.query
    return Response.json(usage_view(bench, q.get("month"), q.get("by"), days_of(q.get("days"))))


ROUTES: list[Route[Bench]] = [Route("GET", "/bench/usage", get_usage, "bench", ADMIN, doc=op(
    "A month of the usage ledger totalled by one cut, what exploration cost and found, and calls per day.",
    query={"month": {"type": "string", "pattern": r"^\d{4}-(0[1-9]|1[0-2])$"}, "by": {"enum": list(BY)},
           "days": {"type": "integer", "minimum": 1, "maximum": MOST_DAYS}},
    ok=obj(("month", "by", "rows", "total"), month=STRING, by=STRING, rows={"type": "array"},
           total={"type": "object"})))]
