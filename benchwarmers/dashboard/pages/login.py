"""Log in with the admin token once; a session cookie (HttpOnly, SameSite=Strict, a random id the service keeps, see
server/logins.py) carries the login after. Log out ends the session."""
from __future__ import annotations

import hmac
from typing import Protocol

from ...server.guard import SESSION_COOKIE
from ...server.logins import SESSION_MOST
from ...server.messages import Request, Response
from ...server.throttle import Guesses
from .. import web
from ..markup import html
from ..render import page
from ..widgets import csrf, hidden


class LoginPageParts(web.FrameParts, Protocol):
    """Signing in: the admin token, the sessions, the throttle on guessing."""
    guesses: Guesses
    version: str


def show(req: Request, bench: LoginPageParts, error: str = "", status: int = 200, nxt: str | None = None) -> Response:
    frame = web.frame(req, bench)
    frame.logout = False
    if error:
        frame.flashes.append(("error", error))
    nxt = web.safe_local(nxt or req.query.get("next")) or "/"
    body = html('<form class="card login stack" method="post" action="/login">$csrf'
                "<p>This service has an admin token. Enter it once to use the dashboard on this browser.</p>"
                '<label for="token">Admin token</label>'
                '<input id="token" type="password" name="token" autocomplete="current-password" required autofocus>'
                '$next<div class="form-end"><button type="submit">Log in</button></div></form>', csrf=csrf(frame),
                next=hidden("next", nxt))
    return page("Log in", body, frame, nav_items=[], nav="", version=bench.version, json_link="",
                status=status)


def submit(req: Request, bench: LoginPageParts) -> Response:
    form = web.read_form(req)
    web.check_csrf(req, form)
    if not bench.admin_token:
        return Response.redirect("/")
    token = form.get("token")
    if not hmac.compare_digest(token.encode(), bench.admin_token.encode()):
        bench.guesses.check(req.client)     # 429 for an address that guessed too often: this wrong one not counted
        bench.guesses.failed(req.client)
        return show(req, bench, "That is not the admin token.", status=401, nxt=form.get("next"))
    # The right token gets in even from a throttled address. A new session id, and a new CSRF token: any value a
    # page planted in this browser before the login is worth nothing after it.
    session = web.cookie(req, SESSION_COOKIE, bench.logins.start(), max_age=SESSION_MOST)
    _, csrf_cookie = web.new_csrf(req)
    return Response.redirect(web.safe_local(form.get("next")) or "/", {"Set-Cookie": [csrf_cookie, session]})


def logout(req: Request, bench: LoginPageParts) -> Response:
    web.check_csrf(req, web.read_form(req))
    bench.logins.end(req.cookie(SESSION_COOKIE))       # the cookie is worth nothing from now, wherever it was copied
    return Response.redirect("/login", {"Set-Cookie": web.cookie(req, SESSION_COOKIE, "", max_age=0)})
