"""The MCP server's three tools (list_collections, ask, verdict): their schemas, and their calls to the service."""
from __future__ import annotations

import json
import threading

from .. import redaction
from ..client import Client, ClientError

STRUCTURED_FROM = "2025-06-18"      # outputSchema, structuredContent and tool titles start here
ANNOTATIONS_FROM = "2025-03-26"
SHORT_TIMEOUT = 60.0                # listing collections and recording a verdict are quick

START_HINT = ("Start the service in another terminal with `benchwarmers` (or `npx -y @wendellresearch-ai/benchwarmers`, "
              "or `python serve.py` in a checkout); it listens on http://127.0.0.1:8122 by default. If it runs "
              "elsewhere, set BENCHWARMERS_URL (and BENCHWARMERS_KEY) in this MCP server's env. This MCP session "
              "stays up: call the tool again once the service runs.")

_STR = {"type": "string"}
_STRS = {"type": "array", "items": _STR}
_NULL_STR = {"type": ["string", "null"]}

SEAT_SCHEMA = {
    "type": "object",
    "properties": {"seat": {"type": "integer"}, "kind": _STR, "model": _STR, "status": _STR,
                   "seconds": {"type": "number"}, "call": _NULL_STR, "answer": _STR, "error": _NULL_STR},
    "required": ["seat", "kind", "model", "status", "call", "answer"],
}

TOOLS = [
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
            "Then send a `verdict` for every seat you judged."),
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
            },
            "required": ["collection", "prompt"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"collection": _STR, "panel": _STR, "mode": _STR,
                           "seats": {"type": "array", "items": SEAT_SCHEMA},
                           "merge": {"type": "object"}},
            "required": ["collection", "panel", "seats"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False,
                        "openWorldHint": True},
    },
    {
        "name": "verdict",
        "title": "Judge one seat's answer",
        "description": (
            "Record your judgement of one seat's answer, by the call id `ask` gave it. Send one verdict for every "
            "seat you judged, after checking its claims against the code: `useful` says whether the answer helped, "
            "`real` lists claims that checked out, `false` the ones that were wrong. A later verdict on the same "
            "call replaces the earlier one. Verdicts build the record that decides who gets seated."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "call": {"type": "string", "description": "the seat's call id from ask"},
                "useful": {"type": "boolean", "description": "did this answer help"},
                "note": {"type": "string", "description": "a short note"},
                "real": {"type": "array", "items": _STR, "description": "claims that checked out"},
                "false": {"type": "array", "items": _STR, "description": "claims that were wrong"},
            },
            "required": ["call", "useful"],
            "additionalProperties": False,
        },
        "outputSchema": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "call": _STR, "useful": {"type": "boolean"},
                           "note": _NULL_STR, "real": _STRS, "false": _STRS, "revisions": {"type": "integer"}},
            "required": ["call", "useful"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True,
                        "openWorldHint": False},
    },
]
_BY_NAME = {t["name"]: t for t in TOOLS}
_TYPES = {"string": str, "boolean": bool, "array": list}


class ToolError(Exception):
    """Ends a tool call with isError and this text (the model reads it and can correct itself)."""


class Tools:
    def __init__(self, url: str | None = None, environ: dict | None = None):
        self.url, self.environ = url, environ

    # -- the listing ---------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [t["name"] for t in TOOLS]

    def has(self, name: str) -> bool:
        return name in _BY_NAME

    def listing(self, version: str) -> list[dict]:
        """Tool definitions as the negotiated version knows them (older clients get no outputSchema)."""
        out = []
        for t in TOOLS:
            d = {"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}
            if version >= STRUCTURED_FROM:
                d["title"] = t["title"]
                d["outputSchema"] = t["outputSchema"]
            if version >= ANNOTATIONS_FROM:
                d["annotations"] = {"title": t["title"], **t["annotations"]}
            out.append(d)
        return out

    def describe_target(self) -> str:
        try:
            return self.client().url
        except ClientError as e:
            return f"(unusable settings: {e})"

    def client(self) -> Client:
        return Client(self.url, environ=self.environ)

    # -- a call --------------------------------------------------------------------------------
    def call(self, name: str, args: dict, version: str, cancelled: threading.Event | None = None) -> dict:
        """A CallToolResult: readable text, plus structuredContent where the version has it."""
        client = None
        try:
            check_args(_BY_NAME[name]["inputSchema"], args)
            client = self.client()
            text, data = getattr(self, "tool_" + name)(client, args)
        except ToolError as e:
            return error_result(redact(str(e), client))
        except ClientError as e:
            message = str(e).splitlines()[0]
            if e.code == 3:
                message += "\n" + START_HINT
            elif "gateway key" in message and client is not None:
                message += ("\nSet BENCHWARMERS_KEY in this MCP server's env to a gateway key (the admin makes one "
                            "with `bench key create NAME --collections ...`)." if not client.key
                            else "\nBENCHWARMERS_KEY is set but was refused.")
            return error_result(redact(message, client))
        failed = isinstance(data, dict) and data.pop("_failed", False)
        text = redact(text, client)
        result = {"content": [{"type": "text", "text": text}], "isError": bool(failed)}
        if failed:
            return result
        if version >= STRUCTURED_FROM:
            result["structuredContent"] = data
        else:
            result["content"].append({"type": "text", "text": redact(json.dumps(data, ensure_ascii=False), client)})
        return result

    def tool_list_collections(self, client: Client, args: dict):
        reply = client.get("/bench/collections", gateway=True, timeout=min(SHORT_TIMEOUT, client.timeout))
        cols = [c for c in reply.get("collections") or [] if isinstance(c, dict)]
        if not cols:
            return ("The service has no collections yet. Create one in the dashboard (Collections) or with "
                    "`bench collection save NAME --members a,b`.", {"collections": []})
        lines = [f"{len(cols)} collection(s). Ask one with `ask` (collection, prompt):", ""]
        for c in cols:
            members = ", ".join(c.get("members") or []) or "no members"
            extra = f"; {c['explore']} exploring seat(s)" if c.get("explore") else ""
            desc = f": {c['description']}" if c.get("description") else ""
            lines.append(f"- {c.get('name')}{desc} (members: {members}{extra})")
        return "\n".join(lines), {"collections": cols}

    def tool_ask(self, client: Client, args: dict):
        body = ask_body(args)
        reply = client.post("/v1/chat/completions", body, gateway=True)
        bench = reply.get("bench") if isinstance(reply.get("bench"), dict) else {}
        content = ((reply.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        data = panel_data(bench, body["model"], content)
        text = panel_text(data)
        data["_failed"] = not any(s["status"] == "ok" for s in data["seats"])
        return text, data

    def tool_verdict(self, client: Client, args: dict):
        body = {"call": args["call"], "useful": args["useful"], "real": args.get("real") or [],
                "false": args.get("false") or []}
        if args.get("note"):
            body["note"] = args["note"]
        reply = client.post("/bench/verdict", body, gateway=True, timeout=min(SHORT_TIMEOUT, client.timeout))
        revised = f" (revision {reply['revisions']}; it replaces the earlier one)" if reply.get("revisions", 1) > 1 \
            else ""
        claims = f", {len(body['real'])} real and {len(body['false'])} false claim(s)"
        text = f"Verdict recorded for call {args['call']}: {'useful' if args['useful'] else 'not useful'}{claims}" \
               f"{revised}."
        return text, reply


# -- helpers -----------------------------------------------------------------------------------------

def error_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def redact(text: str, client: Client | None) -> str:
    """Keys never reach the output, even if the service were to echo one back."""
    return redaction.redact(text, *((client.key, client.admin_token) if client else ()))


def check_args(schema: dict, args: dict) -> None:
    """Enough JSON Schema for our flat inputs: required names, known names, and each value's type."""
    props = schema.get("properties", {})
    missing = [n for n in schema.get("required", []) if n not in args]
    if missing:
        raise ToolError(f"Missing argument(s): {', '.join(missing)}.")
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise ToolError(f"Unknown argument(s): {', '.join(unknown)}. This tool takes: {', '.join(props)}.")
    for name, value in args.items():
        want = props[name]["type"]
        if name == "with" and isinstance(value, str):
            continue            # a comma-separated string is forgiven; ask_body splits it
        if not isinstance(value, _TYPES[want]):
            raise ToolError(f"`{name}` must be a {want}.")
        if want == "array" and not all(isinstance(v, str) for v in value):
            raise ToolError(f"`{name}` must be a list of strings.")
        if want == "string" and name in schema.get("required", []) and not value.strip():
            raise ToolError(f"`{name}` must not be empty.")


def ask_body(args: dict) -> dict:
    """The chat-completions request the CLI's `bench ask` would send."""
    name = args["collection"].strip()
    model = name if name.startswith("bench/") or "/" in name else f"bench/{name}"
    if model.endswith(":route"):
        raise ToolError("Route mode (:route) is for agents talking to the gateway; `ask` asks the whole panel. "
                        "Give the collection name alone.")
    if args.get("merged") and not model.endswith(":merged"):
        model += ":merged"
    messages = [{"role": "system", "content": args["system"]}] if args.get("system") else []
    messages.append({"role": "user", "content": args["prompt"]})
    body = {"model": model, "messages": messages}
    extra = args.get("with") or []
    if isinstance(extra, str):
        extra = extra.split(",")
    extra = [m.strip() for m in extra if m.strip()]
    if extra:
        body["bench"] = {"with": extra}
    return body


def panel_data(bench: dict, model: str, content: str) -> dict:
    seats = []
    for s in bench.get("seats") or []:
        seats.append({"seat": int(s.get("seat") or len(seats) + 1), "kind": str(s.get("kind") or "member"),
                      "model": str(s.get("model") or "?"), "status": str(s.get("status") or "?"),
                      "seconds": float(s.get("seconds") or 0), "call": s.get("call"),
                      "answer": s.get("answer") or "", "error": s.get("error")})
    data = {"collection": str(bench.get("collection") or model.split("/", 1)[-1].split(":")[0]),
            "panel": str(bench.get("panel") or ""), "mode": str(bench.get("mode") or "panel"), "seats": seats}
    if bench.get("merge"):
        data["merge"] = dict(bench["merge"], answer=content)
    return data


def panel_text(data: dict) -> str:
    seats = data["seats"]
    ok = sum(1 for s in seats if s["status"] == "ok")
    lines = [f"Panel {data['panel']} on collection `{data['collection']}`: {len(seats)} seat(s), {ok} answered. "
             "Call ids are what `verdict` takes.", "",
             "| seat | kind | model | status | call |", "|---|---|---|---|---|"]
    lines += [f"| {s['seat']} | {s['kind']} | {s['model']} | {s['status']} | {s['call'] or '-'} |" for s in seats]
    for s in seats:
        lines += ["", f"## Seat {s['seat']} · {s['model']} · {s['kind']} · {s['status']} · call {s['call'] or '-'}"]
        if s["status"] == "ok":
            lines.append(s["answer"].strip() or "(an empty answer)")
        else:
            lines.append(f"(no answer: {s['error'] or s['status']})")
    merge = data.get("merge")
    if merge:
        lines += ["", f"## Merged · by {merge.get('model') or '-'} · {merge.get('status')} · call "
                      f"{merge.get('call') or '-'}", (merge.get("answer") or "").strip() or "(no merged answer)"]
    lines += ["", "Next: check each seat's claims against the code before acting on any of them; tell the user "
                  "about every seat above, including failures; then call `verdict` once for every seat you judged "
                  "(call, useful, real: claims that held, false: claims that were wrong)."]
    return "\n".join(lines)
