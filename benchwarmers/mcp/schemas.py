"""The MCP tools' definitions (names, descriptions, input and output schemas), shared by every transport."""
from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_NULL_STR = {"type": ["string", "null"]}

SEAT_SCHEMA = {
    "type": "object",
    "properties": {"seat": {"type": "integer"}, "kind": _STR, "model": _STR, "status": _STR,
                   "seconds": {"type": "number"}, "call": _NULL_STR, "answer": _STR, "error": _NULL_STR},
    "required": ["seat", "kind", "model", "status", "call", "answer"],
}

POINT_SCHEMA = {
    "type": "object",
    "properties": {"id": _NULL_STR, "claim": _STR, "assert": {"type": "array", "items": {"type": "integer"}},
                   "deny": {"type": "array", "items": {"type": "integer"}},
                   "silent": {"type": "array", "items": {"type": "integer"}}, "quotes": {"type": "object"}},
    "required": ["id", "claim", "assert", "deny"],
}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "list_collections",
        "title": "List Benchwarmers collections",
        "description": (
            "List the collections (panels of models) the Benchwarmers service offers, with their members. "
            "Ask a collection, not a favourite model: choose the collection that fits the question, then call "
            "`ask` with its name."),
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {
            "type": "object",
            "properties": {"collections": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": _STR, "description": _NULL_STR, "members": _STRS,
                               "explore": {"type": "integer"}, "merge_model": _NULL_STR},
                "required": ["name", "members"]}}},
            "required": ["collections"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "ask",
        "title": "Ask a Benchwarmers panel",
        "description": (
            "Ask every seat of a Benchwarmers collection the same question; each seat answers independently and "
            "comes back with its model, status and call id. Rules: ask a collection rather than a favourite "
            "model. The seats see only what you send, so put the code, diff or file contents they need in the "
            "prompt. Every answer is a claim, not a fact: verify it against the code before acting on it. When "
            "you report back, list every seat (seat, model, status, call id), including failed or useless ones. "
            "When the collection shows points (where the seats disagree, each with its id, the seats that assert "
            "and deny it and their words), check each contested point against the code and judge it with `verdict` "
            "(point, holds): one judgement counts for every seat that took a side. The referee reads the answers "
            "after they come back: its points are listed by `pending_verdicts` once they are in, or come with the "
            "answers when you give `points`. Then send a `verdict` for every seat you judged. To follow up, ask again "
            "with the `conversation` it returned: each seat continues its own thread."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "collection": {"type": "string", "description": "a collection name from list_collections"},
                "prompt": {"type": "string", "description": "the whole question, with the code it is about"},
                "merged": {"type": "boolean", "default": False,
                           "description": "also have one model merge the seats' answers into one"},
                "with": {"type": "array", "items": _STR,
                         "description": "extra models (aliases) to seat for this ask only"},
                "system": {"type": "string", "description": "a system prompt for every seat"},
                "points": {"type": "string", "enum": ["off", "contested", "all"],
                           "description": "which of the panel's points to show, and wait for them (default: the "
                                          "collection's own, listed by pending_verdicts once the referee has "
                                          "read the answers)"},
                "conversation": {"type": "string",
                                 "description": "follow up: the `conversation` an earlier ask returned; each seat "
                                                "sees its own earlier answers, so send only the new question"},
            },
            "required": ["collection", "prompt"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"collection": _STR, "panel": _STR, "conversation": _STR, "mode": _STR,
                           "seats": {"type": "array", "items": SEAT_SCHEMA},
                           "merge": {"type": "object"}, "points": {"type": "array", "items": POINT_SCHEMA},
                           "points_info": {"type": "object"},
                           "record": {"type": "object", "properties": {"kept": {"type": "boolean"}, "why": _STR}}},
            "required": ["collection", "panel", "seats"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                        "openWorldHint": True},
    },
    {
        "name": "verdict",
        "title": "Judge one seat's answer, or one point",
        "description": (
            "Record your judgement of one seat's answer, by the call id `ask` gave it; or of one point (where the "
            "seats disagree), by its point id. Send one verdict for every seat you judged, after checking its claims "
            "against the code: `useful` says whether the answer helped, `real` lists claims that checked out, "
            "`false` the ones that were wrong. For a point, `holds` says whether its claim is true once checked: "
            "every seat that asserted it or denied it gains a real or a false claim, and the reply proposes useful "
            "or not useful per seat from its judged points (confirm one with call, useful and from_points). A later "
            "verdict on the same call or point replaces the earlier one. Verdicts build the record that decides "
            "who gets seated."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "call": {"type": "string", "description": "the seat's call id from ask"},
                "useful": {"type": "boolean", "description": "did this answer help"},
                "point": {"type": "string", "description": "a point's id from ask (instead of call and useful)"},
                "holds": {"type": "boolean", "description": "with point: does the point's claim hold"},
                "note": {"type": "string", "description": "a short note"},
                "real": {"type": "array", "items": _STR, "description": "claims that checked out"},
                "false": {"type": "array", "items": _STR, "description": "claims that were wrong"},
                "from_points": {"type": "boolean",
                                "description": "with call: this verdict is what the seat's judged points proposed"},
            },
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "call": _STR, "useful": {"type": "boolean"},
                           "note": _NULL_STR, "real": _STRS, "false": _STRS, "revisions": {"type": "integer"},
                           "point": _STR, "holds": {"type": ["boolean", "null"]}, "claims": {"type": "array"},
                           "proposals": {"type": "array"}},
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                        "openWorldHint": False},
    },
    {
        "name": "pending_verdicts",
        "title": "Answers still waiting for a verdict",
        "description": (
            "List the points of your panels that nobody judged yet (where the seats disagree: judge them first, "
            "with `verdict` point and holds), then the seats' answers you asked for that have no verdict yet, "
            "newest first: call id, seat, model and the start of the answer. With a gateway key these are the key's "
            "own asks; without one, this session's. "
            "Judge each one you checked with `verdict`; an answer you did not check needs no verdict."),
        "inputSchema": {
            "type": "object",
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 20,
                                     "description": "at most this many points and this many answers, "
                                                    "newest first"}},
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"total": {"type": "integer"}, "points_total": {"type": "integer"},
                           "points": {"type": "array", "items": POINT_SCHEMA},
                           "pending": {"type": "array", "items": {
                "type": "object",
                "properties": {"call": _STR, "panel": _NULL_STR, "collection": _NULL_STR, "seat": {"type": "integer"},
                               "kind": _STR, "model": _STR, "created": {"type": "number"}, "excerpt": _STR},
                "required": ["call", "model", "excerpt"]}}},
            "required": ["total", "pending"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]
