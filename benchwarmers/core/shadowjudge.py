"""A judge model for route mode's shadow answers: once a turn's shadow seats are in, off the agent's path, a
collection's judge (never one of the turn's contestants) reads the served answer and each shadow's, blind (no model
named, in a fresh random order), and says of each whether it is useful. Its verdicts are kept apart from the user's
(store/judgestore.py), within a monthly spending cap priced from the catalog and at the collection's rate; they count
in route choice only once their agreement with the user's verdicts holds (rankings.agreement_holds)."""
from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..canonical import FAILED, OK, ROUTE, Answer, Ask, Collector, Message, Text
from ..errors import BenchError, QuotaRefused
from ..roster.registry import Model, Registry
from ..store.ids import record_id
from ..store.judgestore import JudgeStore, agreement_rows
from ..store.ledger import month_of
from ..redaction import model_names
from .blind import names_pattern, neutralised, unnamed
from .calling import Dialer
from .collection import Collection
from .evidence import JUDGE_MIN_AGREEMENT, JUDGE_MIN_COMPARED, JUDGE_WEIGHT
from .lanes import Lanes
from .rankings import agreement_holds, wilson
from .recorder import Ended
from .referee import json_objects, question_of

log = logging.getLogger("benchwarmers.judge")
KIND = "judge"
MAX_TOKENS = 600
MAX_ANSWER_CHARS = 6000
INSTRUCTIONS = (
    "You judge answers to an assistant's turn in a conversation (often a coding agent's). You get the conversation "
    "and several candidate answers, each under '## Answer N'. The answers come from different assistants, in no "
    "particular order. For each answer decide whether it is useful: it does what the turn asks, correctly, and any "
    "tool call it makes is the right call with sensible arguments. Judge each on its own merits; several or none may "
    "be useful. Reply with one JSON object and nothing else: "
    '{"answers": [{"answer": 1, "useful": true, "why": "a short reason"}, ...]}, one entry per answer.')


@dataclass
class Contestant:
    call: str
    model: Model
    answer: Answer


@dataclass
class Gathering:
    """A turn's answers as its shadow seats come in; judged once the last is in."""
    turn: str
    collection: Collection
    ask: Ask
    judge: Model
    expected: int
    answers: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ShadowJudge:
    def __init__(self, registry: Registry, dialer: Dialer, store: JudgeStore, lanes: Lanes,
                 chance: Callable[[], float] = random.random, clock: Callable[[], float] = time.time):
        self.registry, self.dialer, self.store, self.lanes = registry, dialer, store, lanes
        self.chance, self.clock = chance, clock
        self.skipped: dict = {}      # collection -> why its last turn went unjudged (shown on its page)
        self._reserved: dict = {}    # collection -> USD the judge calls under way may spend: the cap holds them too
        self._lock = threading.Lock()

    def gather(self, collection: Collection, turn: str, ask: Ask, served: Contestant, shadows: list[Model]):
        """A Gathering for this turn's answers, or None: no judge, the rate left it out, the judge is a contestant."""
        judge = self.registry.models().get(collection.judge or "")
        if judge is None or not shadows:
            return None
        if not judge.active:
            self.skipped[collection.name] = f"the judge {judge.alias} is retired: {judge.reason or 'no reason given'}"
            return None
        if judge.alias in {served.model.alias, *(m.alias for m in shadows)}:
            self.skipped[collection.name] = f"the judge {judge.alias} answered the turn itself"
            return None
        if self.chance() >= collection.judge_rate:
            return None
        g = Gathering(turn, collection, ask, judge, len(shadows) + 1)
        g.answers.append(served)
        return g

    def arrived(self, g: Gathering | None, answer: Contestant | None) -> None:
        """A shadow seat is over (`answer` None: it gave none); the last one sends the turn to the judge."""
        if g is None:
            return
        with g.lock:
            if answer is not None:
                g.answers.append(answer)
            g.expected -= 1
            last = g.expected == 1
        if last:
            self.lanes.submit(g.judge.endpoint, self.judge, g)

    # ---- judging ---------------------------------------------------------------------------------
    def judge(self, g: Gathering) -> dict | None:
        """Ask the judge about the turn's answers, within the month's budget; record its call and verdicts."""
        col, name = g.collection, g.collection.name
        if len(g.answers) < 2:
            return None   # nothing to compare the served answer with
        order = random.sample(g.answers, len(g.answers))
        ask = judge_ask(g.ask, order, self.registry.models())
        why, most = self.reserve(col, g.judge, ask)
        if why:
            self.skipped[name] = why
            return None
        try:
            return self._ask(g, order, ask)
        finally:
            with self._lock:
                self._reserved[name] -= most

    def _ask(self, g: Gathering, order: list, ask: Ask) -> dict | None:
        name = g.collection.name
        call, started, answer, error = record_id(), time.monotonic(), None, None
        try:
            collector = Collector()
            for ev in self.dialer.stream(g.judge, ask, KIND):
                collector.add(ev)
            answer = collector.result()
        except QuotaRefused as e:   # one of the user's limits: nothing was sent, nothing spent
            self.skipped[name] = f"the judge {g.judge.alias} is held by a rate limit: {e.message}"
            return None
        except BenchError as e:
            error = str(e)
            self.dialer.failed(g.judge, e)
        except Exception as e:   # a judge must never disturb anything
            log.exception("judge %s failed", g.judge.alias)
            error = f"internal error: {type(e).__name__}"
        verdicts = read_verdicts(answer.text if answer else "", order)
        self.dialer.record(Ended(call, g.judge, ask, OK if verdicts else FAILED, KIND, ROUTE,
                                 time.monotonic() - started, answer, error or (None if verdicts else
                                                                               "the judge's answer held no verdicts"),
                                 collection=name, turn=g.turn, extra={"judged": [c.call for c in order]}))
        self.store.add(g.turn, name, g.judge.alias, call, [(c.call, c.model.alias, u) for c, u in verdicts],
                       (month_of(self.clock()), self.dialer.pricing.cost(g.judge, answer) or 0.0), self.clock())
        self.skipped.pop(name, None)
        return {"call": call, "verdicts": {c.call: u for c, u in verdicts}}

    def reserve(self, col: Collection, judge: Model, ask: Ask) -> tuple[str | None, float]:
        """(why the judge may not be asked now, or None; the USD set aside for this call). Not asked: its price is
        unknown, or the month's spending with the calls under way and this one (its prompt and its longest answer,
        at the catalog's price) would pass the collection's cap."""
        price_in, price_out, _ = self.dialer.price(judge)
        if price_in is None or price_out is None:
            return f"the judge {judge.alias}'s price is unknown, so its budget cannot be kept", 0.0
        spent, _ = self.store.spent(month_of(self.clock()), col.name)
        most = self.dialer.pricing.estimate(judge, ask, cap=MAX_TOKENS) or 0.0
        with self._lock:
            under_way = self._reserved.get(col.name, 0.0)
            if spent + under_way + most > (col.judge_budget or 0.0):
                return f"this month's judge budget is spent (${spent:.4f} of ${col.judge_budget or 0.0:.2f})", 0.0
            self._reserved[col.name] = under_way + most
        return None, most

    def status(self, col: Collection) -> dict:
        """The collection's judge as its page shows it: model, cap, rate, this month's spending, why it last stopped."""
        usd, calls = self.store.spent(month_of(self.clock()), col.name)
        return {"model": col.judge, "budget": col.judge_budget, "rate": col.judge_rate,
                "month": {"usd": round(usd, 6), "calls": calls}, "stopped": self.skipped.get(col.name),
                "agreement": [agreement(judge, n, k) for judge, n, k in agreement_rows(self.store.db, (col.name,))
                              .get(col.name, [])]}


def agreement(judge: str, compared: int, agreed: int) -> dict:
    """How often a judge agreed with the user on answers both judged, with its Wilson interval (95%), and whether its
    verdicts count in route choice (evidence.JUDGE_MIN_COMPARED, JUDGE_MIN_AGREEMENT)."""
    lo, hi = wilson(agreed, compared) if compared else (None, None)
    return {"judge": judge, "compared": compared, "agreed": agreed,
            "rate": round(agreed / compared, 3) if compared else None,
            "interval": [round(lo, 3), round(hi, 3)] if lo is not None and hi is not None else None,
            "counts": agreement_holds(compared, agreed), "weight": JUDGE_WEIGHT,
            "needs": {"compared": JUDGE_MIN_COMPARED, "lower_bound": JUDGE_MIN_AGREEMENT}}


def judge_ask(original: Ask, order: list[Contestant], models: dict) -> Ask:
    """The judge's call: the conversation and each answer under `## Answer N` in `order`, no model named."""
    pattern = names_pattern(model_names((c.model.alias, c.model.served) for c in order))
    blocks = [f"## Answer {n}\n\n{neutralised(unnamed(shown_answer(c.answer), pattern))}"
              for n, c in enumerate(order, 1)]
    text = ("The conversation so far (the latest last):\n\n" + neutralised(question_of(original, pattern)) +
            "\n\nThe candidate answers to its next turn:\n\n" + "\n\n".join(blocks) +
            "\n\nNow judge each answer as the one JSON object described.")
    return Ask(messages=[Message("user", [Text(text)])], system=INSTRUCTIONS, max_tokens=MAX_TOKENS,
               temperature=0.0, target=original.target)


def shown_answer(answer: Answer) -> str:
    """An answer as the judge reads it: its text, then each tool call with its arguments as they came."""
    text = (answer.text or "").strip()
    for c in answer.tool_calls:
        text += f"\n[tool call {c.name} with arguments {c.arguments[:2000]}]"
    text = text.strip() or "(an empty answer)"
    return text if len(text) <= MAX_ANSWER_CHARS else text[:MAX_ANSWER_CHARS] + "\n[... the rest not shown]"


def read_verdicts(text: str, order: list[Contestant]) -> list[tuple[Contestant, bool]]:
    """(contestant, useful) for each answer the judge's JSON names by its number; [] when it holds none."""
    entries = next((o["answers"] for o in json_objects(text) if isinstance(o.get("answers"), list)), None)
    out, seen = [], set()
    for e in entries or []:
        if not isinstance(e, dict) or not isinstance(e.get("useful"), bool):
            continue
        n = e.get("answer")
        if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= len(order) and n not in seen:
            seen.add(n)
            out.append((order[n - 1], e["useful"]))
    return out

