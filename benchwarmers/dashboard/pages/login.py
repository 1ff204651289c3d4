"""Log in with the admin token once; a session cookie (HttpOnly, SameSite=Strict) carries it after. Log out."""
from __future__ import annotations

import hmac

from ...server.bench import Bench
from ...server.guard import SESSION_COOKIE, session_value
from ...server.messages import Request, Response
from .. import web
from ..render import page
from ..widgets import csrf, hidden

CLEAR = f"{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"


def show(req: Request, bench: Bench, error: str = "", status: int = 200, nxt: str | None = None) -> Response:
    frame = web.frame(req, bench)
    frame.logout = False
    if error:
        frame.flashes.append(("error", error))
    nxt = web.safe_local(nxt or req.query.get("next")) or "/"
    body = (f'<form class="card login stack" method="post" action="/login">{csrf(frame)}'
            '<p>This service has an admin token. Enter it once to use the dashboard on this browser.</p>'
            '<label for="token">Admin token</label>'
            '<input id="token" type="password" name="token" autocomplete="current-password" required autofocus>'
            f'{hidden("next", nxt)}<div class="form-end"><button type="submit">Log in</button></div></form>')
    return page("Log in", body, frame, nav_items=[], nav="", version=bench.version, json_link="",
                status=status)


def submit(req: Request, bench: Bench) -> Response:
    form = web.read_form(req)
    web.check_csrf(req, form)
    if not bench.admin_token:
        return Response.redirect("/")
    token = form.get("token")
    bench.guesses.check(req.client)        # 429 for an address that guessed too often, before comparing
    if not hmac.compare_digest(token.encode(), bench.admin_token.encode()):
        bench.guesses.failed(req.client)
        return show(req, bench, "That is not the admin token.", status=401, nxt=form.get("next"))
    cookie = f"{SESSION_COOKIE}={session_value(bench.admin_token)}; HttpOnly; SameSite=Strict; Path=/"
    return Response.redirect(web.safe_local(form.get("next")) or "/", {"Set-Cookie": cookie})


def logout(req: Request, bench: Bench) -> Response:
    web.check_csrf(req, web.read_form(req))
    return Response.redirect("/login", {"Set-Cookie": CLEAR})
