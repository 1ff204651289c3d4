"""Mining: the real and false claims of users' verdicts become draft claim tasks, with the code frozen from the call."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..store.config import atomic_write, parse
from .tasks import Task, TaskError, data_dir, write

FILE_TAG = re.compile(r'<file name="([^"]+)">\n(.*?)\n</file>', re.S)
FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
QUESTION = "A reviewer made this claim about the code below. Is the claim true or false?"


def ledger_path(home: Path) -> Path:
    return Path(home) / "suite" / "mined.json"


def frozen_code(request: str | None) -> dict:
    """The code the call was about: its attached files, else its fenced blocks, else the prompt itself."""
    try:
        data = json.loads(request or "{}")
    except ValueError:
        data = {}
    text = "\n\n".join(m.get("content") or "" for m in data.get("messages") or [] if m.get("role") == "user")
    files: dict[str, str] = {}
    for name, body in FILE_TAG.findall(text):
        base = re.sub(r"[^\w.-]", "_", name.replace("\\", "/").rsplit("/", 1)[-1])[-100:]
        if not base.strip("."):             # ".", ".." or nothing: never a file name (it would name a folder)
            base = "file"
        files[unique(files, base)] = body + "\n"
    if not files:
        for i, body in enumerate(FENCE.findall(text), 1):
            files[f"snippet-{i}.txt"] = body
    if not files and text.strip():
        files["prompt.txt"] = text.rstrip() + "\n"
    return files


def unique(files: dict, name: str) -> str:
    n, candidate = 2, name
    while candidate in files:
        candidate, n = f"{n}-{name}", n + 1
    return candidate


def judged_claims(db) -> list[dict]:
    """Every real or false claim of a current verdict, with the call it judged."""
    rows = db.query("SELECT v.id AS verdict, v.call, v.note, v.real, v.false, c.model, "
                    "COALESCE(c.request, p.request) AS request FROM verdicts v JOIN calls c ON c.id = v.call "
                    "LEFT JOIN panels p ON p.id = c.panel WHERE v.current = 1 ORDER BY v.id")
    out = []
    for r in rows:
        for truth, column in ((True, "real"), (False, "false")):
            for claim in json.loads(r[column] or "[]"):
                if isinstance(claim, str) and claim.strip():
                    out.append({"verdict": r["verdict"], "call": r["call"], "note": r["note"], "model": r["model"],
                                "request": r["request"], "claim": claim.strip(), "truth": truth})
    return out


def mine(home: Path, db) -> dict:
    """Draft a claim task for every judged claim not mined before (a rejected draft is not drafted again)."""
    db.sync()
    path = ledger_path(home)
    seen = set(parse(path).get("mined", [])) if path.exists() else set()
    root = data_dir(home)
    root.mkdir(parents=True, exist_ok=True)
    drafted, skipped, no_code = [], [], 0
    for c in judged_claims(db):
        key = hashlib.sha256(f"{c['call']}\n{c['claim']}".encode()).hexdigest()[:12]
        if key in seen:
            continue
        files = frozen_code(c["request"])
        if not files:
            no_code += 1
            continue
        task = draft(key, c, files)
        if not (root / task.id).exists():
            try:
                write(task, root)
            except (TaskError, OSError) as e:   # one bad claim is skipped (and not tried again), never the rest
                skipped.append({"claim": c["claim"], "call": c["call"], "why": getattr(e, "message", None) or str(e)})
                seen.add(key)
                continue
            drafted.append({"id": task.id, "claim": c["claim"], "truth": c["truth"], "call": c["call"]})
        seen.add(key)
    atomic_write(path, {"mined": sorted(seen)})
    return {"drafted": drafted, "skipped": skipped, "without_code": no_code, "tasks_dir": str(root)}


def draft(key: str, c: dict, files: dict) -> Task:
    verdict = "real" if c["truth"] else "false"
    return Task(id=f"mined-{key}", kind="claim", question=QUESTION, files=files, status="draft",
                answer={"claim": c["claim"], "truth": c["truth"],
                        "evidence": c["note"] or f"judged {verdict} by the user in a verdict on call {c['call']}"},
                source={"kind": "mined", "call": c["call"], "model": c["model"], "verdict": c["verdict"]})
