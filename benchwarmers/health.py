"""Model health: one-word probes recorded in `probes`, retirement after a confirming failure, and restore."""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

from . import healthrecord, keys
from .canonical import Ask, Message, Text
from .errors import BadRequest, BenchError, NotFound, UpstreamFailed
from .providers.transport import Timeouts
from .registry import ACTIVE, RETIRED, Endpoint, Model, Registry

log = logging.getLogger("benchwarmers.health")

PROBE_PROMPT = "Reply with exactly one word: ready"
PROBE_MAX_TOKENS = 512        # room for models that think before their one word
OK, FAILED, TIMEOUT = "ok", "failed", "timeout"
# Failures that say nothing about the model itself: a refused key or a rate limit never retires a model.
NOT_THE_MODEL = {"auth", "rate_limited"}

# What to do next, per fault kind, when checking an endpoint or onboarding a model.
ADVICE = {
    "auth": "The key was refused: check it, then run `bench endpoint add {name} --base {base} --replace` "
            "with the right one (or fix {env}).",
    "connection": "Nothing answered at {base}: check the base URL and that the server is running.",
    "timeout": "{base} did not answer in time: check the server, or try again later.",
    "not_found": "Check the base URL (OpenAI-compatible ones usually end in /v1) and --api ({api}); "
                 "`bench candidates` lists what each endpoint serves.",
    "bad_response": "The answer was not the {api} protocol: check --api and the base URL.",
    "dropped": "The connection broke mid-answer: try again.",
    "rate_limited": "The endpoint is rate-limiting: wait{wait} and try again.",
    "server": "The endpoint failed on its side: try again later.",
    "bad_request": "The endpoint refused the request as sent; its message above says which part.",
}


def registry(ctx) -> Registry:
    """The service's one Registry."""
    return ctx.service("registry", lambda c: Registry(c.config))


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
    error_kind: str | None = None    # the fault kind: decides retirement
    upstream_status: int | None = None   # the HTTP status the endpoint answered with, when it answered
    reset_at: float | None = None    # a rate limit's reset (not stored: it rests the endpoint)

    @classmethod
    def from_row(cls, row) -> "Probe":
        return cls(row["model"], row["kind"], row["status"], row["answer"], row["error"], row["seconds"],
                   row["ttft"], row["input_tokens"] or 0, row["output_tokens"] or 0, row["created"], row["id"],
                   row["error_kind"], row["upstream_status"])

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("reset_at")
        for k in ("seconds", "ttft"):
            d[k] = round(d[k], 3) if d[k] is not None else None
        return d

    @property
    def ok(self) -> bool:
        return self.status == OK


def one_line(text: str, limit: int = 400) -> str:
    text = " ".join(keys.redact(str(text or "")).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def advice(kind: str, endpoint: Endpoint, retry_after: float | None = None) -> str:
    wait = f" {retry_after:.0f} s" if retry_after else " a while"
    return ADVICE.get(kind, "Try again later.").format(
        name=endpoint.name, base=endpoint.base_url, api=endpoint.api, env=keys.env_name(endpoint.name), wait=wait)


def explain(exc: UpstreamFailed, endpoint: Endpoint, doing: str) -> UpstreamFailed:
    """The fault as one line that says what failed and what to do next; never the key."""
    key = endpoint.key()[0] if not endpoint.no_key else None
    message = one_line(keys.redact(f"{doing}: {exc.message}", (key,) if key else ())).rstrip(".") + "."
    out = UpstreamFailed(exc.kind, message, advice(exc.kind, endpoint, exc.retry_after),
                         upstream_status=exc.upstream_status, retry_after=exc.retry_after, reset_at=exc.reset_at)
    out.status = exc.status
    return out


# ---- probing -----------------------------------------------------------------------------------

def probe_ask() -> Ask:
    return Ask(messages=[Message("user", [Text(PROBE_PROMPT)])], max_tokens=PROBE_MAX_TOKENS)


class Direct:
    """Calls as the user's own asks make them: the registry's providers and pooled connections. The scheduler
    passes its paced caller instead, with the same two methods."""

    def __init__(self, reg: Registry):
        self.reg = reg

    def complete(self, model: Model, ask: Ask, timeouts):
        return self.reg.provider(self.reg.endpoint(model.endpoint)).complete(ask, model.served, timeouts=timeouts)

    def list_models(self, endpoint: Endpoint) -> list[dict]:
        return self.reg.provider(endpoint).list_models()


def run_probe(reg: Registry, model: Model, kind: str = "probe", timeouts=None, caller=None) -> Probe:
    """Send the one-word prompt; every outcome becomes a Probe (nothing is raised for a model's fault)."""
    started = time.monotonic()
    probe = Probe(model.alias, kind, FAILED, created=time.time())
    try:
        reg.endpoint(model.endpoint)
        if timeouts is None:
            timeouts = Timeouts(connect=10, first_byte=90, idle=60)
        answer = (caller or Direct(reg)).complete(model, probe_ask(), timeouts)
    except UpstreamFailed as e:
        probe.status = TIMEOUT if e.kind == "timeout" else FAILED
        probe.error, probe.error_kind = one_line(e.message), e.kind
        probe.upstream_status, probe.reset_at = e.upstream_status, healthrecord.reset_of(e)
    except BenchError as e:          # e.g. its endpoint was removed
        probe.error, probe.error_kind = one_line(str(e)), "not_found"
    else:
        probe.answer = (answer.text or "").strip()[:200]
        probe.ttft, probe.input_tokens = answer.ttft, answer.usage.input_tokens
        probe.output_tokens = answer.usage.output_tokens
        if probe.answer:
            probe.status = OK
        else:
            probe.error, probe.error_kind = "answered with no text", "empty"
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


def latest(db) -> dict[str, dict]:
    """alias -> its most recent probe, for the roster."""
    rows = db.query("SELECT p.* FROM probes p JOIN (SELECT model, MAX(id) AS id FROM probes GROUP BY model) m "
                    "ON p.id = m.id")
    return {r["model"]: Probe.from_row(r).to_dict() for r in rows}


def resting_until(db, model: Model, now: float | None = None) -> float | None:
    """When a rate-limited model's connection may be called again, from the `ratelimits` table.

    Hook: whoever enforces limits writes `ratelimits.resting_until` per endpoint; until then this is None
    and the model shows as active."""
    now = time.time() if now is None else now
    try:
        row = db.one("SELECT resting_until FROM ratelimits WHERE endpoint = ?", (model.endpoint,))
    except Exception:   # table shape owned elsewhere: a missing column must not break the roster
        return None
    until = row["resting_until"] if row else None
    return float(until) if until and until > now else None


# ---- checking, retiring, restoring -----------------------------------------------------------------

def check(ctx, alias: str, caller=None, served=None) -> dict:
    """Probe a model; when it fails for a reason of its own, confirm once and retire it with the evidence.
    `caller` sends the calls (default: as the user's asks do); `served()` gives its endpoint's list, or None when
    it cannot be had (default: ask the endpoint, only once the probe has failed)."""
    reg = registry(ctx)
    model = reg.model(alias)
    first = probe_and_note(ctx, reg, model, "probe", caller)
    out = {"model": alias, "probe": first.to_dict(), "retired": False}
    if first.ok or first.error_kind in NOT_THE_MODEL:
        return out
    served = served() if served else listing(reg, model, caller)
    confirm = probe_and_note(ctx, reg, model, "confirm", caller)
    out["confirm"] = confirm.to_dict()
    if confirm.ok or confirm.error_kind in NOT_THE_MODEL:
        return out
    holds = None if served is None else model.served in served
    why = "its endpoint no longer serves it" if holds is False else "it stopped answering"
    reason = one_line(f"{why}: {confirm.error} (probes #{first.id}, #{confirm.id})")
    evidence = {"probes": [first.to_dict(), confirm.to_dict()],
                "listing": None if served is None else {"endpoint": model.endpoint, "holds_it": holds,
                                                        "count": len(served), "models": sorted(served)[:1000]}}
    out["model_after"] = retire(reg, alias, reason).to_dict()
    healthrecord.keep_retirement(ctx.db, alias, reason, evidence)
    out["retired"] = True
    log.info("retired %s: %s", alias, reason)
    return out


def probe_and_note(ctx, reg: Registry, model: Model, kind: str, caller=None) -> Probe:
    """One probe, recorded, and what it says about the endpoint noted (a refused key, a rate limit)."""
    probe = run_probe(reg, model, kind, caller=caller)
    record(ctx.db, probe)
    healthrecord.note(ctx, model.endpoint, probe)
    return probe


def listing(reg: Registry, model: Model, caller=None) -> list[str] | None:
    """The served names its endpoint lists now; None when the list cannot be had."""
    try:
        return served_names((caller or Direct(reg)).list_models(reg.endpoint(model.endpoint)))
    except BenchError:
        return None


def served_names(entries: list[dict]) -> list[str]:
    return [m["id"] for m in entries if isinstance(m.get("id"), str)]


def retire(reg: Registry, alias: str, reason: str) -> Model:
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise BadRequest("A reason is required to retire a model.", "Say why, e.g. --reason 'slow and wrong'.")
    model = reg.model(alias)
    model.status, model.reason, model.retired_at = RETIRED, one_line(reason, 500), time.time()
    reg.save_model(model)
    return model


def restore(ctx, alias: str) -> tuple[Model, Probe | None]:
    """Bring a retired model back once it answers a probe; an active one is left as it is, with no call."""
    reg = registry(ctx)
    model = reg.model(alias)
    if model.active:
        return model, None
    if model.endpoint not in reg.endpoints():
        raise NotFound(f"Model {alias!r} cannot come back: its endpoint {model.endpoint!r} is gone.",
                       f"Add it again with `bench endpoint add {model.endpoint} --base URL`, then restore.")
    probe = probe_and_note(ctx, reg, model, "restore")
    if not probe.ok:
        kind = probe.error_kind if probe.error_kind in UpstreamFailed.kinds else "bad_response"
        raise UpstreamFailed(kind, f"{alias!r} did not answer its probe ({probe.error}), so it stays retired.",
                             advice(kind, reg.endpoint(model.endpoint), probe.reset_at and probe.reset_at - time.time()),
                             upstream_status=probe.upstream_status)
    model.status, model.reason, model.retired_at = ACTIVE, None, None
    reg.save_model(model)
    return model, probe


def probe_all(ctx) -> list[dict]:
    """Check every active model the bench may call on its own (ad hoc ones are skipped)."""
    reg = registry(ctx)
    return [check(ctx, m.alias) for m in list(reg.models().values()) if m.active and not m.ad_hoc]
