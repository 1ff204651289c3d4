"""The one writer of a call's record: what a call was when it ended (`Ended`), made into its row and ledger line
from plain values (the Dialer works them out when a call ends: Dialer.record)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..askparts import ANYONE, Asker
from ..canonical import SKIPPED, Answer, Ask
from ..roster.registry import Model
from ..store.calls import CallRecord, Calls, clip_stored, prompt_hash, summarise_request
from ..store.db import Written
from ..store.ledger import Line


@dataclass
class Ended:
    """One call as it ended: who answered what, how it went, and where it belongs (a panel's seat, a route turn).
    `request`: (summary, prompt hash) when already worked out for the ask (summary None: it is kept in the call's
    panel's row). `sent`: it went upstream (by default, any status but skipped), so it gets a ledger line;
    `counted`: the prompt tokens its limits counted when it went, when that was another ask than `ask` (a merge).
    `turn`: the route turn a shadow seat shadowed. `asker`: who asked (key, session, origin), for the record."""
    call: str
    model: Model
    ask: Ask
    status: str
    kind: str
    mode: str
    seconds: float
    answer: Answer | None = None
    error: str | None = None
    ttft: float | None = None
    collection: str | None = None
    panel: str | None = None
    seat: int | None = None
    turn: str | None = None
    request: tuple[str, str] | None = None
    extra: dict | None = None
    sent: bool | None = None
    counted: int | None = None
    asker: Asker = ANYONE
    signs: str | None = None     # what the turn showed of its tool calls (core/toolcheck.py)

    def but(self, **changes) -> "Ended":
        return replace(self, **changes)

    @property
    def went(self) -> bool:
        """It went upstream, so it has a ledger line and its tokens count against the limits."""
        return self.status != SKIPPED if self.sent is None else self.sent


def request_summary(ask: Ask, stored_chars: int) -> tuple[str, str]:
    """(what was asked, as stored: at most `stored_chars`; the prompt's hash, over all of it)."""
    return summarise_request(ask, stored_chars), prompt_hash(ask)


def write(calls: Calls, ended: Ended, line: Line | None, tokens: int | None, stored_chars: int,
          amend: float | None = None) -> Written:
    """Queue `ended`'s record and its ledger `line` (None: it was never sent) for the writer's next batch (done once
    committed: see Dialer.settle). Its answer's usage is as counted (estimated already where the upstream told
    none); `tokens`: the output tokens the member was asked for; `stored_chars`: the most of a prompt or an answer
    the record keeps. `amend`: its record was made already (a seat the panel stopped
    waiting for), its ledger line at or after this moment (the ledger's clock): it is brought up to date, its line
    corrected, not added."""
    ask, answer, model = ended.ask, ended.answer, ended.model
    summary, digest = ended.request or request_summary(ask, stored_chars)
    usage = answer.usage if answer else None
    said = clip_stored(answer.text or None, stored_chars) if answer else None
    extra = ended.extra
    if tokens != ask.max_tokens:   # what this member was really asked for: the client's cut, or the default
        extra = {**(extra or {}), "max_tokens": tokens}
    asker = ended.asker
    ttft = ended.ttft if ended.ttft is not None or answer is None else answer.ttft
    return calls.add(CallRecord(
        id=ended.call, model=model.alias, status=ended.status, panel=ended.panel, collection=ended.collection,
        endpoint=model.endpoint, served=model.served, kind=ended.kind, mode=ended.mode, seat=ended.seat,
        error=ended.error, request=summary, prompt_hash=digest, answer=said, ttft=ttft,
        seconds=round(ended.seconds, 4), input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0, tokens_estimated=bool(usage and usage.estimated),
        caller=asker.caller, session=asker.session, extra=extra, turn=ended.turn,
        finish_reason=answer.finish_reason if answer is not None else None, signs=ended.signs), line, amend)


def seat_ended(run, model: Model, seat, answer: Answer | None, sent: bool | None = None, extra: dict | None = None,
               counted: int | None = None, mode: str | None = None) -> Ended:
    """A panel seat (or its merge) as its reply told it: the run gives the ask, who asked, the panel and the
    collection, the Seat its status, error and time; a retried seat's record names the call it replaces."""
    if run.retried:
        extra = {**(extra or {}), "retry_of": run.retried}
    return Ended(seat.call, model, run.ask, seat.status, seat.kind, mode or run.ask.target.mode, seat.seconds, answer,
                 seat.error, collection=run.collection_name, panel=run.id, seat=seat.seat, request=run.seat_request,
                 extra=extra, sent=sent, counted=counted, asker=run.asker)


RECORD_IDS = frozenset(("call", "panel", "id"))   # the keys of `bench` data that name a record: a call, a panel, a point


def not_kept(bench: dict, why: str) -> dict:
    """A reply's `bench` data when its records could not be kept (a full disk): every record id in it (a seat's
    call, the panel, the referee's call, a point) null, since the record holds none of them, and why."""
    def scrub(value):
        if isinstance(value, dict):
            return {k: None if k in RECORD_IDS and isinstance(v, str) else scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value
    return {**scrub(bench), "record": {"kept": False, "why": why}}
