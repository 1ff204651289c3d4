"""Reading a model's answer: the JSON asked for first, then prose read leniently; how it was read is kept."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

JSON, PROSE, UNREADABLE, EMPTY = "json", "prose", "unreadable", "empty"

FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.S)
LINE_RANGE = re.compile(r"\b(?:lines?|L)\s*#?\s*(\d+)(?:\s*(?:-|–|to|through|and)\s*(?:lines?\s*)?(\d+))?", re.I)
NO_BUG = re.compile(r"\b(no (?:bugs?|issues?|problems?)|(?:does not|doesn't) (?:hold|contain|have) (?:a |any )?bugs?|"
                    r"(?:looks|is) correct|bug-free)\b", re.I)
VERDICT = re.compile(r"\b(true|false|correct|incorrect|wrong|right)\b", re.I)
CONFIDENCE = re.compile(r"confiden\w*\W{0,3}(?:is|of|:)?\s*(\d+(?:\.\d+)?)\s*(%)?", re.I)
TRUTHS = {"true": True, "correct": True, "right": True, "yes": True,
          "false": False, "incorrect": False, "wrong": False, "no": False}


@dataclass
class ParsedAnswer:
    how: str                                        # json | prose | unreadable | empty
    flagged: list = field(default_factory=list)     # [(file or None, first, last)]
    verdict: bool | None = None                     # claim tasks
    confidence: float | None = None                 # 0..1 when stated

    @property
    def answered(self) -> bool:
        return self.how in (JSON, PROSE)


def objects(text: str):
    """Candidate JSON objects in the text: fenced blocks, then each balanced {...}."""
    for m in FENCE.finditer(text):
        yield m.group(1)
    depth, start = 0, None
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                yield text[start:i + 1]


def first_object(text: str, key: str) -> dict | None:
    for candidate in objects(text):
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict) and key in data:
            return data
    return None


def confidence_of(value) -> float | None:
    """0..1 from a number or a percentage; None when it is not one."""
    if isinstance(value, str):
        m = re.match(r"\s*(\d+(?:\.\d+)?)\s*(%)?\s*$", value)
        if not m:
            return None
        value = float(m.group(1)) / (100 if m.group(2) else 1)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if 1 < value <= 100:
        value /= 100
    return value if 0 <= value <= 1 else None


def prose_confidence(text: str) -> float | None:
    m = CONFIDENCE.search(text)
    return confidence_of(m.group(1) + (m.group(2) or "")) if m else None


def line_pair(value) -> tuple[int, int] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value, value
    if isinstance(value, str) and re.match(r"^\s*\d+\s*(?:-\s*\d+\s*)?$", value):
        nums = [int(n) for n in re.findall(r"\d+", value)]
        return nums[0], nums[-1]
    if isinstance(value, list) and value and all(isinstance(n, int) and not isinstance(n, bool) for n in value):
        return min(value), max(value)
    return None


def parse_bugs(text: str) -> ParsedAnswer:
    """Flagged line ranges from a review answer."""
    if not (text or "").strip():
        return ParsedAnswer(EMPTY)
    data = first_object(text, "bugs")
    if data is not None and isinstance(data["bugs"], list):
        flagged = []
        for bug in data["bugs"]:
            if isinstance(bug, dict):
                pair = line_pair(bug.get("lines", bug.get("line")))
                if pair:
                    name = bug.get("file")
                    flagged.append((name if isinstance(name, str) else None, *sorted(pair)))
        return ParsedAnswer(JSON, flagged, confidence=confidence_of(data.get("confidence")))
    flagged = [(None, int(a), int(b or a)) if int(b or a) >= int(a) else (None, int(b), int(a))
               for a, b in LINE_RANGE.findall(text)]
    if flagged or NO_BUG.search(text):
        return ParsedAnswer(PROSE, flagged, confidence=prose_confidence(text))
    return ParsedAnswer(UNREADABLE)


def parse_claim(text: str) -> ParsedAnswer:
    """A true/false verdict from a claim answer."""
    if not (text or "").strip():
        return ParsedAnswer(EMPTY)
    data = first_object(text, "verdict")
    if data is not None:
        raw = data["verdict"]
        verdict = raw if isinstance(raw, bool) else TRUTHS.get(str(raw).strip().lower())
        if verdict is not None:
            return ParsedAnswer(JSON, verdict=verdict, confidence=confidence_of(data.get("confidence")))
    words = {w.lower() for w in VERDICT.findall(text)}
    said = {TRUTHS[w] for w in words}
    if len(said) == 1:   # prose that says only one of true or false
        return ParsedAnswer(PROSE, verdict=said.pop(), confidence=prose_confidence(text))
    return ParsedAnswer(UNREADABLE)
