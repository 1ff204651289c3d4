"""What a model is asked for one task item: the code with line numbers, the question, and the answer's JSON shape."""
from __future__ import annotations

SYSTEM = ("You are reviewing code. Read it carefully and answer only from what the code shows. "
          "Reply with the JSON object asked for, and nothing else.")

BUG_QUESTION = "Review this code. Does it hold a bug? If it does, say which lines hold it."

BUG_SHAPE = """Answer with one JSON object:
{"bugs": [{"file": "<file name>", "lines": [<first line>, <last line>], "why": "<one sentence>"}],
 "confidence": <0.0 to 1.0: how sure you are that your answer is right>}
List every bug you find; if you find none, answer {"bugs": [], "confidence": ...}."""

CLAIM_SHAPE = """Answer with one JSON object:
{"verdict": "true" or "false", "confidence": <0.0 to 1.0: how sure you are>,
 "evidence": "<the lines that decide it>"}"""


def numbered(files: dict) -> str:
    """Each file under its name, every line numbered from 1, so an answer can point at lines."""
    blocks = []
    for path, text in sorted(files.items()):
        lines = text.splitlines() or [""]
        width = len(str(len(lines)))
        body = "\n".join(f"{n:>{width}} | {line}" for n, line in enumerate(lines, 1))
        blocks.append(f"File: {path}\n{body}")
    return "\n\n".join(blocks)


def build(task, variant: str) -> tuple[str, str]:
    """(system, user) for one item; the bug and the control of a task are asked in the same words."""
    code = numbered(task.code(variant))
    if task.kind == "claim":
        question = task.question or "Is this claim about the code true or false?"
        user = f"{question}\n\nClaim: {task.answer['claim']}\n\n{code}\n\n{CLAIM_SHAPE}"
    else:
        user = f"{task.question or BUG_QUESTION}\n\n{code}\n\n{BUG_SHAPE}"
    return SYSTEM, user
