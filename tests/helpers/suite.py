"""Suite test helpers: small hand-made tasks, and a fake upstream whose models answer them in known ways."""
from __future__ import annotations

import json
import time
from pathlib import Path

from benchwarmers.suite import prompt
from benchwarmers.suite.tasks import Task, data_dir, write
from tests.fakes import FakeOpenAI

CLEAN = """def last_index(items):
    i = 0
    while i < len(items) - 1:
        i += 1
    return i
"""
BUGGY = CLEAN.replace("i < len(items) - 1", "i <= len(items) - 1")
GUARDED = """def ratio(done, total):
    if total == 0:
        return None
    return done / total
"""
UNGUARDED = GUARDED.replace("    if total == 0:\n        return None\n", "")


def tasks() -> list[Task]:
    """Two bug tasks (each with its control) and two claims, one true and one false."""
    return [
        Task("t-bug-loop", "bug", "", {"loop.py": BUGGY}, {"lines": {"loop.py": [[3, 3]]}}, {"loop.py": CLEAN},
             {"kind": "test"}),
        Task("t-bug-guard", "bug", "", {"ratio.py": UNGUARDED}, {"lines": {"ratio.py": [[1, 2]]}},
             {"ratio.py": GUARDED}, {"kind": "test"}),
        Task("t-claim-true", "claim", "", {"ratio.py": GUARDED},
             {"claim": "ratio(1, 0) returns None.", "truth": True}, source={"kind": "test"}),
        Task("t-claim-false", "claim", "", {"loop.py": CLEAN},
             {"claim": "last_index([]) raises IndexError.", "truth": False}, source={"kind": "test"}),
    ]


def plant(home: Path) -> list[Task]:
    made = tasks()
    for t in made:
        write(t, data_dir(home))
    return made


class Oracle(FakeOpenAI):
    """Models with known behaviour: `right` answers every task correctly (bugs in JSON, claims in prose),
    `eager` flags everything and calls every claim true, `silent` answers nothing."""

    def __init__(self, known: list[Task]):
        super().__init__()
        self.known = known
        self.set_models(["right", "eager", "silent"])

    def answer_text(self, reply, model, last_user):
        if reply.text is not None:
            return reply.text
        if model == "silent":
            return ""
        if model == "eager":
            return json.dumps({"bugs": [{"lines": [1, 1000], "why": "everything"}], "verdict": "true",
                               "confidence": 0.9})
        return self.right(last_user)

    def right(self, asked: str) -> str:
        for t in sorted(self.known, key=lambda t: t.kind != "claim"):    # a claim's code may be a control's
            if t.kind == "claim" and t.answer["claim"] in asked:
                return f"Having read it, the claim is {str(t.answer['truth']).lower()}. Confidence: 90%"
            if t.kind == "bug" and prompt.numbered(t.files) in asked:
                (path, ranges), = t.answer["lines"].items()
                return json.dumps({"bugs": [{"file": path, "lines": ranges[0], "why": "see"}], "confidence": 0.8})
            if t.kind == "bug" and prompt.numbered(t.control) in asked:
                return json.dumps({"bugs": [], "confidence": 0.7})
        return "I do not know."


def wait_run(http, rid: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, _, d = http("GET", f"/bench/suite/runs/{rid}")
        if d["run"]["status"] not in ("queued", "running", "owed"):
            return d
        time.sleep(0.05)
    raise AssertionError(f"run {rid} did not finish: {d}")


def seed_job(http, body: dict, timeout: float = 120) -> dict:
    """POST /bench/suite/seed, then the job once it is over."""
    status, _, d = http("POST", "/bench/suite/seed", body)
    assert status == 202, d
    deadline = time.monotonic() + timeout
    job = d["job"]
    while job["status"] == "running":
        assert time.monotonic() < deadline, f"seeding job {job['id']} did not finish: {job}"
        time.sleep(0.05)
        job = http("GET", f"/bench/suite/seed/{job['id']}")[2]["job"]
    return job
