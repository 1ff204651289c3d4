"""One small hierarchy of errors, each carrying its HTTP status, a code, a message and what to do next."""
from __future__ import annotations

import re
from enum import StrEnum


ENDS_A_SENTENCE = re.compile(r"[.!?][\"')\]`\u201d]*\s*$")


def sentence(text: str) -> str:
    """`text` ending as a sentence does: with a full stop unless it ends with one (or ! or ?) already."""
    text = text.rstrip()
    return text if not text or ENDS_A_SENTENCE.search(text) else text + "."


class BenchError(Exception):
    """A status and a code per class: a call site picks the subclass that says what went wrong."""
    status = 500
    code = "internal_error"

    def __init__(self, message: str, hint: str | None = None, *, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.retry_after = retry_after

    def __str__(self) -> str:
        """The message and its hint as sentences: a message made of a fragment ("x refused the connection") ends
        with a full stop before the hint starts. A message alone is left as it came (it may be an upstream's own
        words, echoed back)."""
        if not self.hint or not self.hint.strip():
            return self.message
        return f"{sentence(self.message)} {sentence(self.hint)}"

    def to_dict(self) -> dict:
        d: dict[str, str | float] = {"code": self.code, "message": str(self)}
        if self.retry_after is not None:
            d["retry_after"] = round(self.retry_after, 3)
        return d


class BadRequest(BenchError):
    status, code = 400, "invalid_request"


class NoAbleSeat(BadRequest):
    """Every seat of a panel was skipped (vision, context window, retired, ...): the ask is at fault."""
    code = "no_able_seat"


class EmptyCollection(BadRequest):
    code = "empty_collection"


class ToolsNeedRouteMode(BadRequest):
    code = "tools_need_route_mode"


class MissingHost(BadRequest):
    """HTTP/1.1 requires Host, and the rebinding check needs it."""
    code = "missing_host"


class SigninRefused(BadRequest):
    """A provider sign-in's way back that this service cannot take: unknown, used, expired or another browser's."""
    code = "signin_refused"


class Unauthorized(BenchError):
    status, code = 401, "unauthorized"


class Forbidden(BenchError):
    status, code = 403, "forbidden"


class BadHost(Forbidden):
    code = "bad_host"


class CrossOrigin(Forbidden):
    code = "cross_origin"


class CsrfFailed(Forbidden):
    """A dashboard form whose CSRF token does not match its cookie."""
    code = "csrf_failed"


class NotFound(BenchError):
    status, code = 404, "not_found"


class WrongBaseURL(NotFound):
    """A path a client built from a base URL that lacks its API's prefix or has it twice: answered in the error
    shape of the API it meant, with the base URL to use."""
    code = "wrong_base_url"

    def __init__(self, message: str, hint: str, shape: str):
        super().__init__(message, hint)
        self.shape = shape


class ModelNotFound(NotFound):
    code = "model_not_found"


class CollectionNotFound(NotFound):
    code = "collection_not_found"


class MethodNotAllowed(BenchError):
    status, code = 405, "method_not_allowed"

    def __init__(self, message: str, allow: list[str]):
        super().__init__(message)
        self.allow = allow


class Conflict(BenchError):
    status, code = 409, "conflict"


class ModelHeld(Conflict):
    """A free model that turned paid: not seated or probed until the user confirms the new price."""
    code = "model_held"


class NotHeld(Conflict):
    """A confirm for a model that is not held."""
    code = "not_held"


class PayloadTooLarge(BenchError):
    status, code = 413, "payload_too_large"


class RateLimited(BenchError):
    status, code = 429, "rate_limited"


class FaultKind(StrEnum):
    """How an upstream call went wrong; str-valued, so JSON and codes (`upstream_<kind>`) read as before."""
    AUTH = "auth"                    # the key was refused
    NOT_FOUND = "not_found"          # no such model, or a wrong base URL
    RATE_LIMITED = "rate_limited"
    SERVER = "server"                # the upstream failed on its side
    TIMEOUT = "timeout"
    CONNECTION = "connection"        # nothing answered, TLS, DNS, proxy
    DROPPED = "dropped"              # the answer was cut short
    BAD_RESPONSE = "bad_response"    # not the protocol we speak (or an empty answer)
    BAD_REQUEST = "bad_request"      # the upstream refused the request as sent
    CLIENT = "client"                # the client chosen to call members cannot (llm missing, or no such llm model)


# What to do next, per fault kind: the one table behind seat errors, endpoint checks, probes and onboarding.
ADVICE = {
    FaultKind.AUTH: "The key was refused for endpoint {name!r}: check it (or {env}), or run "
                    "`bench endpoint add {name} --base {base} --replace` with the right one.",
    FaultKind.NOT_FOUND: "Check the served model name, the base URL (OpenAI-compatible ones usually end in /v1) "
                         "and the protocol ({api}); `bench candidates` lists what each endpoint serves.",
    FaultKind.RATE_LIMITED: "The endpoint {name!r} is rate-limiting: wait{wait} and try again.",
    FaultKind.SERVER: "The endpoint failed on its side: try again later.",
    FaultKind.TIMEOUT: "{base} did not answer in time: check the server, or try again later "
                       "(slow models need a larger seat_timeout).",
    FaultKind.CONNECTION: "Nothing answered at {base}: check the base URL, that the server is running, and "
                          "HTTPS_PROXY / NO_PROXY (proxy credentials go in the URL).",
    FaultKind.DROPPED: "The connection broke mid-answer: try again.",
    FaultKind.BAD_RESPONSE: "The answer was not the {api} protocol: check the endpoint's protocol (--api) and its "
                            "base URL.",
    FaultKind.BAD_REQUEST: "The endpoint refused the request as sent; its message says which part.",
    FaultKind.CLIENT: "The client that calls members (the `client` setting, or BENCH_CLIENT) cannot make this call: "
                      "its message says why.",
}


def key_env(endpoint: str) -> str:
    """The environment variable that holds an endpoint's key (BENCHWARMERS_KEY_<NAME>), as the advice names it."""
    return "BENCHWARMERS_KEY_" + re.sub(r"[^A-Z0-9]", "_", endpoint.upper())


def advice(kind: FaultKind, *, name: str, base: str, api: str, retry_after: float | None = None) -> str:
    """The advice for a fault of an endpoint, with its name, base URL, protocol and key variable filled in."""
    wait = f" {retry_after:.0f} s" if retry_after else " a while"
    return ADVICE[FaultKind(kind)].format(name=name, base=base, api=api, env=key_env(name), wait=wait)


class UpstreamFailed(BenchError):
    """An upstream call went wrong; `kind` (a FaultKind) says how."""
    status, code = 502, "upstream_failed"

    def __init__(self, kind: FaultKind, message: str, hint: str | None = None, *,
                 upstream_status: int | None = None, retry_after: float | None = None, reset_at: float | None = None,
                 scope: str | None = None):
        super().__init__(message, hint, retry_after=retry_after)
        self.kind = FaultKind(kind)
        self.code = f"upstream_{self.kind.value}"
        self.upstream_status = upstream_status
        self.reset_at = reset_at         # epoch seconds when a rate limit resets, when known
        self.scope = scope               # a rate limit's: "key" (the whole connection) or "model" (the one asked)
        if self.kind is FaultKind.TIMEOUT:
            self.status = 504

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["kind"] = self.kind.value
        if self.upstream_status:
            d["upstream_status"] = self.upstream_status
        return d


class QuotaRefused(UpstreamFailed):
    """A call not sent: a rate limit is used up, and it resets later than the call may wait. Its message is the
    seat's words: 'rate limited: resets at T (...)'."""

    def __init__(self, message: str, reset_at: float, now: float):
        super().__init__(FaultKind.RATE_LIMITED, message, "Nothing was sent. Wait for the reset, or change the limit "
                         "(bench limits).", retry_after=max(reset_at - now, 0.0), reset_at=reset_at)
        self.status, self.code = 429, RateLimited.code


class AllSeatsFailed(BenchError):
    """A panel where no seat answered."""
    status, code = 502, "all_seats_failed"


class AllMembersFailed(BenchError):
    """A route-mode turn where every able member failed before replying."""
    status, code = 502, "all_members_failed"


class Timeout(BenchError):
    status, code = 504, "timeout"


class Unavailable(BenchError):
    status, code = 503, "unavailable"


class StoreFailing(Unavailable):
    """The record store cannot commit (a full disk): writes fail until it can again."""
    code = "store_failing"


class NoRoom(BenchError):
    """Not enough free disk for what was asked (a compaction), said before it starts, with how much it needs."""
    status, code = 507, "insufficient_storage"


class NoMemberAvailable(Unavailable):
    """A route-mode turn no member can take (none with tools, all resting, ...)."""
    code = "no_member_available"


class ConfigError(BenchError):
    """A config file that cannot be read: names the file, line and column."""
    status, code = 500, "config_error"
