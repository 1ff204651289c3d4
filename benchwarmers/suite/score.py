"""Scoring: one item (hit, miss, false alarm, clean, right, wrong, unanswered) and a model's tally per purpose."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..core.rankings import wilson
from .parse import ParsedAnswer

HIT, MISS, FALSE_ALARM, CLEAN = "hit", "miss", "false_alarm", "clean"
RIGHT, WRONG, UNANSWERED, FAILED = "right", "wrong", "unanswered", "failed"
CORRECT = {HIT: 1, CLEAN: 1, RIGHT: 1, MISS: 0, FALSE_ALARM: 0, WRONG: 0, UNANSWERED: 0}
CALIBRATION_BINS = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
SURE = 0.8        # a wrong answer stated at this confidence or above is "confidently wrong"


def same_file(named: str | None, path: str, paths: list) -> bool:
    """A flag with no file name fits any file; a name fits by path, or by its last part."""
    if not named:
        return True
    named = named.strip().lstrip("./")
    return named == path or path.endswith("/" + named) or named.endswith("/" + path) or \
        (named.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1] and len(paths) == 1)


def overlaps(flagged: list, key: dict) -> bool:
    """True when any flagged range overlaps any buggy range of the same file."""
    paths = list(key)
    for name, first, last in flagged:
        for path, ranges in key.items():
            if same_file(name, path, paths) and any(first <= b and a <= last for a, b in ranges):
                return True
    return False


def outcome(task, variant: str, parsed: ParsedAnswer) -> str:
    if not parsed.answered:
        return UNANSWERED
    if variant == "claim":
        if parsed.verdict is None:
            return UNANSWERED
        return RIGHT if parsed.verdict == task.answer["truth"] else WRONG
    if variant == "control":
        return FALSE_ALARM if parsed.flagged else CLEAN
    return HIT if overlaps(parsed.flagged, task.answer["lines"]) else MISS


def rate(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def tally(rows: list[dict]) -> dict:
    """{model: {"review": {...}, "claims": {...}, "calibration": [...], "parse": {...}}} from result rows
    (dicts with model, purpose, variant, outcome, confidence, parse); failed calls are counted, never scored."""
    by_model: dict = defaultdict(list)
    for r in rows:
        by_model[r["model"]].append(r)
    return {model: summarise(items) for model, items in sorted(by_model.items())}


def summarise(rows: list[dict]) -> dict:
    count: defaultdict[str, int] = defaultdict(int)
    for r in rows:
        count[r["outcome"]] += 1
        count["parse_" + (r.get("parse") or "none")] += 1
    bugs = count[HIT] + sum(1 for r in rows if r["variant"] == "bug" and r["outcome"] in (MISS, UNANSWERED))
    controls = count[FALSE_ALARM] + count[CLEAN] + sum(1 for r in rows
                                                       if r["variant"] == "control" and r["outcome"] == UNANSWERED)
    claims = sum(1 for r in rows if r["variant"] == "claim" and r["outcome"] != FAILED)
    review_right = count[HIT] + count[CLEAN]
    out: dict[str, Any] = {"review": None, "claims": None,
           "failed": count[FAILED], "calibration": calibration(rows), "parse": {
               k: count["parse_" + k] for k in ("json", "prose", "unreadable", "empty") if count["parse_" + k]}}
    if bugs or controls:
        out["review"] = {
            "bugs": bugs, "hits": count[HIT], "hit_rate": rate(count[HIT], bugs),
            "controls": controls, "false_alarms": count[FALSE_ALARM], "false_alarm_rate": rate(count[FALSE_ALARM],
                                                                                              controls),
            "clean": count[CLEAN], "unanswered": sum(1 for r in rows if r["purpose"] == "review"
                                                     and r["outcome"] == UNANSWERED),
            "score": rate(review_right, bugs + controls), "interval": interval(review_right, bugs + controls)}
    if claims:
        out["claims"] = {"claims": claims, "right": count[RIGHT], "wrong": count[WRONG],
                         "unanswered": sum(1 for r in rows if r["variant"] == "claim" and r["outcome"] == UNANSWERED),
                         "score": rate(count[RIGHT], claims), "interval": interval(count[RIGHT], claims)}
    out["confidently_wrong"] = sum(1 for r in rows if CORRECT.get(r["outcome"]) == 0 and r["outcome"] != UNANSWERED
                                   and (r.get("confidence") or 0) >= SURE)
    return out


def interval(right: int, n: int) -> list | None:
    """The 95% Wilson interval of a score: a few tasks say little, and the width shows it."""
    if not n:
        return None
    low, high = wilson(right, n)
    return [round(low, 3), round(high, 3)]


def calibration(rows: list[dict]) -> list[dict]:
    """Per band of stated confidence: how many answers, and the share of them that were right."""
    out = []
    for low, high in CALIBRATION_BINS:
        band = [r for r in rows if r.get("confidence") is not None and low <= r["confidence"] < high
                and r["outcome"] in CORRECT]
        if band:
            right = sum(CORRECT[r["outcome"]] for r in band)
            out.append({"stated": [low, min(high, 1.0)], "answers": len(band), "right": right,
                        "right_rate": rate(right, len(band))})
    return out
