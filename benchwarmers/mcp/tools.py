"""The MCP tools (list_collections, ask, verdict of a seat or a point, pending_verdicts): arguments checked,
answers written for the model, written once; how a call reaches the panel is the Reach each transport gives
(reach.py, api/mcpreach.py)."""
from __future__ import annotations

import json
import threading
from typing import Any, Callable

from .. import redaction
from ..words import plural
from .schemas import TOOLS

STRUCTURED_FROM = "2025-06-18"      # outputSchema, structuredContent and tool titles start here
ANNOTATIONS_FROM = "2025-03-26"

_BY_NAME = {t["name"]: t for t in TOOLS}
_TYPES: dict[str, Any] = {"string": str, "boolean": bool, "array": list, "integer": int}

Progress = Callable[[float, "float | None", str], None]     # (done, total, message) -> a progress notification
OnSeat = Callable[[dict, int, int], None]                  # (seat, finished so far, seats) as each seat finishes


class ToolError(Exception):
    """Ends a tool call with isError and this text (the model reads it and can correct itself)."""


class Reach:
    """How the tools reach the panel. Each method returns the service's JSON answer or raises ToolError with
    words the model can act on; secrets() are redacted from everything the tools write."""

    def describe(self) -> str:
        raise NotImplementedError

    def secrets(self) -> tuple:
        return ()

    def collections(self) -> dict:
        """GET /bench/collections for this caller."""
        raise NotImplementedError

    def ask(self, body: dict, on_seat: OnSeat | None) -> tuple[dict, str]:
        """Ask as POST /v1/chat/completions would with `body`: (its `bench` data, the answer's text)."""
        raise NotImplementedError

    def verdict(self, body: dict) -> dict:
        """POST /bench/verdict."""
        raise NotImplementedError

    def point_verdict(self, point: str, body: dict) -> dict:
        """POST /bench/points/{point}/verdict."""
        raise NotImplementedError

    def pending(self, limit: int) -> dict:
        """GET /bench/pending: this caller's answers without a verdict (its key's, else its session's)."""
        raise NotImplementedError


class Tools:
    def __init__(self, reach: Reach):
        self.reach = reach

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

    # -- a call --------------------------------------------------------------------------------
    def call(self, name: str, args: dict, version: str, cancelled: threading.Event | None = None,
             progress: Progress | None = None) -> dict:
        """A CallToolResult: readable text, plus structuredContent where the version has it."""
        try:
            check_args(_BY_NAME[name]["inputSchema"], args)
            text, data = getattr(self, "tool_" + name)(args, progress)
        except ToolError as e:
            return error_result(self.redact(str(e)))
        failed = isinstance(data, dict) and data.pop("_failed", False)
        result: dict[str, Any] = {"content": [{"type": "text", "text": self.redact(text)}], "isError": bool(failed)}
        if failed:
            return result
        if version >= STRUCTURED_FROM:
            result["structuredContent"] = data
        else:
            result["content"].append({"type": "text", "text": self.redact(json.dumps(data, ensure_ascii=False))})
        return result

    def redact(self, text: str) -> str:
        """Keys never reach the output, even if the service were to echo one back."""
        return redaction.redact(text, *[s for s in self.reach.secrets() if s])

    def tool_list_collections(self, args: dict, progress: Progress | None):
        cols = [c for c in self.reach.collections().get("collections") or [] if isinstance(c, dict)]
        if not cols:
            return ("The service has no collections yet. Create one in the dashboard (Collections) or with "
                    "`bench collection save NAME --members a,b`.", {"collections": []})
        lines = [f"{plural(len(cols), 'collection')}. Ask one with `ask` (collection, prompt):", ""]
        for c in cols:
            members = ", ".join(c.get("members") or []) or "no members"
            extra = f"; {plural(c['explore'], 'exploring seat')}" if c.get("explore") else ""
            desc = f": {c['description']}" if c.get("description") else ""
            lines.append(f"- {c.get('name')}{desc} (members: {members}{extra})")
        return "\n".join(lines), {"collections": cols}

    def tool_ask(self, args: dict, progress: Progress | None):
        body = ask_body(args)

        def on_seat(seat: dict, done: int, total: int) -> None:
            assert progress is not None      # passed on only with a progress to tell
            progress(done, total, f"seat {seat.get('seat')} · {seat.get('model')} · {seat.get('status')}")
        bench, content = self.reach.ask(body, on_seat if progress else None)
        data = panel_data(bench if isinstance(bench, dict) else {}, body["model"], content or "")
        data["_failed"] = not any(s["status"] == "ok" for s in data["seats"])
        return panel_text(data), data

    def tool_verdict(self, args: dict, progress: Progress | None):
        if "point" in args:
            return self.point_verdict(args)
        if "call" not in args or "useful" not in args or "holds" in args:
            raise ToolError("Give `call` and `useful` for a seat's answer, or `point` and `holds` for a point.")
        body = {"call": args["call"], "useful": args["useful"], "real": args.get("real") or [],
                "false": args.get("false") or []}
        if args.get("note"):
            body["note"] = args["note"]
        if args.get("from_points"):
            body["from_points"] = True
        reply = self.reach.verdict(body)
        revised = f" (revision {reply['revisions']}; it replaces the earlier one)" if reply.get("revisions", 1) > 1 \
            else ""
        claims = f", {len(body['real'])} real and {len(body['false'])} false claim(s)"
        text = f"Verdict recorded for call {args['call']}: {'useful' if args['useful'] else 'not useful'}{claims}" \
               f"{revised}."
        return text, reply

    def point_verdict(self, args: dict):
        """A point judged once: a claim for every seat that took a side, and what that proposes per seat."""
        if "holds" not in args or any(k in args for k in ("call", "useful", "real", "false", "from_points")):
            raise ToolError("A point's verdict takes `point` and `holds` (true: its claim holds, false: it does not) "
                            "and an optional `note`; nothing else.")
        body = {"true": args["holds"], **({"note": args["note"]} if args.get("note") else {})}
        reply = self.reach.point_verdict(args["point"], body)
        claims = reply.get("claims") or []
        data = {"point": args["point"], "holds": reply.get("true"), "claims": claims,
                "proposals": reply.get("proposals") or []}
        sides = ", ".join(f"seat {c.get('seat')} {'real' if c.get('real') else 'false'}" for c in claims) or "none"
        lines = [f"Point {args['point']} judged {'true' if args['holds'] else 'false'}: "
                 f"{plural(len(claims), 'claim')} for the seats that took a side ({sides})."]
        lines += proposal_lines(data["proposals"])
        return "\n".join(lines), data

    def tool_pending_verdicts(self, args: dict, progress: Progress | None):
        limit = args.get("limit", 20)
        if not 1 <= limit <= 200:
            raise ToolError("`limit` must be from 1 to 200.")
        reply = self.reach.pending(limit)
        items = [p for p in reply.get("pending") or [] if isinstance(p, dict)]
        points = [p for p in reply.get("points") or [] if isinstance(p, dict)]
        data = {"total": int(reply.get("total") or 0), "points": points, "pending": items,
                "points_total": int(reply.get("points_total") or len(points))}
        return pending_text(data), data


# -- helpers -----------------------------------------------------------------------------------------

def error_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": True}


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
        if not isinstance(value, _TYPES[want]) or (want == "integer" and isinstance(value, bool)):
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
    body: dict[str, Any] = {"model": model, "messages": messages}
    extra = args.get("with") or []
    if isinstance(extra, str):
        extra = extra.split(",")
    extra = [m.strip() for m in extra if m.strip()]
    if extra:
        body["bench"] = {"with": extra}
    if args.get("points"):
        body.setdefault("bench", {})["points"] = args["points"]
    if args.get("conversation"):
        body.setdefault("bench", {})["continue"] = args["conversation"].strip()
    return body


def panel_data(bench: dict, model: str, content: str) -> dict:
    seats: list[dict] = []
    for s in bench.get("seats") or []:
        seats.append({"seat": int(s.get("seat") or len(seats) + 1), "kind": str(s.get("kind") or "member"),
                      "model": str(s.get("model") or "?"), "status": str(s.get("status") or "?"),
                      "seconds": float(s.get("seconds") or 0), "call": s.get("call"),
                      "answer": s.get("answer") or "", "error": s.get("error")})
    data: dict[str, Any] = {"collection": str(bench.get("collection") or model.split("/", 1)[-1].split(":")[0]),
            "panel": str(bench.get("panel") or ""), "mode": str(bench.get("mode") or "panel"), "seats": seats}
    if data["panel"] and not isinstance(bench.get("record"), dict):   # the panel to continue: ask with it again
        data["conversation"] = data["panel"]
    if bench.get("merge"):
        data["merge"] = dict(bench["merge"], answer=content)
    if isinstance(bench.get("points_info"), dict):
        data["points"] = [p for p in bench.get("points") or [] if isinstance(p, dict)]
        data["points_info"] = bench["points_info"]
    if isinstance(bench.get("record"), dict):   # its records could not be kept: no id in it names one
        data["record"] = bench["record"]
    return data


def panel_text(data: dict) -> str:
    seats = data["seats"]
    ok = sum(1 for s in seats if s["status"] == "ok")
    unkept = data.get("record")
    head = (f"Panel {data['panel']} on collection `{data['collection']}`: {plural(len(seats), 'seat')}, {ok} "
            "answered. Call ids are what `verdict` takes; to follow up, ask again with conversation "
            f"{data['panel']}.") if not unkept else (
        f"Panel on collection `{data['collection']}`: {plural(len(seats), 'seat')}, {ok} answered. Not recorded: "
        f"{unkept.get('why')}, so no call id is given and nothing here can be judged.")
    lines = [head, "", "| seat | kind | model | status | call |", "|---|---|---|---|---|"]
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
    lines += points_lines(data)
    check = ("first check each point above against the code and judge it with `verdict` (point, holds): one "
             "judgement counts for every seat that took a side; then " if data.get("points") else "")
    judge = ("call `verdict` once for every seat you judged (call, useful, real: claims that held, false: claims "
             "that were wrong)." if not unkept else "tell the user this panel was not recorded.")
    lines += ["", "Next: check each seat's claims against the code before acting on any of them; tell the user "
                  "about every seat above, including failures; " + ("" if unkept else check) + judge]
    return "\n".join(lines)


def points_lines(data: dict) -> list[str]:
    """Where the seats disagree: each point with its id, who asserts and who denies it, in their own words."""
    info = data.get("points_info")
    if not info:
        return []
    lines = ["", "## Where they disagree"]
    if info.get("pending"):
        return lines + [f"Points: the referee {info.get('referee')} is still reading the answers; "
                        "`pending_verdicts` lists them once they are in (ask with `points` to wait for them)."]
    if info.get("unavailable"):
        return lines + [f"points: unavailable, {info['unavailable']}"]
    points = data.get("points") or []
    if not points:
        return lines + [f"No seat contradicts another ({plural(info.get('found', 0), 'point')} found)."]
    for n, p in enumerate(points, 1):
        quotes = p.get("quotes") or {}
        lines.append(f"{n}. point {p.get('id') or '-'}: {p.get('claim')}")
        for side, verb in (("assert", "asserts"), ("deny", "denies")):
            for seat in p.get(side) or []:
                lines.append(f"   - seat {seat} {verb}: \u201c{quotes.get(str(seat), '')}\u201d")
        if p.get("silent"):
            lines.append("   - silent: " + ", ".join(f"seat {s}" for s in p["silent"]))
    return lines


def proposal_lines(proposals: list) -> list[str]:
    """What each seat's judged points propose, and how to confirm it."""
    out = []
    for p in proposals:
        if isinstance(p, dict):
            word, flag = ("useful", "true") if p.get("useful") else ("not useful", "false")
            out.append(f"Seat {p.get('seat')} ({p.get('model')}): {p.get('why')}, so {word} is proposed; confirm "
                       f"with `verdict` call {p.get('call')}, useful {flag}, from_points true.")
    return out


def pending_text(data: dict) -> str:
    items, points = data["pending"], data.get("points") or []
    lines = []
    if points:
        total = data.get("points_total", len(points))
        shown = f" (the newest {len(points)} shown)" if total > len(points) else ""
        lines += [f"Points nobody judged yet: {total}{shown}. Check each against the code and judge it with "
                  "`verdict` (point, holds) first: one judgement counts for every seat that took a side.", ""]
        lines += [f"- point {p.get('id')} · panel {p.get('panel')}: {p.get('claim')} (asserted by "
                  f"{', '.join(map(str, p.get('assert') or [])) or 'none'}; denied by "
                  f"{', '.join(map(str, p.get('deny') or [])) or 'none'})" for p in points]
        lines.append("")
    if not items:
        return "\n".join(lines + ["No answer is waiting for a verdict."])
    shown = f" (the newest {len(items)} shown)" if data["total"] > len(items) else ""
    lines += [f"Waiting for a verdict: {plural(data['total'], 'answer')}{shown}. "
              "Judge each one you checked with `verdict`:", ""]
    lines += [f"- call {p.get('call')} · seat {p.get('seat')} · {p.get('model')} · {p.get('collection') or '-'}: "
              f"{p.get('excerpt') or '(empty)'}" for p in items]
    return "\n".join(lines)
