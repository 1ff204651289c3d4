"""The app: Request -> Response, callable in-process; guard, routing, auth and errors in the caller's shape."""
from __future__ import annotations

import html
import json
import logging
import threading
from urllib.parse import quote, urlencode

from .. import formats
from ..bench import Bench
from ..errors import BenchError, MethodNotAllowed, RateLimited, Unauthorized, WrongBaseURL
from ..redaction import redact
from ..server import guard
from ..server.gatewaykeys import keys_required
from ..server.messages import Request, Response
from ..server.routes import ADMIN, BENCH_SHAPE, GATEWAY, PUBLIC, Route, RouteTable, shape_for_path
from .table import build_table

log = logging.getLogger("benchwarmers.server")


class App:
    def __init__(self, bench: Bench, table: RouteTable | None = None):
        self.bench = bench
        self.table = table or build_table()
        self._inflight = 0
        # the count under a plain lock (a Condition's with and notify_all are Python calls, twice a request); the
        # Condition on the same lock is notified only when the count comes to 0, all wait_idle waits for
        self._count = threading.Lock()
        self._idle = threading.Condition(self._count)

    # -- the entry points ----------------------------------------------------------------------
    def handle(self, req: Request) -> Response:
        """One request, in-process: admitted, then served (each config file checked for a hand edit once)."""
        with self.bench.config.steady():
            admitted = self.admit(req)
            return admitted if isinstance(admitted, Response) else self.serve(req, admitted)

    def admit(self, req: Request) -> Route | Response:
        """Everything decided from the request line and headers (Host, Origin, the route, who is calling): the
        route, or the refusal to send. The HTTP handler calls this before it reads a byte of the body."""
        req.app = self
        shape = None   # the route's, once matched; else the path's (shape_for_path), worked out only for a refusal
        try:
            guard.check_host(req, self.bench.host, self.bench.public_hosts, self.bench.port)
            guard.check_origin(req)
            route, params = self.table.match(req.method, req.path, self.bench.role, self.origin(req))
            shape, req.params = route.shape, params
            self.authorize(req, route)
            return route
        except Unauthorized as err:
            shape = shape_for_path(req.path) if shape is None else shape
            if shape == "html" and req.method == "GET":   # a browser goes to the login page instead, and comes
                here = req.path + ("?" + urlencode(req.query) if req.query else "")   # back with its query
                return Response.redirect("/login?next=" + quote(here, safe="/"))
            return self.error_response(shape, err)
        except WrongBaseURL as err:   # a path of no API: answered in the shape of the API the client meant
            return self.error_response(err.shape, err)
        except BenchError as err:
            return self.error_response(shape_for_path(req.path) if shape is None else shape, err)

    def serve(self, req: Request, route: Route) -> Response:
        """Run an admitted request's handler; no traceback ever reaches the client."""
        with self._count:
            self._inflight += 1
        try:
            resp = route.handler(req, self.bench)
            if req.method == "HEAD":
                resp.body, resp.stream = b"", None
            return resp
        except BenchError as err:
            return self.error_response(route.shape, err)
        except Exception:
            log.exception("unhandled error on %s %s", req.method, req.path)
            return self.error_response(route.shape, BenchError(
                "The service hit an internal error; the log has details.",
                "Try again; if it repeats, report it with the log."))
        finally:
            with self._count:
                self._inflight -= 1
                if not self._inflight:
                    self._idle.notify_all()

    def authorize(self, req: Request, route: Route) -> None:
        """Who is calling. With an admin token set, admin routes need it; gateway routes need a gateway key (or the
        token) when keys are required (an admin token or require_keys), except a dashboard page's in-process call.
        An address that sent too many wrong secrets gets 429 before its next one is even compared."""
        token = self.bench.admin_token
        auth = route.auth or ADMIN            # a route nobody classified is an admin route
        needs_key = auth == GATEWAY and keys_required(token, self.bench.settings()) and not req.for_page
        logins = self.bench.logins
        if auth == PUBLIC or (not token and not needs_key):
            req.is_admin = guard.is_admin(req, token, logins)
            return
        guard.refuse_token_in_url(req, token)
        secret = guard.presented_key(req)
        credentialed = bool(secret or req.cookie(guard.SESSION_COOKIE))
        # A right credential passes the throttle: an app's own key or a session id (192 and 256 random bits, nothing
        # to guess), or the admin token, so a guesser behind the same address (every client is behind a hosting
        # platform's proxy) locks out neither the apps nor the admin.
        looked_up = bool(secret) and auth == GATEWAY and needs_key     # authenticate() needs the record anyway
        app_key = self.bench.gateway_keys.find(secret) if looked_up else None
        proof = guard.admin_proof(req, token, logins) if token else None
        if credentialed and app_key is None and proof is None:
            self.bench.guesses.check(req.client)
        req.is_admin = not token or proof is not None
        if proof == "session" and not (req.method in guard.SAFE_METHODS or route.shape == "html"
                                       or route.dashboard_only or req.for_page):
            guard.check_csrf_header(req)    # a cookie goes with any request a page makes; a header only with ours
        if (token and req.is_admin) or (auth == GATEWAY and not needs_key):
            return
        try:
            if auth == GATEWAY:
                req.caller = self.bench.gateway_keys.authenticate(secret, app_key)
                return
            guard.require_admin(req, token, logins)
        except Unauthorized:
            if credentialed and app_key is None and (looked_up or not self.bench.gateway_keys.find(secret)):
                self.bench.guesses.failed(req.client)
            raise

    def origin(self, req: Request) -> str:
        """The scheme and host the client used (its Host passed the check), else this server's own URL."""
        host = req.headers.get("host", "")
        return f"http://{host}" if host else self.bench.url

    def wait_idle(self, timeout: float) -> bool:
        """For shutdown: wait until no request is in flight."""
        with self._idle:
            return self._idle.wait_for(lambda: self._inflight == 0, timeout)

    # -- errors --------------------------------------------------------------------------------
    def error_response(self, shape: str, err: BenchError) -> Response:
        err.message = redact(err.message)
        headers = {}
        if isinstance(err, MethodNotAllowed):
            headers["Allow"] = ", ".join(err.allow)
        if err.retry_after is not None or isinstance(err, RateLimited):
            headers["Retry-After"] = str(max(1, int(round(err.retry_after or 1))))
        headers.update(getattr(err, "headers", None) or {})   # a budget's refusal: x-should-retry
        if shape == "html":
            page = (f"<!doctype html><title>{err.status}</title><h1>{err.status}</h1>"
                    f"<p>{html.escape(str(err))}</p><p><a href=\"/\">Home</a></p>")
            return Response.html(page, err.status, headers)
        if shape == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": None,
                    "error": {"code": -32603 if err.status >= 500 else -32600, "message": str(err)}}
        else:
            body = formats.error_body(BENCH_SHAPE if shape == "bench" else shape, err)
        return Response(err.status, json.dumps(body).encode(), {"Content-Type": "application/json", **headers})

