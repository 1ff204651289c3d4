"""One small hierarchy of errors, each carrying its HTTP status, a code, a message and what to do next."""
from __future__ import annotations


class BenchError(Exception):
    status = 500
    code = "internal_error"

    def __init__(self, message: str, hint: str | None = None, *, retry_after: float | None = None,
                 code: str | None = None, status: int | None = None, details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.retry_after = retry_after
        self.details = details or {}
        if code:
            self.code = code
        if status:
            self.status = status

    def __str__(self) -> str:
        return f"{self.message} {self.hint}" if self.hint else self.message

    def to_dict(self) -> dict:
        d = {"code": self.code, "message": str(self)}
        if self.retry_after is not None:
            d["retry_after"] = round(self.retry_after, 3)
        return d


class BadRequest(BenchError):
    status, code = 400, "invalid_request"


class Unauthorized(BenchError):
    status, code = 401, "unauthorized"


class Forbidden(BenchError):
    status, code = 403, "forbidden"


class NotFound(BenchError):
    status, code = 404, "not_found"


class MethodNotAllowed(BenchError):
    status, code = 405, "method_not_allowed"

    def __init__(self, message: str, allow: list[str]):
        super().__init__(message)
        self.allow = allow


class Conflict(BenchError):
    status, code = 409, "conflict"


class PayloadTooLarge(BenchError):
    status, code = 413, "payload_too_large"


class RateLimited(BenchError):
    status, code = 429, "rate_limited"


class UpstreamFailed(BenchError):
    """An upstream call went wrong; `kind` says how (auth, not_found, rate_limited, server, ...)."""
    status, code = 502, "upstream_failed"
    kinds = ("auth", "not_found", "rate_limited", "server", "timeout", "connection", "dropped",
             "bad_response", "bad_request")

    def __init__(self, kind: str, message: str, hint: str | None = None, *, upstream_status: int | None = None,
                 retry_after: float | None = None, reset_at: float | None = None):
        super().__init__(message, hint, retry_after=retry_after, code=f"upstream_{kind}")
        self.kind = kind
        self.upstream_status = upstream_status
        self.reset_at = reset_at         # epoch seconds when a rate limit resets, when known
        if kind == "timeout":
            self.status = 504

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["kind"] = self.kind
        if self.upstream_status:
            d["upstream_status"] = self.upstream_status
        return d


class Timeout(BenchError):
    status, code = 504, "timeout"


class Unavailable(BenchError):
    status, code = 503, "unavailable"


class ConfigError(BenchError):
    """A config file that cannot be read: names the file, line and column."""
    status, code = 500, "config_error"
