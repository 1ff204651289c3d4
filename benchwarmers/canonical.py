"""The value types every format and provider translates to and from: one representation in the middle."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Union

from .errors import BenchError
from .tokencount import ascii_chars, estimate, estimate_tokens


# ---- message parts -------------------------------------------------------------------------

@dataclass
class Text:
    text: str
    type: str = field(default="text", init=False)


@dataclass
class Image:
    """An image either inline (base64 `data`) or by `url`."""
    media_type: str = "image/png"
    data: str | None = None          # base64, without the data: prefix
    url: str | None = None
    type: str = field(default="image", init=False)

    def data_url(self) -> str:
        return self.url if self.url else f"data:{self.media_type};base64,{self.data}"


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str = "{}"            # always a JSON string in the middle
    signature: str | None = None     # Gemini's thoughtSignature, sent back on later turns
    type: str = field(default="tool_call", init=False)

    def args(self) -> dict:
        """Arguments as an object (Anthropic, Gemini and Ollama want one); {} when unparsable."""
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {"value": value}


@dataclass
class ToolResult:
    id: str                          # the call id it answers
    content: str = ""
    is_error: bool = False
    name: str | None = None          # Gemini and Ollama name the function, not the id
    type: str = field(default="tool_result", init=False)


@dataclass
class Reasoning:
    """A thinking block; carried only where client and member speak the same API."""
    text: str = ""
    signature: str | None = None
    type: str = field(default="reasoning", init=False)


Part = Union[Text, Image, ToolCall, ToolResult, Reasoning]


@dataclass
class Message:
    role: str                        # "user", "assistant", "system" (mid-conversation) or "tool"
    parts: list[Part] = field(default_factory=list)

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    def has(self, kind: type) -> bool:
        return any(isinstance(p, kind) for p in self.parts)


@dataclass
class Tool:
    name: str
    description: str = ""
    parameters: dict = field(default_factory=lambda: {"type": "object", "properties": {}})


# ---- the request -----------------------------------------------------------------------------

PANEL, MERGED, ROUTE, DIRECT = "panel", "merged", "route", "direct"
POINTS = "points"                    # the `:points` suffix, and the `bench` body field's key for a panel's points


@dataclass
class Target:
    """What the client asked for: `bench/<collection>[:merged|:route]`, or a model alias (direct)."""
    name: str                        # collection name or model alias
    mode: str = PANEL
    requested: str = ""              # the model string exactly as the client sent it
    points: bool = False             # `:points` (after the name or its mode): every point of the panel is shown

    @classmethod
    def parse(cls, model: str) -> "Target":
        raw = (model or "").strip()
        name, mode, points = raw, DIRECT, False
        if raw.startswith("bench/"):
            name, mode = raw[len("bench/"):], PANEL
            if name.endswith(":" + POINTS):
                name, points = name[: -len(POINTS) - 1], True
            for suffix in (MERGED, ROUTE):
                if name.endswith(":" + suffix):
                    name, mode = name[: -len(suffix) - 1], suffix
        return cls(name=name, mode=mode, requested=raw, points=points)


@dataclass
class Ask:
    """What is asked, and only that: how to reply, what may pass through and who asks are values of their own
    (askparts.py), so the copy each seat makes (with_max_tokens) carries nothing but the content."""
    messages: list = field(default_factory=list)
    system: str | None = None
    tools: list = field(default_factory=list)
    tool_choice: Any = None          # None, "auto", "none", "required" or {"name": ...}
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: list = field(default_factory=list)
    target: Target | None = None
    with_models: list = field(default_factory=list)   # extra seats asked for by name
    points: str | None = None        # `bench.points` of the body: off, contested or all (None: the collection's)
    blind: bool | None = None        # `bench.blind` of the body: no model named until judged (None: the collection's)
    continues: str | None = None     # `bench.continue`: the panel this ask follows up (its seats' threads rebuilt)
    only_seat: int | None = None     # `bench.seat` with it: only that seat's member is asked, in its own thread
    _tokens: int | None = field(default=None, init=False, repr=False, compare=False)

    def with_max_tokens(self, tokens: int | None) -> "Ask":
        """A shallow copy with another output budget (messages and tools shared; the token estimate kept).
        Copied field by field in C: dataclasses.replace costs six times as much, once per seat."""
        other = object.__new__(Ask)
        other.__dict__.update(self.__dict__)
        other.max_tokens = tokens
        return other

    @property
    def aim(self) -> Target:
        """Its target, for an ask that came through a format (each format's parse names one; an ask made inside the
        service, to one model, has none)."""
        if self.target is None:
            raise ValueError("this ask names no target: it did not come through a format")
        return self.target

    def has_images(self) -> bool:
        return any(m.has(Image) for m in self.messages)

    def prompt_text(self) -> str:
        """Everything a model will read, as one text (the count_tokens routes): prompt_chunks joined by newlines."""
        return "\n".join(self.prompt_chunks())

    def prompt_chunks(self) -> list[str]:
        """Everything a model will read, as the texts it is made of: token estimates and prompt hashes go through
        them one by one, so a large ask's text is never copied into a joined one."""
        chunks = [self.system or ""]
        for m in self.messages:
            for p in m.parts:
                if isinstance(p, (Text, Reasoning)):
                    chunks.append(p.text)
                elif isinstance(p, ToolCall):
                    chunks.append(p.name + p.arguments)
                elif isinstance(p, ToolResult):
                    chunks.append(p.content)
        chunks.extend(json.dumps(t.parameters) + t.description for t in self.tools)
        return chunks

    def prompt_tokens(self) -> int:
        """The estimated prompt tokens of prompt_text(), computed once per Ask (every seat's checks read it)."""
        if self._tokens is None:
            chunks = self.prompt_chunks()
            joins = len(chunks) - 1       # the newlines between them: ASCII
            self._tokens = estimate(sum(map(len, chunks)) + joins, sum(map(ascii_chars, chunks)) + joins)
        return self._tokens


# ---- what comes back -------------------------------------------------------------------------

@dataclass
class Usage:
    """Token counts. input_tokens counts every input token, cached ones included (OpenAI's and Gemini's
    meaning); Anthropic's adapters add and subtract the cache counts at the edge. `estimated`: some of the
    counts are our estimate, because the upstream reported none (llama.cpp streams without usage)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    estimated: bool = False

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens, estimated=self.estimated or other.estimated)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict:
        d = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
             "cache_read_tokens": self.cache_read_tokens, "cache_write_tokens": self.cache_write_tokens}
        if self.estimated:
            d["estimated"] = True
        return d


def estimate_usage(answer: "Answer", ask: Ask) -> None:
    """Fill in the counts an upstream did not report (a stream without usage), from the prompt and the answer
    as they were, and mark the usage as estimated; counts it did report are kept."""
    u = answer.usage
    if u.input_tokens and u.output_tokens:   # both reported (most answers): nothing to fill in
        return
    written = answer.text          # the joins only when there is something to join (most answers: text alone)
    if answer.tool_calls or answer.reasoning:
        written += "".join(c.name + c.arguments for c in answer.tool_calls) + "".join(r.text for r in answer.reasoning)
    guess_in = ask.prompt_tokens() if not u.input_tokens else 0
    guess_out = estimate_tokens(written) if not u.output_tokens else 0
    if guess_in or guess_out:
        answer.usage = Usage(u.input_tokens or guess_in, u.output_tokens or guess_out, u.cache_read_tokens,
                             u.cache_write_tokens, estimated=True)


# Canonical finish reasons (OpenAI's words): stop, length, tool_calls, content_filter, error.
STOP, LENGTH, TOOL_CALLS, CONTENT_FILTER, ERROR = "stop", "length", "tool_calls", "content_filter", "error"


# Events: what a provider stream yields and what a format streams out.
@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    text: str = ""
    signature: str | None = None


@dataclass
class ToolCallDelta:
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""              # a fragment of the JSON string


@dataclass
class UsageEvent:
    usage: Usage


@dataclass
class Finish:
    reason: str = STOP
    usage: Usage | None = None
    extra: dict | None = None        # the `bench` object, for formats that can carry it


@dataclass
class ErrorEvent:
    error: BenchError


@dataclass
class KeepAlive:
    """Nothing to say yet: formats send a comment, ping or nothing so the connection stays open."""


Event = Union[TextDelta, ReasoningDelta, ToolCallDelta, UsageEvent, Finish, ErrorEvent, KeepAlive]


@dataclass
class Answer:
    text: str = ""
    tool_calls: list = field(default_factory=list)    # ToolCall
    reasoning: list = field(default_factory=list)     # Reasoning
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = STOP
    ttft: float | None = None        # seconds to the first token
    seconds: float = 0.0
    model: str = ""                  # served name, as the upstream reported it


class Collector:
    """Folds a stream of Events into an Answer: the one way a whole answer is made."""

    def __init__(self) -> None:
        self.answer = Answer()
        self._text: list[str] = []
        self._calls: dict[int, ToolCall] = {}
        self._reasoning: list[Reasoning] = []

    def add(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            if not self._reasoning or (self._reasoning[-1].signature and event.text):
                self._reasoning.append(Reasoning())
            last = self._reasoning[-1]
            last.text += event.text
            if event.signature:
                last.signature = (last.signature or "") + event.signature
        elif isinstance(event, ToolCallDelta):
            call = self._calls.setdefault(event.index, ToolCall(id="", name="", arguments=""))
            if event.id:
                call.id = event.id
            if event.name and not call.name:
                call.name = event.name
            call.arguments += event.arguments
        elif isinstance(event, UsageEvent):
            self.answer.usage = merge_usage(self.answer.usage, event.usage)
        elif isinstance(event, Finish):
            self.answer.finish_reason = event.reason
            if event.usage:
                self.answer.usage = merge_usage(self.answer.usage, event.usage)

    def result(self) -> Answer:
        a = self.answer
        a.text = "".join(self._text)
        a.tool_calls = [self._calls[i] for i in sorted(self._calls)]
        for c in a.tool_calls:
            c.arguments = c.arguments or "{}"
        a.reasoning = self._reasoning
        return a


def merge_usage(old: Usage, new: Usage) -> Usage:
    """Streams report usage in pieces (input at the start, output at the end): keep the largest of each."""
    return Usage(max(old.input_tokens, new.input_tokens), max(old.output_tokens, new.output_tokens),
                 max(old.cache_read_tokens, new.cache_read_tokens),
                 max(old.cache_write_tokens, new.cache_write_tokens), estimated=old.estimated or new.estimated)


# ---- the panel -------------------------------------------------------------------------------

MEMBER, EXPLORE, WITH = "member", "explore", "with"
OK, FAILED, TIMEOUT, SKIPPED = "ok", "failed", "timeout", "skipped"
# still out when the panel answered after its explore grace (its record gets the answer when it comes); stopped
# because nobody waits for it any more (the client went away, the service stopped); stopped by whoever asked
RUNNING, CANCELLED, STOPPED = "running", "cancelled", "stopped"


@dataclass
class Seat:
    seat: int
    kind: str                        # member, explore or with
    model: str                       # alias
    status: str = OK                 # ok, failed, timeout, skipped, running, cancelled, stopped
    seconds: float = 0.0
    call: str | None = None
    answer: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None   # why its answer ended (stop, length, ...); None without an answer
    max_tokens: int | None = None      # the output tokens it was asked for, when a cap was sent
    cost: float | None = None          # dollars its answer cost, once known (None: not yet, or no price known)

    def to_dict(self) -> dict:
        # a shallow dict: asdict's deep copy was a visible share of a panel's CPU
        return {"seat": self.seat, "kind": self.kind, "model": self.model, "status": self.status,
                "seconds": round(self.seconds, 3), "call": self.call, "answer": self.answer, "error": self.error,
                "usage": self.usage.to_dict(), "finish_reason": self.finish_reason,
                "cost": None if self.cost is None else round(self.cost, 6)}

    def outcome(self) -> str:
        """The seat's status in words for its label: "cut at 4,096 tokens" for an answer that hit its cap."""
        if self.status == OK and self.finish_reason == LENGTH:
            return f"cut at {self.max_tokens:,} tokens" if self.max_tokens else "cut at its output limit"
        return self.status


@dataclass
class PanelReply:
    collection: str
    panel: str                       # panel id
    seats: list = field(default_factory=list)
    merged: str | None = None
    merge_model: str | None = None

    @property
    def usage(self) -> Usage:
        total = Usage()
        for s in self.seats:
            total = total + s.usage
        return total

    def to_dict(self) -> dict:
        d = {"collection": self.collection, "panel": self.panel,
             "seats": [s.to_dict() for s in self.seats]}
        if self.merge_model:
            d["merge_model"] = self.merge_model
        return d
