"""Task folders: the starter pack is valid and runs as shipped; bad folders are reported, never fatal; drafts are
mined from verdicts with their code frozen, reviewed, accepted or rejected."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchwarmers.cli.main import main
from benchwarmers.suite import prompt
from benchwarmers.suite.tasks import Task, data_dir, load, load_all, starter_dir, write
from tests.fakes import FakeOpenAI
from tests.helpers.data import configure
from tests.helpers.http import Http
from tests.helpers.suite import GUARDED, plant


def test_the_starter_pack_is_valid_and_holds_true_and_false_claims():
    tasks, problems = load_all(None)
    assert not problems
    claims = [t for t in tasks.values() if t.id.startswith("claim-")]
    assert len(claims) >= 10 and all(t.kind == "claim" and t.origin == "starter" for t in claims)
    truths = [t.answer["truth"] for t in claims]
    assert truths.count(True) >= 5 and truths.count(False) >= 5
    for t in claims:
        assert t.source["kind"] == "project" and t.source["license"] == "MIT" and t.answer["evidence"]
        assert t.source["path"].startswith("benchwarmers/")
        system, user = prompt.build(t, "claim")
        assert t.answer["claim"] in user and re.search(r"^ *1 \| ", user, re.M)


def at_commit(commit: str, path: str) -> str:
    """The file as it was at `commit`, read from this checkout's git history."""
    root = Path(__file__).resolve().parent.parent
    try:
        done = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{path}"], capture_output=True, timeout=30)
    except OSError:
        pytest.skip("git is not installed: the excerpts are checked against the history of a git checkout")
    if done.returncode != 0 and not (root / ".git").exists():
        pytest.skip("not a git checkout: the excerpts are checked against its history")
    assert done.returncode == 0, f"{commit}:{path} is not in this checkout's history: {done.stderr.decode()}"
    return done.stdout.decode("utf-8")


def test_starter_claims_quote_code_that_existed_at_their_commit():
    """Every excerpt was cut from the file its source names, as it was at the commit the task names (the function's
    first line is in that file): the code has moved since, the task keeps the version its claim is about."""
    for t in load_all(None)[0].values():
        if t.source.get("kind") != "project":
            continue
        (code,) = t.files.values()
        first = next(line for line in code.splitlines() if line.startswith(("def ", "class ", "async def ")))
        assert first.split("(")[0] in at_commit(t.source["commit"], t.source["path"]), t.id


def make(folder, meta: dict, files: dict | None = None):
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps(meta), encoding="utf-8")
    for rel, text in (files or {}).items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("meta, files, words", [
    ({"kind": "bug", "answer": {"lines": {"a.py": [[1, 1]]}}}, {"code/a.py": "x\n"}, "control/ must hold"),
    ({"kind": "bug", "answer": {"lines": {"a.py": [[1, 1]]}}}, {"code/a.py": "x\n", "control/a.py": "x\n"},
     "the bug is missing"),
    ({"kind": "bug", "answer": {"lines": {"a.py": [[1, 9]]}}}, {"code/a.py": "x\n", "control/a.py": "y\n"},
     "within its 1 line."),
    ({"kind": "bug", "answer": {}}, {"code/a.py": "x\n", "control/a.py": "y\n"}, "answer.lines must map"),
    ({"kind": "claim", "answer": {"claim": "x", "truth": "yes"}}, {"code/a.py": "x\n"}, "true or false"),
    ({"kind": "claim", "answer": {"truth": True}}, {"code/a.py": "x\n"}, "answer.claim"),
    ({"kind": "essay"}, {"code/a.py": "x\n"}, "kind must be"),
    ({"kind": "claim", "answer": {"claim": "x", "truth": True}}, {}, "code/ holds no files"),
    ({"kind": "claim", "id": "other", "answer": {"claim": "x", "truth": True}}, {"code/a.py": "x\n"},
     "differs from the folder name"),
])
def test_a_bad_task_folder_is_reported_with_what_to_fix(home, meta, files, words):
    make(data_dir(home) / "t-bad", meta, files)
    make(data_dir(home) / "t-good", {"kind": "claim", "answer": {"claim": "x", "truth": True}}, {"code/a.py": "x\n"})
    tasks, problems = load_all(home)
    assert "t-good" in tasks and "t-bad" not in tasks
    assert len(problems) == 1 and "t-bad" in problems[0] and words in problems[0]


def test_a_task_json_that_is_not_json_is_reported(home):
    folder = data_dir(home) / "t-broken"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text("{nope", encoding="utf-8")
    assert "not valid JSON" in load_all(home)[1][0]


def test_write_then_load_gives_the_same_task_and_refuses_to_overwrite(home):
    t = Task("t-one", "claim", "q?", {"src/a.py": GUARDED}, {"claim": "c", "truth": False, "evidence": "e"},
             source={"kind": "test"})
    folder = write(t, data_dir(home))
    back = load(folder)
    assert (back.files, back.answer, back.question, back.status) == (t.files, t.answer, t.question, "ready")
    with pytest.raises(Exception, match="already exists"):
        write(t, data_dir(home))
    assert not [p for p in data_dir(home).iterdir() if p.name.startswith(".")]       # no temp folder left


def test_tasks_api_lists_shows_and_protects_the_starter_pack(home, http):
    plant(home)
    _, _, d = http("GET", "/bench/suite/tasks")
    ids = [t["id"] for t in d["tasks"]]
    assert "t-bug-loop" in ids and any(i.startswith("claim-") for i in ids)
    _, _, one = http("GET", "/bench/suite/tasks/t-bug-loop")
    assert one["task"]["control"] and one["task"]["answer"] == {"lines": {"loop.py": [[3, 3]]}}
    starter = next(i for i in ids if i.startswith("claim-"))
    status, _, err = http("DELETE", f"/bench/suite/tasks/{starter}")
    assert status == 400 and "starter task" in err["error"]["message"]
    assert (starter_dir() / starter).is_dir()
    assert http("DELETE", "/bench/suite/tasks/t-bug-loop")[0] == 200
    assert not (data_dir(home) / "t-bug-loop").exists()
    assert http("GET", "/bench/suite/tasks?status=maybe")[0] == 400
    _, _, overview = http("GET", "/bench/suite")
    assert overview["tasks"]["claim_ready"] >= 12 and overview["scores"] == {} and overview["runs"] == []


@pytest.fixture
def judged(home, service):
    """A call about an attached file, with a verdict that found one claim real and one false."""
    fake = FakeOpenAI().start()
    configure(home, {"oa": (fake, "openai")}, {"m": ("oa", "m")})
    http = Http(service.url)
    prompt_text = f'Is ratio safe?\n\n<file name="src/ratio.py">\n{GUARDED.rstrip()}\n</file>'
    _, _, reply = http("POST", "/v1/chat/completions", {"model": "m", "messages": [
        {"role": "user", "content": prompt_text}]})
    call = reply["bench"]["seats"][0]["call"]
    status, _, _ = http("POST", "/bench/verdict", {"call": call, "useful": True, "note": "checked by hand",
                                                   "real": ["ratio(1, 0) returns None"],
                                                   "false": ["ratio divides by zero"]})
    assert status == 200
    yield http, call
    fake.stop()


def test_mining_drafts_claim_tasks_with_the_code_frozen_from_the_call(judged, home):
    http, call = judged
    status, _, d = http("POST", "/bench/suite/mine", {})
    assert status == 200 and len(d["drafted"]) == 2
    tasks, _ = load_all(home)
    drafts = {t.answer["claim"]: t for t in tasks.values() if t.status == "draft"}
    real, false = drafts["ratio(1, 0) returns None"], drafts["ratio divides by zero"]
    assert real.answer["truth"] is True and false.answer["truth"] is False
    assert real.files == {"ratio.py": GUARDED} and real.source == {"kind": "mined", "call": call, "model": "m",
                                                                   "verdict": real.source["verdict"]}
    assert real.answer["evidence"] == "checked by hand"
    assert http("POST", "/bench/suite/mine", {})[2]["drafted"] == []              # mined once
    _, _, listed = http("GET", "/bench/suite/tasks?status=draft")
    assert sorted(t["id"] for t in listed["tasks"]) == sorted(t.id for t in drafts.values())
    status, _, err = http("POST", "/bench/suite/runs", {"model": "m", "tasks": real.id})
    assert status == 400 and "drafts join once accepted" in err["error"]["message"]
    assert http("POST", f"/bench/suite/tasks/{real.id}/accept", {})[0] == 200
    assert http("POST", f"/bench/suite/tasks/{real.id}/accept", {})[0] == 409
    assert load(data_dir(home) / real.id).status == "ready"
    assert http("DELETE", f"/bench/suite/tasks/{false.id}")[0] == 200
    assert http("POST", "/bench/suite/mine", {})[2]["drafted"] == []              # a rejected draft stays gone


def test_the_cli_lists_drafts_and_accepts_them(judged, home, capsys):
    http, _ = judged
    url = http.base
    assert main(["suite", "mine", "--url", url]) == 0
    assert "2 new drafts" in capsys.readouterr().err
    assert main(["suite", "tasks", "--drafts", "--url", url]) == 0
    first = capsys.readouterr().out.splitlines()[1].split()[0]
    assert main(["suite", "show", first, "--url", url]) == 0
    assert "Claim:" in capsys.readouterr().out
    assert main(["suite", "accept", first, "--url", url]) == 0
    assert main(["suite", "reject", "nope-task", "--yes", "--url", url]) == 1
    assert "No suite task 'nope-task'" in capsys.readouterr().err
    shutil.rmtree(data_dir(home))
