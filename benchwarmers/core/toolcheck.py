"""A member's tool calls checked against the tools the client offered: a name not offered, arguments that are not
JSON, arguments that do not fit the tool's JSON schema. Such a call fails the turn whatever the answer's text says,
and no user's choice makes it so: route mode counts it as evidence (evidence.TOOL_ERROR_WEIGHT).

The schema check is a bounded subset of JSON Schema, the part that decides whether a client can run the call at
all: `type` (one or a list), `required`, `properties`, `additionalProperties: false`, `enum`, `const` and `items`,
to MAX_DEPTH levels and MAX_NODES values. What it does not read (`anyOf`, `$ref`, formats, bounds) passes: a call
is only faulted for what is certain."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..canonical import Tool, ToolCall
from ..store.standings import FAULTS, SIGNS

UNOFFERED, NOT_JSON, SCHEMA, REPORTED = FAULTS   # REPORTED: the client's tool result said the call was malformed
CHECKED = SIGNS[0]    # "tools": the sign of an answer whose tool calls were checked (with or without faults)
RETRIED = SIGNS[-1]   # "retried": the client sent the same turn again after this answer (shown, never weighed)
MAX_DEPTH = 16
MAX_NODES = 2000
MAX_FAULTS = 8        # faults kept per call in its record
_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "object": (dict,),
          "array": (list,), "null": (type(None),)}


@dataclass(frozen=True)
class Fault:
    tool: str
    kind: str
    why: str

    def to_dict(self) -> dict:
        return {"tool": self.tool, "kind": self.kind, "why": self.why}


def check(calls: list[ToolCall], tools: list[Tool]) -> list[Fault]:
    """Every fault of these calls against the offered `tools`; [] when all are right."""
    offered = {t.name: t for t in tools}
    out = []
    for call in calls:
        tool = offered.get(call.name)
        if tool is None:
            names = ", ".join(sorted(offered)[:12]) or "none"
            out.append(Fault(call.name, UNOFFERED, f"{call.name!r} was not offered (offered: {names})"))
            continue
        text = (call.arguments or "").strip() or "{}"   # no arguments at all: an empty object, as every API sends
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            out.append(Fault(call.name, NOT_JSON, f"arguments are not JSON ({e.msg} at {e.pos})"))
            continue
        wrong = schema_fault(value, tool.parameters or {})
        if wrong:
            out.append(Fault(call.name, SCHEMA, wrong))
    return out


def schema_fault(value, schema: dict) -> str | None:
    """Why `value` does not fit `schema` (the subset above), or None."""
    budget = [MAX_NODES]
    return _fault(value, schema, "arguments", 0, budget)


def _fault(value, schema, where: str, depth: int, budget: list) -> str | None:
    budget[0] -= 1
    if not isinstance(schema, dict) or depth > MAX_DEPTH or budget[0] < 0:
        return None
    wrong = _type_fault(value, schema.get("type"), where)
    if wrong:
        return wrong
    if isinstance(schema.get("enum"), list) and not any(_same(value, v) for v in schema["enum"]):
        return f"{where} is {_show(value)}, not one of {_show(schema['enum'])}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{where} is {_show(value)}, not {_show(schema['const'])}"
    if isinstance(value, dict):
        return _object_fault(value, schema, where, depth, budget)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            wrong = _fault(item, schema["items"], f"{where}[{i}]", depth + 1, budget)
            if wrong:
                return wrong
    return None


def _object_fault(value: dict, schema: dict, where: str, depth: int, budget: list) -> str | None:
    props: dict = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
    required: list = schema["required"] if isinstance(schema.get("required"), list) else []
    missing = [r for r in required if isinstance(r, str) and r not in value]
    if missing:
        return f"{where} lacks the required {', '.join(map(repr, missing[:5]))}"
    if schema.get("additionalProperties") is False:
        extra = [k for k in value if k not in props]
        if extra:
            return f"{where} has {', '.join(map(repr, extra[:5]))}, which the tool does not take"
    for key, sub in props.items():
        if key in value:
            wrong = _fault(value[key], sub, f"{where}.{key}", depth + 1, budget)
            if wrong:
                return wrong
    return None


def _type_fault(value, wanted, where: str) -> str | None:
    names = [wanted] if isinstance(wanted, str) else wanted if isinstance(wanted, list) else []
    known = [n for n in names if n in _TYPES]
    if not known or any(_is(value, n) for n in known):
        return None
    return f"{where} is {_kind(value)}, not {' or '.join(known)}"


def _is(value, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES[name])


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b or (_number(a) and _number(b) and a == b)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _kind(value) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, name):
            return "a whole number" if name == "integer" else f"a{'n' if name in ('array', 'object') else ''} {name}"
    return type(value).__name__


def _show(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- the signs a call's record keeps ----------------------------------------------------------

def signs_of(faults: list[Fault], checked: bool, more: tuple = ()) -> str | None:
    """The calls column `signs`: None when nothing was checked, else CHECKED and each kind found, comma-separated."""
    if not checked and not more:
        return None
    kinds = ([CHECKED] if checked else []) + sorted({f.kind for f in faults}) + list(more)
    return ",".join(dict.fromkeys(kinds))


# What a client's tool result says when the call itself was malformed (never that the tool ran and failed): Claude
# Code's InputValidationError, Codex's and opencode's "failed to parse function arguments", unknown tool, bad JSON.
MALFORMED = re.compile(
    r"inputvalidationerror|invalid (?:tool )?(?:arguments|parameters|input)|failed to parse (?:function |tool )?"
    r"arguments|(?:unknown|no such|unavailable|not (?:a )?valid) tool|tool .{0,60} (?:does not exist|not found)|"
    r"required (?:parameter|property|field) .{0,60}(?:is )?missing|missing required (?:parameter|property|field|"
    r"argument)|arguments? (?:are|is) not valid json|invalid json", re.I)


_LEAD = re.compile(r"\s*(?:<tool_use_error>\s*|error\b[:\s]*)?", re.I)


def malformed(content: str, is_error: bool) -> bool:
    """A tool result reporting that the call was malformed (not that the tool ran and failed): an error result whose
    first lines say so, or (for APIs whose tool results carry no error flag) a result that starts by saying so."""
    if not content:
        return False
    head = content[:600]
    if is_error:
        return bool(MALFORMED.search(head))
    lead = _LEAD.match(head)
    return bool(MALFORMED.match(head, lead.end() if lead else 0))
