"""Model health: one-word probes recorded in `probes`, retirement after a confirming failure, and restore."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

from .. import errors
from ..canonical import Ask, Message, Text
from ..errors import BadRequest, BenchError, FaultKind, ModelHeld, NotFound, QuotaRefused, UpstreamFailed
from ..providers import Timeouts
from ..redaction import redact
from . import healthrecord
from .registry import ACTIVE, RETIRED, Endpoint, Model, Registry

log = logging.getLogger("benchwarmers.health")

PROBE_WORD = "ready"
PROBE_PROMPT = f"Reply with exactly one word: {PROBE_WORD}"
THINKING = "(thinking, cut at the probe's few tokens)"   # the answer of a model that spent them thinking
PROBE_MAX_TOKENS = 16         # one word needs a few: a slow local model asked for more wrote 700 tokens of it
PROBE_TIMEOUTS = Timeouts(connect=10, first_byte=90, idle=60)
OK, FAILED, TIMEOUT = "ok", "failed", "timeout"
# Failures that say nothing about the model itself: a refused key, a rate limit, or a client that cannot make the
# call (llm chosen but missing) never retires a model.
NOT_THE_MODEL = {FaultKind.AUTH, FaultKind.RATE_LIMITED, FaultKind.CLIENT}


@dataclass
class Probe:
    model: str
    kind: str                  # "probe" (scheduled or asked for), "onboard", "confirm"
    status: str                # ok, failed, timeout
    answer: str | None = None
    error: str | None = None
    seconds: float | None = None
    ttft: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    created: float = 0.0
    id: int | None = None
    error_kind: FaultKind | None = None     # the fault kind: decides retirement
    upstream_status: int | None = None      # the HTTP status the endpoint answered with, when it answered
    reset_at: float | None = None           # a rate limit's reset (not stored: it rests what the limit names)
    scope: str | None = None                # whose limit it was: "key" (the connection) or the model's (not stored)

    @property
    def followed(self) -> bool:
        """Whether its answer holds the word it was asked for: one that answers something else (a slow local model
        answered nonsense) reaches its endpoint, but may not follow an instruction."""
        return self.answer == THINKING or PROBE_WORD in (self.answer or "").lower()

    @classmethod
    def from_row(cls, row) -> "Probe":
        return cls(row["model"], row["kind"], row["status"], row["answer"], row["error"], row["seconds"],
                   row["ttft"], row["input_tokens"] or 0, row["output_tokens"] or 0, row["created"], row["id"],
                   fault_kind(row["error_kind"]), row["upstream_status"])

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("reset_at")
        d.pop("scope")
        for k in ("seconds", "ttft"):
            d[k] = round(d[k], 3) if d[k] is not None else None
        return d

    @property
    def ok(self) -> bool:
        return self.status == OK


def fault_kind(value) -> FaultKind | None:
    """A stored fault kind; None for none, or for one this version does not know."""
    try:
        return FaultKind(value) if value else None
    except ValueError:
        return None


def one_line(text: str, limit: int = 400) -> str:
    text = " ".join(redact(str(text or "")).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def advice(kind: FaultKind, endpoint: Endpoint, retry_after: float | None = None) -> str:
    """errors.advice, for one of our endpoints."""
    return errors.advice(kind, name=endpoint.name, base=endpoint.base_url, api=endpoint.api, retry_after=retry_after)


def explain(exc: UpstreamFailed, endpoint: Endpoint, doing: str) -> UpstreamFailed:
    """The fault as one line that says what failed and what to do next; never the key."""
    key = endpoint.key()[0] if not endpoint.no_key else None
    message = one_line(redact(f"{doing}: {exc.message}", key)).rstrip(".") + "."
    out = UpstreamFailed(exc.kind, message, advice(exc.kind, endpoint, exc.retry_after),
                         upstream_status=exc.upstream_status, retry_after=exc.retry_after, reset_at=exc.reset_at,
                         scope=exc.scope)
    return out


# ---- probing -----------------------------------------------------------------------------------

def probe_ask() -> Ask:
    return Ask(messages=[Message("user", [Text(PROBE_PROMPT)])], max_tokens=PROBE_MAX_TOKENS)


def run_probe(reg: Registry, model: Model, kind: str = "probe", timeouts=None, *, dialer) -> Probe:
    """Send the one-word prompt through `dialer` (the bench's Dialer, or the scheduler's paced one); every outcome
    becomes a Probe (nothing is raised for a model's fault). A probe one of the user's rate limits refuses is not
    sent: QuotaRefused is raised."""
    started = time.monotonic()
    probe = Probe(model.alias, kind, FAILED, created=time.time())
    try:
        reg.endpoint(model.endpoint)          # its endpoint still there, or the probe fails saying so
        answer = dialer.complete(model, probe_ask(), timeouts=timeouts or PROBE_TIMEOUTS, kind="probe")
    except QuotaRefused:             # a rate limit of the user's: nothing was sent, so there is nothing to record
        raise
    except UpstreamFailed as e:
        probe.status = TIMEOUT if e.kind is FaultKind.TIMEOUT else FAILED
        probe.error, probe.error_kind = one_line(e.message), e.kind
        probe.upstream_status, probe.reset_at = e.upstream_status, healthrecord.reset_of(e)
        probe.scope = e.scope
    except BenchError as e:          # e.g. its endpoint was removed
        probe.error, probe.error_kind = one_line(str(e)), FaultKind.NOT_FOUND
    else:
        probe.answer = (answer.text or "").strip()[:200]
        probe.ttft, probe.input_tokens = answer.ttft, answer.usage.input_tokens
        probe.output_tokens = answer.usage.output_tokens
        if probe.answer or answer.reasoning:   # a model that thinks first spends its few tokens thinking: it answers
            probe.status = OK
            probe.answer = probe.answer or THINKING
        else:
            probe.error, probe.error_kind = "answered with no text", FaultKind.BAD_RESPONSE
    probe.seconds = time.monotonic() - started
    return probe


def record(db, probe: Probe) -> int:
    """Store a probe; returns its id."""
    row = (probe.model, probe.kind, probe.status, probe.answer, probe.error, probe.seconds, probe.ttft,
           probe.input_tokens, probe.output_tokens, probe.created, probe.error_kind, probe.upstream_status)
    probe.id = db.call(lambda c: c.execute(
        "INSERT INTO probes (model, kind, status, answer, error, seconds, ttft, input_tokens, output_tokens, "
        "created, error_kind, upstream_status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row).lastrowid)
    return probe.id


def recent(db, alias: str, limit: int = 20) -> list[dict]:
    rows = db.query("SELECT * FROM probes WHERE model = ? ORDER BY created DESC, id DESC LIMIT ?", (alias, limit))
    return [Probe.from_row(r).to_dict() for r in rows]


def latest(db, aliases) -> dict[str, dict]:
    """alias -> its most recent probe, for the roster: one look down probes_model for each of `aliases`."""
    out = {}
    for alias in aliases:
        found = recent(db, alias, 1)
        if found:
            out[alias] = found[0]
    return out


# ---- checking, retiring, restoring -----------------------------------------------------------------

def served_names(entries: list[dict]) -> list[str]:
    return [m["id"] for m in entries if isinstance(m.get("id"), str)]


def retire_reason(reason) -> str:
    """The reason a retirement keeps; a 400 when there is none."""
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise BadRequest("A reason is required to retire a model.", "Say why, e.g. --reason 'slow and wrong'.")
    return reason


def retire(reg: Registry, alias: str, reason: str) -> Model:
    reason = retire_reason(reason)
    model = reg.model(alias)
    model.status, model.reason, model.retired_at = RETIRED, one_line(reason, 500), time.time()
    reg.save_model(model)
    return model


def refuse_held(catalog, alias: str) -> None:
    """A free model that turned paid is not called, not even probed, until the user confirms the price."""
    held = catalog.held(alias)
    if held:
        raise ModelHeld(f"{alias!r} is held: {held['reason']}.",
                        f"`bench model confirm {alias}` accepts the new price; `bench model retire {alias}` drops it.")


class Health:
    """Checks, retirements and restores of the bench's models. Calls go through `dialer` (the bench's one way to
    call a member: `complete(model, ask, timeouts=)` and `list_models(endpoint)`); the scheduler passes its paced
    dialer instead. What a probe says about its endpoint (a refused key, a rate limit) goes to the health record.
    `catalog` (the bench's) says which models are held: those are never called, so never checked or restored."""

    def __init__(self, registry: Registry, db, resting, dialer, catalog):
        self.registry, self.db, self.resting, self.dialer = registry, db, resting, dialer
        self.catalog = catalog

    def check(self, alias: str, dialer=None, served=None) -> dict:
        """Probe a model; when it fails for a reason of its own, confirm once and retire it with the evidence.
        `served()` gives its endpoint's list, or None when it cannot be had (default: ask the endpoint, only once
        the probe has failed). The probes decide, the list is evidence: a model no longer listed that still answers
        stays active."""
        model = self.registry.model(alias)
        refuse_held(self.catalog, alias)
        first = self.probe_and_note(model, "probe", dialer)
        out = {"model": alias, "probe": first.to_dict(), "retired": False}
        if first.ok or first.error_kind in NOT_THE_MODEL:
            return out
        served = served() if served else self.listing(model, dialer)
        confirm = self.probe_and_note(model, "confirm", dialer)
        out["confirm"] = confirm.to_dict()
        if confirm.ok or confirm.error_kind in NOT_THE_MODEL:
            return out
        holds = None if served is None else model.served in served
        why = "its endpoint no longer serves it" if holds is False else "it stopped answering"
        reason = one_line(f"{why}: {confirm.error} (probes #{first.id}, #{confirm.id})")
        evidence = {"probes": [first.to_dict(), confirm.to_dict()],
                    "listing": None if served is None else {"endpoint": model.endpoint, "holds_it": holds,
                                                            "count": len(served), "models": sorted(served)[:1000]}}
        out["model_after"] = retire(self.registry, alias, reason).to_dict()
        healthrecord.keep_retirement(self.db, alias, reason, evidence)
        out["retired"] = True
        log.info("retired %s: %s", alias, reason)
        return out

    def probe_and_note(self, model: Model, kind: str, dialer=None) -> Probe:
        """One probe, recorded, and what it says about the endpoint noted (a refused key, a rate limit)."""
        probe = run_probe(self.registry, model, kind, dialer=dialer or self.dialer)
        record(self.db, probe)
        healthrecord.note(self.db, self.resting, model.endpoint, probe, served=model.served)
        return probe

    def listing(self, model: Model, dialer=None) -> list[str] | None:
        """The served names its endpoint lists now; None when the list cannot be had."""
        try:
            return served_names((dialer or self.dialer).list_models(self.registry.endpoint(model.endpoint)))
        except BenchError:
            return None

    def restore(self, alias: str) -> tuple[Model, Probe | None]:
        """Bring a retired model back once it answers a probe; an active one is left as it is, with no call."""
        model = self.registry.model(alias)
        if model.active:
            return model, None
        refuse_held(self.catalog, alias)
        if model.endpoint not in self.registry.endpoints():
            raise NotFound(f"Model {alias!r} cannot come back: its endpoint {model.endpoint!r} is gone.",
                           f"Add it again with `bench endpoint add {model.endpoint} --base URL`, then restore.")
        probe = self.probe_and_note(model, "restore")
        if not probe.ok:
            kind = probe.error_kind or FaultKind.BAD_RESPONSE
            wait = probe.reset_at and probe.reset_at - time.time()
            raise UpstreamFailed(kind, f"{alias!r} did not answer its probe ({probe.error}), so it stays retired.",
                                 advice(kind, self.registry.endpoint(model.endpoint), wait),
                                 upstream_status=probe.upstream_status)
        model.status, model.reason, model.retired_at = ACTIVE, None, None
        self.registry.save_model(model)
        return model, probe

    def unprompted(self) -> tuple[list[Model], dict[str, dict]]:
        """(the models the bench may call on its own, by alias; the held ones left out, alias -> hold): an
        ad hoc or retired model is never among either."""
        models, held = [], {}
        for alias, model in sorted(self.registry.models().items()):
            if model.active and not model.ad_hoc:
                hold = self.catalog.held(alias)
                if hold:
                    held[alias] = hold
                else:
                    models.append(model)
        return models, held

    def probe_all(self) -> list[dict]:
        """Check every model the bench may call on its own (ad hoc and held ones are skipped)."""
        return [self.check(m.alias) for m in self.unprompted()[0]]
