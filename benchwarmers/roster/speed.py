"""Speed figures: a short and a long prompt timed (time to first token, output tokens per second), kept in `perf`;
onboarding's quick measure, a few dozen tokens, stands in until the weekly perf job has measured a model."""
from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass

from ..canonical import Ask, Message, Text
from ..tokencount import estimate_tokens
from ..errors import BenchError, FaultKind, QuotaRefused, UpstreamFailed
from ..providers import Timeouts
from . import healthrecord
from .health import one_line

SHORT_PROMPT = "Count from 1 to 40 in words, separated by commas, and nothing else."
WINDS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")


def long_prompt() -> str:
    """About 2,000 tokens of a made-up lighthouse log, then a request for a summary: a long read, a long answer."""
    entries = []
    for n in range(1, 49):
        entries.append(f"Entry {n}: at {(n * 7) % 24:02d}:{(n * 13) % 60:02d} the keeper trimmed the wick, wound the "
                       f"clockwork {3 + n % 5} times and logged wind from the {WINDS[n % 8]} at {8 + (n * 3) % 30} "
                       f"knots, sea state {1 + n % 6}, visibility {2 + (n * 5) % 18} miles; "
                       + ("a fishing boat passed close inshore. " if n % 7 == 0 else "nothing passed. ")
                       + ("The fog bell was rung for an hour." if n % 11 == 0 else "The glass was clean."))
    return ("Here is a keeper's log.\n\n" + "\n".join(entries) + "\n\nSummarise this log in about 200 words: "
            "the pattern of the weather, the keeper's routine, and every entry that was out of the ordinary.")


QUICK_PROMPT = "Count from 1 to 30 in words, separated by commas, and nothing else."
QUICK_TOKENS = 48    # enough to time the writing after the first token; a slow local model writes it in seconds
UNMEASURED = 1024    # the most a panel asks a model of unknown speed for by default: a slow local one writes it in
#                      minutes, where 4,096 held its seat (and its one-slot server) past seat_timeout
PROMPTS = {"short": (SHORT_PROMPT, 300), "long": (long_prompt(), 800), "quick": (QUICK_PROMPT, QUICK_TOKENS)}
TIMEOUTS = Timeouts(connect=10, first_byte=120, idle=60)


@dataclass
class Figure:
    model: str
    prompt: str                       # short or long
    status: str                       # ok, failed, timeout
    ttft: float | None = None
    seconds: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_per_second: float | None = None
    error: str | None = None
    job: int | None = None
    created: float = 0.0
    error_kind: FaultKind | None = None    # not stored: says whether the endpoint, not the model, is at fault
    reset_at: float | None = None
    scope: str | None = None               # a rate limit's: the key's or the model's (not stored)
    id: int | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("error_kind", "reset_at", "scope", "model", "job", "id"):
            d.pop(k)
        for k in ("ttft", "seconds", "tokens_per_second"):
            d[k] = round(d[k], 3) if d[k] is not None else None
        return d

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def measure(model, prompt: str, dialer, job: int | None = None) -> Figure:
    """Send one of PROMPTS through `dialer`; every outcome becomes a Figure, but for a call one of the user's rate
    limits refuses unsent (QuotaRefused is raised)."""
    text, max_tokens = PROMPTS[prompt]
    fig = Figure(model.alias, prompt, "failed", job=job, created=time.time())
    ask = Ask(messages=[Message("user", [Text(text)])], max_tokens=max_tokens)
    try:
        answer = dialer.complete(model, ask, timeouts=TIMEOUTS, kind="speed")
    except QuotaRefused:             # a rate limit of the user's: nothing was sent, so there is no figure
        raise
    except UpstreamFailed as e:
        fig.status = "timeout" if e.kind is FaultKind.TIMEOUT else "failed"
        fig.error, fig.error_kind = one_line(e.message), e.kind
        fig.reset_at, fig.scope = healthrecord.reset_of(e), e.scope
        return fig
    except BenchError as e:
        fig.error, fig.error_kind = one_line(str(e)), FaultKind.NOT_FOUND
        return fig
    fig.ttft, fig.seconds = answer.ttft, answer.seconds
    fig.input_tokens = answer.usage.input_tokens
    fig.output_tokens = answer.usage.output_tokens or estimate_tokens(answer.text or "")
    if not (answer.text or "").strip() and not answer.reasoning:   # a model that thinks first writes all the same
        fig.error, fig.error_kind = "answered with no text", FaultKind.BAD_RESPONSE
        return fig
    fig.status = "ok"
    writing = (answer.seconds or 0) - (answer.ttft or 0)
    if fig.output_tokens > 1 and writing > 0.001:
        fig.tokens_per_second = (fig.output_tokens - 1) / writing   # the first token arrived at ttft
    return fig


def record(db, fig: Figure) -> int:
    global _written
    fig.id = db.call(lambda c: c.execute(
        "INSERT INTO perf (model, prompt, status, ttft, seconds, input_tokens, output_tokens, tokens_per_second, "
        "error, job, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fig.model, fig.prompt, fig.status, fig.ttft, fig.seconds, fig.input_tokens, fig.output_tokens,
         fig.tokens_per_second, fig.error, fig.job, fig.created)).lastrowid)
    _written += 1    # once it is in: every Paces reads the figures again at its next look
    return fig.id


def _figure(row) -> Figure:
    return Figure(row["model"], row["prompt"], row["status"], row["ttft"], row["seconds"], row["input_tokens"] or 0,
                  row["output_tokens"] or 0, row["tokens_per_second"], row["error"], row["job"], row["created"],
                  id=row["id"])


def summary(latest: dict) -> dict | None:
    """{measured, ttft (the short prompt's), tokens_per_second (the long prompt's), short, long, quick}: onboarding's
    quick figure counts only where the perf job's give none."""
    if not latest:
        return None
    short, long_, quick = latest.get("short"), latest.get("long"), latest.get("quick")
    ttft = next((f.ttft for f in (short, long_, quick) if f and f.ok and f.ttft is not None), None)
    tps = next((f.tokens_per_second for f in (long_, short, quick) if f and f.ok and f.tokens_per_second), None)
    return {"measured": max(f.created for f in latest.values()),
            "ttft": round(ttft, 3) if ttft is not None else None,
            "tokens_per_second": round(tps, 1) if tps is not None else None,
            **{name: f.to_dict() if f else None for name, f in (("short", short), ("long", long_), ("quick", quick))}}


LATEST = 8   # a model's newest figures looked at for the latest of each prompt (a speed test has two)


def latest(db, aliases) -> dict[str, dict]:
    """alias -> its speed summary, from the latest figure of each prompt, for each of `aliases` (perf_model)."""
    out: dict[str, dict] = {}
    for alias in aliases:
        figs: dict = {}
        for row in db.query("SELECT * FROM perf WHERE model = ? ORDER BY created DESC, id DESC LIMIT ?",
                            (alias, LATEST)):
            figs.setdefault(row["prompt"], _figure(row))
        if figs:
            out[alias] = summary(figs) or {}   # (None only for no figures)
    return out


def history(db, alias: str, limit: int = 104) -> list[dict]:
    """The model's figures, oldest first (two a week: a chart of about a year)."""
    rows = db.query("SELECT * FROM perf WHERE model = ? ORDER BY created DESC, id DESC LIMIT ?", (alias, limit))
    return [dict(_figure(r).to_dict(), created=r["created"]) for r in reversed(rows)]


_written = 0                 # figures recorded by this process: a Paces made before the last one reads them again
PACE_SECONDS = 60.0          # and at least this often, for figures another process wrote


class Paces:
    """Each model's latest speed as (time to first token, tokens per second), for seating and output caps on every
    panel: one query a model when a figure was recorded since the last look (or a minute passed), never one a
    panel."""

    def __init__(self, db):
        self.db = db
        self._seen: tuple = (-1, 0.0)
        self._paces: dict[str, tuple | None] = {}
        self._lock = threading.Lock()

    def of(self, alias: str) -> tuple | None:
        """(ttft or None, tokens per second or None), or None when the model was never measured."""
        now = time.monotonic()
        written, at = self._seen   # a hit needs no lock: _seen read first, so a reset found below is an empty dict
        if written == _written and now - at <= PACE_SECONDS:
            try:
                return self._paces[alias]
            except KeyError:
                pass
        with self._lock:
            written, at = self._seen
            if written != _written or now - at > PACE_SECONDS:
                self._paces, self._seen = {}, (_written, now)
            if alias in self._paces:
                return self._paces[alias]
        pace = self._read(alias)
        with self._lock:
            self._paces[alias] = pace
        return pace

    def _read(self, alias: str) -> tuple | None:
        try:
            found = latest(self.db, [alias]).get(alias)
        except Exception:      # a store that cannot be read: no speed known, seating as without figures
            return None
        return (found["ttft"], found["tokens_per_second"]) if found else None
