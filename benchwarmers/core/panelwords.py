"""What a panel says in text: each seat's heading and block, and the refusal when no seat can take an ask."""
from __future__ import annotations

import re
from typing import Callable

from ..canonical import OK, SKIPPED, Seat
from ..errors import AllSeatsFailed, BenchError, BudgetRefused, NoAbleSeat, RateLimited
from ..roster.limits.budgets import OVER
from ..roster.limits.quota import FAILING, RESTS
from .blind import Unnamed
from .seating import Plan

WINDOW = re.compile(r"about (\d+) prompt tokens, window (\d+)")   # seating's why_not for a prompt too long
ANSWERED_LATE = "answered after the panel stopped waiting"      # a seat's error, as its record keeps it
CLIENT_LEFT = "the client went away before this seat answered"
STOPPING = "the service is stopping"


def seat_heading(seat: Seat, hidden: Unnamed | None = None) -> str:
    """'## Seat 2 · m-b · member'; a blind panel's (`hidden`) names no model: '## Seat 2 · member'."""
    said = seat.outcome()
    status = "" if said == OK else f" · {said}"
    who = "" if hidden else f" · {seat.model}"
    return f"## Seat {seat.seat}{who} · {seat.kind}{status}"


def seat_block(seat: Seat, hidden: Unnamed | None = None) -> str:
    if seat.status == OK:
        body = seat.answer.strip() or "_(empty answer)_"
    else:
        body = f"> {seat.error or seat.status}"
    if hidden:
        body = hidden.text(body) or body
    return f"{seat_heading(seat, hidden)}\n\n{body}\n\n"


def unkept_note(why: str | None) -> str:
    """The last words of a panel's text whose records could not be kept (none: ""), since its ids are left out."""
    if not why:
        return ""
    return (f"\n> **Not recorded:** {why}, so this answer is not in the history and its call ids are left out. "
            "Free disk space: writing resumes by itself.\n")


def too_long(plan: Plan) -> BenchError | None:
    """The 4xx for a prompt longer than every seat's context window (explore candidates' included), naming the
    largest; None when some seat was skipped for another reason."""
    searched = [WINDOW.search(sp.skip) for sp in plan.seats]
    found = [m for m in searched if m]
    if not found or len(found) < len(searched):
        return None
    windows = [int(m[2]) for m in found] + [int(m[2]) for m in (WINDOW.search(p["reason"]) for p in plan.passed_over)
                                            if m]
    return NoAbleSeat(f"The prompt (about {int(found[0][1]):,} tokens) is longer than every seat's context window: "
                      f"the largest is {max(windows):,} tokens.",
                      "Shorten the prompt to fit, or add a model with a larger window to the collection.")


def over_budget(reasons: str, month_end: float | None, now: float) -> BudgetRefused:
    """The 429 of an ask every seat of which a monthly budget kept: Retry-After at the month's turn."""
    return BudgetRefused(f"No seat was asked: {reasons}.", month_end or now + 86400, now)


def rate_limited(what: str, resets: list, now: float) -> RateLimited:
    """The 429 of an ask every seat of which a rate limit kept or refused: Retry-After says when the first of them
    is free again (`resets`: each one's, None where no limit said; 60 s when none did)."""
    known = [r for r in resets if r]
    return RateLimited(what, "Try again after the reset, or add members on other endpoints.",
                       retry_after=max(1.0, min(known) - now) if known else 60)


def none_answered(run, free_at: Callable, now: float, month_end: float | None = None) -> BenchError:
    """Why a panel has no answer: every seat a monthly budget kept (a 429 at the month's turn), every seat rested on
    or was refused by a rate limit (a 429 saying when to come back, a direct ask's too), or every seat failed."""
    lines = "; ".join(f"seat {s.seat} {s.model}: {s.status}: {s.error}" for s in run.seats).rstrip(".")
    if all(s.status == SKIPPED and (s.error or "").startswith(OVER) for s in run.seats):
        return over_budget(lines, month_end, now)
    if all(s.call in run.limited or (s.status == SKIPPED and (s.error or "").startswith(RESTS)) for s in run.seats):
        return rate_limited(f"Every seat is resting on a rate limit or was refused by one: {lines}.",
                            [run.limited.get(s.call) or free_at(sp.model) for sp, s in zip(run.plan.seats, run.seats)],
                            now)
    return AllSeatsFailed(f"Every seat failed: {lines}.", "Check the endpoints with bench models; "
                          "the seats' call ids are in the record.")


def no_able_seat(plan: Plan, free_at: Callable, now: float, month_end: float | None = None) -> BenchError:
    """Why no seat of the plan can take the ask (`free_at(model)`: when a rate limit lets the model be called;
    `month_end`: when the budgets reset)."""
    longer = too_long(plan)
    if longer is not None:
        return longer
    reasons = "; ".join(f"{sp.model.alias}: {sp.skip}" for sp in plan.seats)
    if all(sp.skip.startswith(OVER) for sp in plan.seats):
        return over_budget(reasons, month_end, now)
    if all(sp.skip.startswith((*RESTS, OVER)) for sp in plan.seats):
        return rate_limited(f"Every seat is resting on a rate limit: {reasons}.",
                            [free_at(sp.model) for sp in plan.seats], now)
    if all(sp.skip.startswith((FAILING, *RESTS)) for sp in plan.seats):     # the endpoints are at fault, not the ask
        return AllSeatsFailed(f"Every seat rests: {reasons}.", "Check the endpoints with bench models; a model "
                              "resting on its failures is tried again when its rest ends.")
    fixes = [fix for cause, fix in (("no vision", "drop the image"),
                                    ("context window", "shorten the prompt or add a model with a larger window"))
             if any(cause in sp.skip for sp in plan.seats)]
    change = f"Change the ask ({'; or '.join(fixes)}), or add" if fixes else "Add"
    return NoAbleSeat(f"No seat can take this ask: {reasons}.", f"{change} able models to the collection.")
