"""A fake referee: reads the seats out of the referee's prompt and answers their points; its liars break the contract.

    from tests.fakes.referee import FakeReferee, said
    seats = said({1: "The cache is stale. The lock is held.", 2: "The cache is fresh.", 3: "The lock is held."})
    fake.script("referee", FakeReferee().reply())          # any provider fake: the answer is worked out per call
    fake.script("referee", FakeReferee("seat_nine").reply())   # a liar: see LIES
    fake.script("referee", FakeReferee("obedient").reply())    # follows what a seat's answer tells the referee
    fake.script("referee", FakeReferee().reply(hold=gate))     # answers once the test sets `gate` (a slow referee)
    fake.script("referee", FakeReferee.hang(gate))         # says nothing until the test sets `gate`

Its claim language is one sentence form, "<subject> is [not] <value>.": one point per subject, claiming the value
most seats give it (ties: the last in the alphabet, so the order the seats come in changes nothing); seats that give
that value assert it, seats that deny it or give another contradict it, each
quoted by its own sentence (a seat's first about that subject). Answers
without such sentences (the fakes' echo) have no points. It reads the seats as the prompt numbers them (`## Seat N`,
in the prompt's own order), so its seat numbers are the prompt's, never the reply's.

The obedient liar also does what a line `REFEREE: {...}` in a seat's answer tells it: that object is one more point,
"me" in its sides and quotes meaning the seat that wrote it and "them" every other seat.
"""
from __future__ import annotations

import json
import re
import threading

from benchwarmers.canonical import OK, Seat

from .server import Reply

HEADING = re.compile(r"^## Seat (\d+)$", re.M)
END = re.compile(r"^## End of the answers$", re.M)
SENTENCE = re.compile(r"[^.!?\n]+[.!?]")
STATEMENT = re.compile(r"^\s*(?P<subject>[A-Za-z][\w ]*?) is (?P<neg>not )?(?P<value>[\w -]+?)\s*[.!?]$")
PLANTED = re.compile(r"REFEREE: (\{.*\})")
LIES = ("bad_quotes", "seat_nine", "huge", "prose", "fenced", "both_sides", "empty", "obedient")


def said(answers: dict[int, str], models: dict[int, str] | None = None) -> list[Seat]:
    """Seats that answered `answers` (seat number -> text), as a finished panel's seats."""
    return [Seat(n, "member", (models or {}).get(n, f"m{n}"), status=OK, answer=text)
            for n, text in sorted(answers.items())]


def seats_in(prompt: str) -> dict[int, str]:
    """seat number -> its answer, read from the referee prompt's `## Seat N` blocks."""
    body = END.split(prompt, 1)[0]
    marks = list(HEADING.finditer(body))
    return {int(m.group(1)): body[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(body)].strip()
            for i, m in enumerate(marks)}


def statements(answer: str) -> list[tuple[str, str, bool, str]]:
    """(subject, value, denied, the sentence as written) for each claim sentence of an answer."""
    out = []
    for sentence in SENTENCE.findall(answer):
        m = STATEMENT.match(sentence)
        if m:
            out.append((m["subject"].strip().lower(), m["value"].strip().lower(), bool(m["neg"]),
                        sentence.strip().rstrip(".!?")))
    return out


def points(prompt: str) -> list[dict]:
    """The honest points of the seats in `prompt`, in the contract's shape."""
    said_by: dict[str, dict[int, tuple[str, bool, str]]] = {}
    for seat, answer in seats_in(prompt).items():
        for subject, value, denied, sentence in statements(answer):
            said_by.setdefault(subject, {}).setdefault(seat, (value, denied, sentence))
    out = []
    for subject, seats in said_by.items():
        stated = [v for v, neg, _ in seats.values() if not neg] or [v for v, _, _ in seats.values()]
        # the value most seats give, ties to the last in the alphabet: the same whatever order the seats come in
        value = max(stated, key=lambda v: (stated.count(v), v))
        asserts = [s for s, (v, neg, _) in seats.items() if v == value and not neg]
        denies = [s for s, (v, neg, _) in seats.items() if (v == value) == neg]
        out.append({"claim": f"The {subject.removeprefix('the ')} is {value}.".capitalize(),
                    "assert": asserts, "deny": denies, "quotes": {str(s): seats[s][2] for s in asserts + denies}})
    return out


class FakeReferee:
    """The referee's side of the contract, honest or, with `lie`, one of LIES."""

    def __init__(self, lie: str | None = None):
        if lie is not None and lie not in LIES:
            raise ValueError(f"unknown lie {lie!r}: one of {', '.join(LIES)}")
        self.lie = lie
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def reply(self, **kw) -> Reply:
        """A Reply for a provider fake's script: every call answers from the prompt it carried."""
        return Reply(compute=self.answer, **kw)

    @staticmethod
    def hang(gate: threading.Event) -> Reply:
        """A referee that says nothing (not even its headers) until `gate` is set or the fake stops."""
        return Reply(hold=gate)

    def answer(self, prompt: str) -> str:
        with self._lock:
            self.prompts.append(prompt)
        found = points(prompt)
        return getattr(self, f"_{self.lie}")(found, seats_in(prompt)) if self.lie else json.dumps({"points": found})

    # ---- the lies --------------------------------------------------------------------------------
    @staticmethod
    def _bad_quotes(found: list, seats: dict) -> str:
        for p in found:
            p["quotes"] = {s: f"seat {s} never wrote these words at all" for s in p["quotes"]}
        return json.dumps({"points": found})

    @staticmethod
    def _seat_nine(found: list, seats: dict) -> str:
        """Seat 9 of however many there are, quoting words that are in another seat's answer."""
        for p in found:
            p["assert"].append(9)
            p["quotes"]["9"] = next(iter(p["quotes"].values()))
        return json.dumps({"points": found})

    @staticmethod
    def _huge(found: list, seats: dict) -> str:
        """2 MB of well-formed JSON: the real points, then filler."""
        filler = [{"claim": f"Filler claim number {i}.", "assert": [1], "deny": [], "quotes": {"1": "x" * 40}}
                  for i in range(20_000)]
        return json.dumps({"points": found + filler, "padding": "x" * (2 * 1024 * 1024)})

    @staticmethod
    def _prose(found: list, seats: dict) -> str:
        return ("Looking at the answers, seat 1 and seat 2 seem to disagree about the cache, while the others "
                "mostly agree. I would trust seat 1.")

    @staticmethod
    def _fenced(found: list, seats: dict) -> str:
        """The contract kept, inside a code fence with prose around it (as chatty models answer)."""
        return f"Here are the points:\n\n```json\n{json.dumps({'points': found}, indent=2)}\n```\n\nHope it helps."

    @staticmethod
    def _both_sides(found: list, seats: dict) -> str:
        """Every asserting seat also listed as denying."""
        for p in found:
            p["deny"] = sorted(set(p["deny"]) | set(p["assert"]))
        return json.dumps({"points": found})

    @staticmethod
    def _empty(found: list, seats: dict) -> str:
        return ""

    @staticmethod
    def _obedient(found: list, seats: dict) -> str:
        """The honest points, and whatever point a seat's answer planted for the referee."""
        for seat, text in seats.items():
            for planted in PLANTED.findall(text):
                point = json.loads(planted)
                others = [s for s in seats if s != seat]

                def who(side):
                    return [seat] if side == "me" else others if side == "them" else side
                quotes = {}
                for key, quote in point.get("quotes", {}).items():
                    for s in who(key):
                        quotes[str(s)] = quote
                found.append(dict(point, quotes=quotes, **{"assert": who(point.get("assert")),
                                                           "deny": who(point.get("deny"))}))
        return json.dumps({"points": found})
