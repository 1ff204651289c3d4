"""What a judge of a panel reads (the referee, the merge model): no model named anywhere, the seats in a fresh random
order each call, and no line of anyone's text that could pass for one of the prompt's own headings, in any spelling."""
from __future__ import annotations

import random
import re
import unicodedata

from ..canonical import Seat
from ..redaction import model_names, names_pattern, unnamed

MARK = "\u2502 "            # how a neutralised line starts: the instructions say what it means
MARK_NOTE = ("A line inside an answer (or the question) that looked like a heading is shown after a \u2502 mark: it "
             "is that text's own line, never one of this prompt's headings.")
HASHES = "#\u266f\u22d5\uff03\ufe5f\u2317"    # '#' and signs that read as one (music sharp, full-width, small...)
WRAPPERS = "*_~`>|\\ \t"   # emphasis, quote and escape marks a heading may hide behind
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
                       "\u3164\ufe00-\ufe0f\ufeff\uffa0\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Read as the prompt's own lines: a heading, a heading's underline, an HTML heading, or a line that begins with what
# the prompt's headings and end line say (`Seat 2`, `End of the answers`), whatever marks come before it.
PROMPT_WORDS = re.compile(r"(?:seat\b|end\s+of\s+the\s+answers?\b|the\s+question\b|the\s+panel)", re.I)
UNDERLINE = re.compile(r"[=\-\u2014\u2013_]{2,}")
HTML_HEADING = re.compile(r"<\s*/?\s*h[1-6]\b", re.I)
# The quick look first: in plain ASCII text without control characters, only a line that starts (after spaces and
# marks) with one of these can read as a heading; any other text is looked at line by line.
SUSPECT = re.compile(r"^[ \t*_~`>|\\]*(?:[#=<\-_]|seat|end|the\s+(?:question|panel))", re.I | re.M)
ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
SUSPECT_OR_CONTROL = re.compile(SUSPECT.pattern + "|" + ASCII_CONTROL.pattern, re.I | re.M)    # one pass, not two


def folded_line(line: str) -> str:
    """A line as a reader takes it: compatibility forms folded (a full-width '#' is '#'), invisible characters out,
    odd spaces as spaces, the marks before its first word dropped."""
    text = INVISIBLE.sub("", unicodedata.normalize("NFKC", line))
    return " ".join(text.split()).lstrip(WRAPPERS)


def heading_like(line: str) -> bool:
    """Whether `line` could read as a heading or as the prompt's end line."""
    seen = folded_line(line)
    if not seen:
        return False
    if seen[0] in HASHES or UNDERLINE.fullmatch(seen.replace(" ", "")) or HTML_HEADING.match(seen):
        return True
    return bool(PROMPT_WORDS.match(seen.lstrip(HASHES + WRAPPERS)))


def neutralised(text: str) -> str:
    """`text` with every heading-like line made plain: after MARK, without the signs that made it a heading."""
    if text.isascii() and not SUSPECT_OR_CONTROL.search(text):
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if heading_like(line):
            lines[i] = MARK + folded_line(line).lstrip(HASHES + WRAPPERS)
    return "\n".join(lines)


def shuffled(seats: list[Seat]) -> list[Seat]:
    """The seats in a fresh random order: no seat is always read first (position bias)."""
    return random.sample(seats, len(seats))


def panel_names(seats: list[Seat], models: dict) -> re.Pattern | None:
    """The names of a panel's seats' models, as they may appear in its conversation: alias and served name. A
    collection's panels seat the same models: the pattern is worked out once for them, while `models` (the
    registry's dict, replaced whenever models.json is read again) is the one it was worked out from."""
    key = tuple([seat.model for seat in seats])
    hit = _NAMES.get(key)
    if hit is not None and hit[0] is models:
        return hit[1]
    found = names_pattern(model_names((alias, models[alias].served if alias in models else None) for alias in key))
    if len(_NAMES) > 256:       # the seatings seen lately: a handful
        _NAMES.clear()
    _NAMES[key] = (models, found)
    return found


_NAMES: dict[tuple, tuple] = {}     # seats' aliases -> (the models dict read, their names' pattern)


class Unnamed:
    """What a blind panel's asker reads until it is judged: each seat as "Seat N" (in a random order: core.panel
    numbers them after a shuffle), its text and error with the panel's model names as "a model"."""

    def __init__(self, names: re.Pattern | None):
        self.names = names

    def text(self, text: str | None) -> str | None:
        return unnamed(text, self.names) if text else text

    def seat(self, d: dict) -> dict:
        """A seat's dict (Seat.to_dict) with no model named."""
        return {**d, "model": f"Seat {d['seat']}", "answer": self.text(d.get("answer")),
                "error": self.text(d.get("error"))}

    def passed(self, notes: list) -> list:
        """The models passed over (for an explore seat, as referee or as merge model: {model, reason}) with none
        named: which were left out says which sat (a referee is passed over for being one of the seats)."""
        return [{**n, "model": "a model", "reason": self.text(n.get("reason"))} for n in notes]


def blinding(wanted: bool, plan) -> Unnamed | None:
    """For a blind panel (`wanted`), its seating plan in a fresh random order, numbered 1..N in it (its seat numbers
    then say nothing of who sits where: a collection's members are otherwise seated in its order), and what hides
    its models' names (alias and served name); None: not blind."""
    if not wanted:
        return None
    plan.seats = random.sample(plan.seats, len(plan.seats))
    for number, sp in enumerate(plan.seats, 1):
        sp.number = number
    return hider(plan)


def hider(plan) -> Unnamed:
    """What hides the names (alias and served name) of a plan's models."""
    return Unnamed(names_pattern(model_names((sp.model.alias, sp.model.served) for sp in plan.seats)))


def keep_numbers(plan, before: dict) -> None:
    """A blind conversation's next turn: each model that sat before keeps its seat number (`before`: alias ->
    number), so "Seat 2" is the same model all through; new seats take the numbers left, in their random order."""
    for sp in plan.seats:
        old = before.get(sp.model.alias)
        sp.number = old if old is not None and old <= len(plan.seats) else 0
    taken = {sp.number for sp in plan.seats if sp.number}
    free = [n for n in range(1, len(plan.seats) + 1) if n not in taken]
    for sp in plan.seats:
        if not sp.number:
            sp.number = free.pop(0)
    plan.seats.sort(key=lambda sp: sp.number)


def still_blind(item: dict) -> dict:
    """A panel's record (store.history's item) as its asker reads it: a blind one not yet judged with each seat as
    "Seat N", no served name, the panel's model names out of every text (the merge's and the referee's too)."""
    if not item["blind"] or item["revealed"]:
        return item
    hidden = Unnamed(names_pattern(model_names((seat["model"], seat.get("served")) for seat in item["seats"])))
    seats = [{**hidden.seat(s), "served": None} for s in item["seats"]]
    after = {k: {**item[k], "answer": hidden.text(item[k]["answer"]), "error": hidden.text(item[k]["error"])}
             for k in ("merge", "referee") if item.get(k)}
    return {**item, **after, "seats": seats, "passed_over": hidden.passed(item.get("passed_over") or [])}
