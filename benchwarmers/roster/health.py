"""Model health: one-word probes recorded in `probes`, retirement after a confirming failure, and restore."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

from .. import errors
from ..canonical import Ask, Message, Text
from ..errors import BadRequest, BenchError, FaultKind, NotFound, UpstreamFailed
from ..providers import Timeouts
from ..redaction import redact
from .registry import ACTIVE, RETIRED, Endpoint, Model, Registry

log = logging.getLogger("benchwarmers.health")

PROBE_PROMPT = "Reply with exactly one word: ready"
PROBE_MAX_TOKENS = 512        # room for models that think before their one word
PROBE_TIMEOUTS = Timeouts(connect=10, first_byte=90, idle=60)
OK, FAILED, TIMEOUT = "ok", "failed", "timeout"
# Failures that say nothing about the model itself: a refused key or a rate limit never retires a model.
NOT_THE_MODEL = {FaultKind.AUTH, FaultKind.RATE_LIMITED}

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
    error_kind: FaultKind | None = None    # not stored: decides retirement

    @classmethod
    def from_row(cls, row) -> "Probe":
        return cls(row["model"], row["kind"], row["status"], row["answer"], row["error"], row["seconds"],
                   row["ttft"], row["input_tokens"] or 0, row["output_tokens"] or 0, row["created"], row["id"])

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("error_kind")
        for k in ("seconds", "ttft"):
            d[k] = round(d[k], 3) if d[k] is not None else None
        return d

    @property
    def ok(self) -> bool:
        return self.status == OK


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


def run_probe(reg: Registry, model: Model, kind: str = "probe", timeouts=None) -> Probe:
    """Send the one-word prompt; every outcome becomes a Probe (nothing is raised for a model's fault)."""
    started = time.monotonic()
    probe = Probe(model.alias, kind, FAILED, created=time.time())
    try:
        endpoint = reg.endpoint(model.endpoint)
        if timeouts is None:
            timeouts = PROBE_TIMEOUTS
        answer = reg.provider(endpoint).complete(probe_ask(), model.served, timeouts=timeouts)
    except UpstreamFailed as e:
        probe.status = TIMEOUT if e.kind is FaultKind.TIMEOUT else FAILED
        probe.error, probe.error_kind = one_line(e.message), e.kind
    except BenchError as e:          # e.g. its endpoint was removed
        probe.error, probe.error_kind = one_line(str(e)), FaultKind.NOT_FOUND
    else:
        probe.answer = (answer.text or "").strip()[:200]
        probe.ttft, probe.input_tokens = answer.ttft, answer.usage.input_tokens
        probe.output_tokens = answer.usage.output_tokens
        if probe.answer:
            probe.status = OK
        else:
            probe.error, probe.error_kind = "answered with no text", FaultKind.BAD_RESPONSE
    probe.seconds = time.monotonic() - started
    return probe


def record(db, probe: Probe) -> int:
    """Store a probe; returns its id."""
    row = (probe.model, probe.kind, probe.status, probe.answer, probe.error, probe.seconds, probe.ttft,
           probe.input_tokens, probe.output_tokens, probe.created)
    probe.id = db.call(lambda c: c.execute(
        "INSERT INTO probes (model, kind, status, answer, error, seconds, ttft, input_tokens, output_tokens, "
        "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row).lastrowid)
    return probe.id


def recent(db, alias: str, limit: int = 20) -> list[dict]:
    rows = db.query("SELECT * FROM probes WHERE model = ? ORDER BY created DESC, id DESC LIMIT ?", (alias, limit))
    return [Probe.from_row(r).to_dict() for r in rows]


def latest(db) -> dict[str, dict]:
    """alias -> its most recent probe, for the roster."""
    rows = db.query("SELECT p.* FROM probes p JOIN (SELECT model, MAX(id) AS id FROM probes GROUP BY model) m "
                    "ON p.id = m.id")
    return {r["model"]: Probe.from_row(r).to_dict() for r in rows}


# ---- checking, retiring, restoring -----------------------------------------------------------------

def check(reg: Registry, db, alias: str) -> dict:
    """Probe a model; when it fails for a reason of its own, confirm once and retire it with the evidence."""
    model = reg.model(alias)
    first = run_probe(reg, model)
    record(db, first)
    out = {"model": alias, "probe": first.to_dict(), "retired": False}
    if first.ok or first.error_kind in NOT_THE_MODEL:
        return out
    served = still_served(reg, model)
    confirm = run_probe(reg, model, kind="confirm")
    record(db, confirm)
    out["confirm"] = confirm.to_dict()
    if confirm.ok or confirm.error_kind in NOT_THE_MODEL:
        return out
    why = "its endpoint no longer serves it" if served is False else "it stopped answering"
    reason = one_line(f"{why}: {confirm.error} (probes #{first.id}, #{confirm.id})")
    out["model_after"] = retire(reg, alias, reason).to_dict()
    out["retired"] = True
    log.info("retired %s: %s", alias, reason)
    return out


def still_served(reg: Registry, model: Model) -> bool | None:
    """Whether the endpoint's model list still names it; None when the list cannot be had."""
    try:
        listing = reg.provider(reg.endpoint(model.endpoint)).list_models()
    except BenchError:
        return None
    return any(m.get("id") == model.served for m in listing)


def retire(reg: Registry, alias: str, reason: str) -> Model:
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise BadRequest("A reason is required to retire a model.", "Say why, e.g. --reason 'slow and wrong'.")
    model = reg.model(alias)
    model.status, model.reason, model.retired_at = RETIRED, one_line(reason, 500), time.time()
    reg.save_model(model)
    return model


def restore(reg: Registry, alias: str) -> Model:
    model = reg.model(alias)
    if model.endpoint not in reg.endpoints():
        raise NotFound(f"Model {alias!r} cannot come back: its endpoint {model.endpoint!r} is gone.",
                       f"Add it again with `bench endpoint add {model.endpoint} --base URL`, then restore.")
    model.status, model.reason, model.retired_at = ACTIVE, None, None
    reg.save_model(model)
    return model


def probe_all(reg: Registry, db) -> list[dict]:
    """Check every active model the bench may call on its own (ad hoc ones are skipped)."""
    return [check(reg, db, m.alias) for m in list(reg.models().values()) if m.active and not m.ad_hoc]
