"""The scorer and the answer reader on hand-made answers: hit, miss, false alarm, clean, claims, prose, garbage."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchwarmers.suite import parse, score
from benchwarmers.suite.tasks import Task

BUG = Task("b", "bug", "", {"a.py": "x\n" * 20, "b.py": "y\n" * 20}, {"lines": {"a.py": [[5, 7]]}},
           {"a.py": "x\n" * 19 + "z\n", "b.py": "y\n" * 20})
CLAIM = Task("c", "claim", "", {"a.py": "x\n"}, {"claim": "x is x", "truth": True})


@pytest.mark.parametrize("answer, variant, expected", [
    ('{"bugs": [{"file": "a.py", "lines": [6, 6]}], "confidence": 0.9}', "bug", "hit"),
    ('{"bugs": [{"file": "a.py", "lines": [1, 5]}]}', "bug", "hit"),            # overlapping at one end
    ('{"bugs": [{"file": "a.py", "lines": [8, 12]}]}', "bug", "miss"),          # next to it is not on it
    ('{"bugs": [{"file": "b.py", "lines": [6, 6]}]}', "bug", "miss"),           # the right lines of another file
    ('{"bugs": [{"file": "src/a.py", "lines": "5-7"}]}', "bug", "hit"),         # a path that ends in the name
    ('{"bugs": [{"lines": 7}]}', "bug", "hit"),                                 # no file named: any file
    ('{"bugs": []}', "bug", "miss"),
    ('{"bugs": []}', "control", "clean"),
    ('{"bugs": [{"file": "b.py", "lines": [1, 2]}]}', "control", "false_alarm"),
    ("The bug is on line 6, where x is read twice.", "bug", "hit"),
    ("Lines 10 to 12 look wrong.", "bug", "miss"),
    ("I found no bugs in this code.", "control", "clean"),
    ("It is a lovely day.", "control", "unanswered"),
    ("", "bug", "unanswered"),
])
def test_bug_and_control_outcomes(answer, variant, expected):
    assert score.outcome(BUG, variant, parse.parse_bugs(answer)) == expected


@pytest.mark.parametrize("answer, expected, how", [
    ('{"verdict": "true", "confidence": 0.8}', "right", "json"),
    ('```json\n{"verdict": false, "confidence": "70%"}\n```', "wrong", "json"),
    ("The claim is true: the code says so. Confidence: 85%", "right", "prose"),
    ("This is false.", "wrong", "prose"),
    ("It could be true or false.", "unanswered", "unreadable"),
    ("", "unanswered", "empty"),
])
def test_claim_outcomes_and_how_the_answer_was_read(answer, expected, how):
    parsed = parse.parse_claim(answer)
    assert parsed.how == how
    assert score.outcome(CLAIM, "claim", parsed) == expected


@pytest.mark.parametrize("text, confidence", [
    ('{"bugs": [], "confidence": 0.25}', 0.25), ('{"bugs": [], "confidence": 80}', 0.8),
    ('{"bugs": [], "confidence": "high"}', None), ('{"bugs": [], "confidence": 7000}', None),
    ("No bugs here. Confidence: 60%", 0.6), ("No bugs, I am confident", None),
])
def test_stated_confidence_is_read_as_0_to_1(text, confidence):
    assert parse.parse_bugs(text).confidence == confidence


def test_json_inside_prose_is_still_the_json_answer():
    parsed = parse.parse_bugs('Sure! Here it is:\n{"bugs": [{"file": "a.py", "lines": [5, 9], "why": "x {y}"}]}\nBye')
    assert parsed.how == "json" and parsed.flagged == [("a.py", 5, 9)]


def rows(model, outcomes):
    variant = {"hit": "bug", "miss": "bug", "false_alarm": "control", "clean": "control", "right": "claim",
               "wrong": "claim"}
    return [{"model": model, "variant": variant.get(o, v), "purpose": "claims" if variant.get(o, v) == "claim"
             else "review", "outcome": o, "confidence": c, "parse": "json"} for o, v, c in outcomes]


def test_the_tally_per_purpose_with_calibration():
    t = score.tally(rows("m", [("hit", "", 0.9), ("miss", "", 0.95), ("clean", "", 0.6), ("false_alarm", "", 0.85),
                               ("unanswered", "control", None), ("right", "", 0.9), ("wrong", "", 0.2),
                               ("failed", "claim", None)]))["m"]
    assert t["review"] == {"bugs": 2, "hits": 1, "hit_rate": 0.5, "controls": 3, "false_alarms": 1,
                           "false_alarm_rate": 0.333, "clean": 1, "unanswered": 1, "score": 0.4,
                           "interval": t["review"]["interval"]}
    low, high = t["review"]["interval"]
    assert 0 < low < 0.4 < high < 1
    assert t["claims"] == {"claims": 2, "right": 1, "wrong": 1, "unanswered": 0, "score": 0.5,
                           "interval": t["claims"]["interval"]}
    assert t["failed"] == 1 and t["confidently_wrong"] == 2         # the miss at 0.95 and the false alarm at 0.85
    assert t["calibration"] == [
        {"stated": [0.0, 0.5], "answers": 1, "right": 0, "right_rate": 0.0},
        {"stated": [0.5, 0.7], "answers": 1, "right": 1, "right_rate": 1.0},
        {"stated": [0.7, 0.9], "answers": 1, "right": 0, "right_rate": 0.0},
        {"stated": [0.9, 1.0], "answers": 3, "right": 2, "right_rate": 0.667}]


def test_a_model_with_only_claims_has_no_review_score():
    assert score.tally(rows("m", [("right", "", None)]))["m"]["review"] is None


def test_the_worked_example_of_benchmarks_md_is_what_the_code_computes():
    doc = (Path(__file__).resolve().parent.parent / "BENCHMARKS.md").read_text(encoding="utf-8")
    shown = json.loads(re.search(r"## The suite's scores.*?```json\n(.*?)```", doc, re.S).group(1))
    example = [("hit", "", c) for c in (0.9, 0.9, 0.8, 0.8, 0.7, 0.9, 0.6)] + [
        ("miss", "", 0.9), ("miss", "", 0.5), ("unanswered", "bug", None)] + [
        ("clean", "", c) for c in (0.8, 0.7, 0.9, 0.6, 0.8, 0.9, None)] + [
        ("false_alarm", "", c) for c in (0.9, 0.6, 0.7)] + [
        ("right", "", c) for c in (0.9, 0.8, 0.9, 0.7, 0.6, None)] + [("wrong", "", 0.95), ("wrong", "", 0.4)]
    t = score.tally(rows("m", example))["m"]
    assert t["review"] == shown["review"] and t["claims"] == shown["claims"]
    assert t["calibration"][-1] == shown["calibration"][0] and t["confidently_wrong"] == shown["confidently_wrong"]
