"""What an agent's turn shows of the member that answered it and of the one before, without anyone's verdict: its tool
calls checked against the tools offered (toolcheck.py), a tool result reporting the last turn's call malformed, the
same turn sent again; and when a conversation leaves its pinned member because its turns keep failing.

Counted as evidence (evidence.with_signs) only what no user's choice makes: a faulty tool call, a tool result the
client's own harness wrote to say the call was malformed. A turn sent again is recorded (`retried`) but not weighed:
a person's "regenerate", or a new conversation opening with the same words, sends the same turn too."""
from __future__ import annotations

from dataclasses import dataclass

from ..canonical import Answer, Ask, ToolResult
from .pins import Pinned
from .toolcheck import MAX_FAULTS, REPORTED, RETRIED, Fault, check, malformed, signs_of

STRIKES = 2   # the pinned member's failing turns in a row after which the conversation's next turn goes to another


@dataclass
class TurnSigns:
    """A turn's own signs (`signs`, the calls column) and the faults behind them, for its record."""
    signs: str | None = None
    faults: tuple = ()

    @property
    def failed(self) -> str | None:
        """Why its tool calls failed, or None."""
        if not self.faults:
            return None
        f = self.faults[0]
        return f"its tool call {f.tool!r} failed ({f.kind}: {f.why})"

    def record(self) -> dict:
        return {"tool_faults": [f.to_dict() for f in self.faults[:MAX_FAULTS]]} if self.faults else {}


def shown(ask: Ask, answer: Answer | None) -> TurnSigns:
    """An answer's tool calls checked against the ask's tools; nothing to show for an answer without tool calls."""
    calls = answer.tool_calls if answer is not None else []
    if not calls:
        return TurnSigns()
    faults = check(calls, ask.tools)
    return TurnSigns(signs_of(faults, True), tuple(faults))


def reported(ask: Ask) -> Fault | None:
    """A tool result at the end of the conversation (after its last assistant turn) saying the call was malformed."""
    for message in reversed(ask.messages):
        if message.role == "assistant":
            break
        for part in message.parts:
            if isinstance(part, ToolResult) and malformed(part.content, part.is_error):
                return Fault(part.name or part.id, REPORTED, "the client's tool result says the call was malformed: "
                             + " ".join(part.content.split())[:160])
    return None


@dataclass
class Before:
    """What this turn shows of the conversation's last one: the signs to add to that call, and the pin's failing
    turns in a row counting this report."""
    more: list
    strikes: int
    why: str | None


def before(ask: Ask, pinned: Pinned | None, prompt: str) -> Before:
    """The last turn's call as this one shows it: sent again (the same prompt), or its tool call reported malformed."""
    if pinned is None or not pinned.call:
        return Before([], pinned.strikes if pinned else 0, pinned.struck if pinned else None)
    if pinned.prompt == prompt:
        return Before([RETRIED], pinned.strikes, pinned.struck)
    fault = reported(ask)
    if fault is not None and pinned.struck is None:   # a turn we found failing already counted once
        return Before([REPORTED], pinned.strikes + 1, f"its tool call {fault.tool!r} failed ({fault.why})")
    if fault is not None:
        return Before([REPORTED], pinned.strikes, pinned.struck)
    return Before([], pinned.strikes, pinned.struck)


def move_off(pinned: Pinned | None, strikes: int, why: str | None) -> dict | None:
    """{model, why}: the conversation leaves its pinned member before this turn, or None."""
    if pinned is None or strikes < STRIKES:
        return None
    return {"model": pinned.model, "why": f"{strikes} failing turns in a row; the last: {why or 'failed'}"}
