"""Log in with the admin token once; a session cookie (HttpOnly, SameSite=Strict) carries it after."""
from __future__ import annotations

import hmac

from ...server.bench import Bench
from ...server.guard import SESSION_COOKIE, session_value
from ...server.messages import Request, Response
from ..render import e, page

FORM = """<form class="login" method="post" action="/login">
<p>This service has an admin token. Enter it once to use the dashboard.</p>
{error}<p><label>Admin token<br><input type="password" name="token" autocomplete="current-password" autofocus></label></p>
<input type="hidden" name="next" value="{next}">
<p><button type="submit">Log in</button></p></form>"""


def show(req: Request, bench: Bench, error: str = "", status: int = 200) -> Response:
    nxt = req.query.get("next") or "/"
    body = FORM.format(error=f'<p class="error">{e(error)}</p>' if error else "", next=e(safe_next(nxt)))
    return page("Log in", body, version=bench.version, path="/login", status=status)


def safe_next(nxt: str) -> str:
    """Only a local path, so the login form cannot send someone elsewhere or forge a header: one leading '/', then
    printable ASCII without a backslash (browsers read '/\\evil' and '/<tab>/evil' as '//evil')."""
    ok = (isinstance(nxt, str) and nxt.startswith("/") and nxt[1:2] not in ("/", "\\") and len(nxt) <= 2000
          and all("!" <= c <= "~" and c != "\\" for c in nxt))
    return nxt if ok else "/"


def submit(req: Request, bench: Bench) -> Response:
    if not bench.admin_token:
        return Response.redirect("/")
    form = req.form()
    token = form.get("token", "")
    bench.guesses.check(req.client)        # 429 for an address that guessed too often, before comparing
    if not hmac.compare_digest(token.encode(), bench.admin_token.encode()):
        bench.guesses.failed(req.client)
        return show(req, bench, "That is not the admin token.", status=401)
    cookie = f"{SESSION_COOKIE}={session_value(bench.admin_token)}; HttpOnly; SameSite=Strict; Path=/"
    return Response.redirect(safe_next(form.get("next", "/")), {"Set-Cookie": cookie})


def logout(req: Request, bench: Bench) -> Response:
    return Response.redirect("/login", {"Set-Cookie": f"{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"})
