"""Conversations with a panel: each seat keeps its own thread. A follow-up's history holds the panel's earlier replies
(the client sent them back) or names the panel it continues (`bench.continue`); either way the turns are found in the
record (store/conversations.py), and each seat is sent its own earlier answers in their place: never another seat's,
the headings or the points block. A history the record does not know goes to every seat as it is."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..canonical import EXPLORE, FAILED, MEMBER, OK, TIMEOUT, WITH, Ask, Message, Text
from ..errors import BadRequest, NotFound
from ..store.conversations import Conversations, Links, PanelTurn, SeatSaid, reply_hash
from . import tasks
from .blind import hider, keep_numbers
from .seating import Plan, SeatPlan, Seating

FAILING = (FAILED, TIMEOUT)
NOTHING = "(no answer was given in this turn)"


def own_answer(turn: PanelTurn, model: str) -> str | None:
    """What a seat of `model` sees as its answer in an earlier turn: its own; for a model that did not sit there (or
    did not answer), the answer judged useful, else the one seat's of a turn asked of one seat, else the first
    member's, else the first answer. None when nobody answered."""
    answered = [s for s in turn.seats if s.status == OK and s.answer]
    mine = next((s for s in answered if s.model == model), None)
    if mine is not None:
        return mine.answer
    pick = next((s for s in answered if s.useful), None) or next((s for s in answered if s.kind == MEMBER), None) \
        or (answered[0] if answered else None)
    return pick.answer if pick else None


def kept_explore(chain: list[PanelTurn]) -> list[str]:
    """The explore seats of the latest turn that had any (a turn asked of one member had none) keep their places:
    all but one that failed in each of its last two turns (one that failed once is given another go; one that keeps
    failing is replaced)."""
    at = next((i for i in range(len(chain) - 1, -1, -1) if any(s.kind == EXPLORE for s in chain[i].seats)), None)
    if at is None:
        return []
    kept = []
    for s in chain[at].seats:
        if s.kind != EXPLORE:
            continue
        if s.status in FAILING:
            before = next((x for t in reversed(chain[:at]) for x in t.seats if x.model == s.model), None)
            if before is not None and before.status in FAILING:
                continue
        kept.append(s.model)
    return kept


@dataclass
class Thread:
    """A follow-up as the record knows it: the messages each seat is sent, with the assistant turns at `swaps`
    (index, the turn's panel) made each seat's own; the explore seats kept; the one seat asked, when only one is."""
    links: Links
    messages: list
    system: str | None
    swaps: list = field(default_factory=list)
    keep: list = field(default_factory=list)
    only: SeatSaid | None = None
    blind: bool = False             # the turn before was blind: so is this one, each model in its seat number
    numbers: dict = field(default_factory=dict)   # alias -> its seat number in the turn before

    def ask_for(self, ask: Ask, model: str) -> Ask:
        """The seat's own Ask: its thread in place of the replies every seat saw (its token estimate made anew)."""
        messages = list(self.messages)
        for index, turn in self.swaps:
            said = own_answer(turn, model)
            if said is not None or not messages[index].text():
                messages[index] = Message("assistant", [Text(said if said is not None else NOTHING)])
        other = object.__new__(Ask)
        other.__dict__.update(ask.__dict__)
        other.messages, other.system, other._tokens = messages, self.system, None
        return other


def stored_messages(turn: PanelTurn) -> list[Message]:
    """A turn's own messages as its record keeps them (text; images and tool traffic as their notes there), from
    where the turn began: the messages before were earlier turns the client sent back."""
    messages = turn.request.get("messages") or []
    left_out = (turn.request.get("truncated") or {}).get("messages_left_out") or 0
    out = []
    for m in messages[max(0, turn.turn_start - left_out):]:
        if isinstance(m, dict) and m.get("role") in ("user", "system", "assistant"):
            out.append(Message(m["role"], [Text(str(m.get("content") or ""))]))
    return out


class Threads:
    """Works out a follow-up's thread from the record; a lookup by hash at most for an ask that names no panel."""

    def __init__(self, store: Conversations):
        self.store = store

    def open(self, seating: Seating, ask: Ask, collection, direct, asker) -> tuple:
        """(who sits, the follow-up's Thread or None, whether it is a chat UI's background task, the Ask as the
        referee, the merge and seating read it: a follow-up's conversation with the picked answers in its turns)."""
        if tasks.background(ask):   # a chat UI's title or tags: one member, no points
            ask.points = "off"
            return task_plan(seating, ask, collection, direct, asker), None, True, ask
        thread = self.follow(ask, asker.caller)
        seen = thread.ask_for(ask, "") if thread else ask
        return self.plan(seating, thread, seen, collection, direct, asker), thread, False, seen

    def follow(self, ask: Ask, caller: str | None) -> Thread | None:
        if ask.continues:
            return self.continued(ask, caller)
        return self.matched(ask, caller)

    def matched(self, ask: Ask, caller: str | None) -> Thread | None:
        """The thread of a history holding earlier replies of this gateway: its last assistant turn looked up by
        the hash of its text, the turns before it read down the panel's links (each assistant turn matched to its
        panel by that hash too: an edited one is left as it is). None: no earlier reply of ours in it (or one that
        another gateway key asked: its seats' answers are that key's)."""
        spots = [i for i, m in enumerate(ask.messages) if m.role == "assistant"]
        if not spots:
            return None
        last_text = ask.messages[spots[-1]].text()
        panel = self.store.by_reply(last_text) if last_text.strip() else None
        if panel is None:
            return None
        chain = self.store.chain(panel, len(spots))
        if not chain or (caller is not None and chain[-1].caller != caller):
            return None
        pairs = list(zip(reversed(spots), reversed(chain)))
        known = self.store.replied([ask.messages[i].text() for i, _ in pairs[1:]]) if len(pairs) > 1 else set()
        swaps = [pairs[0]] + [(i, turn) for i, turn in pairs[1:]
                              if (reply_hash(ask.messages[i].text()), turn.panel) in known]
        last = chain[-1]
        links = Links(last.panel, last.conversation or last.panel, spots[-1] + 1)
        return Thread(links, ask.messages, ask.system, swaps, kept_explore(chain), None, *blind_of(last))

    def continued(self, ask: Ask, caller: str | None) -> Thread:
        """The thread of `bench.continue`: every turn of the panel's conversation rebuilt from the record (what each
        was asked, as kept), then what this ask adds."""
        chain = self.store.chain(ask.continues) if ask.continues else []
        last = chain[-1] if chain else None
        if last is None or (caller is not None and last.caller != caller):
            raise NotFound(f"No panel {ask.continues!r} to continue.",
                           "Send the id a panel's reply gave (`bench.panel`, the X-Bench-Panel header).")
        if last.collection != ask.aim.name:
            raise BadRequest(f"The panel {ask.continues!r} asked {last.collection!r}, not {ask.aim.name!r}.",
                             f"Ask the same one to continue it: model bench/{last.collection} (or the model itself).")
        messages: list = []
        swaps = []
        for turn in chain:
            messages += stored_messages(turn)
            swaps.append((len(messages), turn))
            messages.append(Message("assistant", []))
        only = None
        if ask.only_seat is not None:
            only = next((s for s in last.seats if s.seat == ask.only_seat), None)
            if only is None:
                hide = last.blind and not last.revealed   # a blind panel not yet judged names no model
                raise BadRequest(f"The panel {last.panel!r} has no seat {ask.only_seat}.", "Its seats: " + ", ".join(
                    str(s.seat) if hide else f"{s.seat} ({s.model})" for s in last.seats) + ".")
        system = ask.system if ask.system is not None else last.request.get("system")
        links = Links(last.panel, last.conversation or last.panel, 0)
        if not ask.with_models:   # the seats asked for by name stay too: the client sends nothing but its question
            ask.with_models = next(([s.model for s in t.seats if s.kind == WITH] for t in reversed(chain)
                                    if any(s.kind == WITH for s in t.seats)), [])
        return Thread(links, messages + list(ask.messages), system, swaps, kept_explore(chain), only,
                      *blind_of(last))

    def plan(self, seating: Seating, thread: Thread | None, ask: Ask, collection, direct, asker) -> Plan:
        """Who sits: the one seat asked; else the collection's seats with the explore seats of the turn before."""
        if thread is None:
            return seating.plan(ask, collection, direct, asker)
        if thread.blind and ask.blind is None:
            ask.blind = True
        if thread.only is None:
            plan = seating.plan(ask, collection, direct, asker, kept=thread.keep)
            if plan.hidden is not None and thread.blind:
                keep_numbers(plan, thread.numbers)
            return plan
        seat = thread.only
        model = seating.registry.models().get(seat.model)
        if model is None:
            raise NotFound(f"The model of seat {seat.seat}, {seat.model!r}, is no longer on the bench.",
                           "Continue with the whole panel, or with another seat.")
        why = seating.why_not(model, ask, ask.prompt_tokens(), None, seat.kind, asker, named=True)
        plan = Plan([SeatPlan(seat.seat, seat.kind, model, why)])
        plan.hidden = hider(plan) if ask.blind else None
        return plan


def task_plan(seating: Seating, ask: Ask, collection, direct, asker) -> Plan:
    """A chat UI's background task (a title, tags): one member answers it, the first able one; no explore seats."""
    members = replace(collection, explore=0) if collection is not None else None
    plan = seating.plan(ask, members, direct, asker)
    able = next((sp for sp in plan.seats if sp.skip is None), None)
    plan.seats = [able or plan.seats[0]] if plan.seats else []
    return plan


def links_for(thread: Thread | None, task: bool) -> Links | None:
    """Where the panel stands in its conversation, and a background task set aside at once."""
    if thread is None and not task:
        return None
    links = thread.links if thread else Links()
    return replace(links, set_aside=time.time()) if task else links


def blind_of(turn: PanelTurn) -> tuple[bool, dict]:
    """(whether a follow-up of `turn` is blind, each model's seat number in it)."""
    return turn.blind, ({s.model: s.seat for s in turn.seats} if turn.blind else {})
