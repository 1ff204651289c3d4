"""GET /connect/{provider}/callback: where a sign-in with the user's own app comes back (the one URL the user
registered with their app, so `state` rides in the query, not the path); public for the same reason as
dashboard/signin.py's callback: the single-use state and the binding cookie stand in for the login."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..api.connect import failure, finish, known, record
from ..errors import BenchError, SigninRefused
from ..redaction import redact
from ..server.messages import Request, Response
from ..server.routes import PUBLIC, Route
from ..signin import appflow, ownapps
from ..signin.vendors import OAUTH
from .signin import SigninParts, claim, landing

if TYPE_CHECKING:
    from ..bench import Bench


def callback(req: Request, bench: SigninParts) -> Response:
    provider = known(req.params["provider"], bench)
    if provider.flow != OAUTH:
        raise SigninRefused(f"{provider.name} does not sign in through this callback.",
                            "Start the sign-in again from the Endpoints page.")
    state = req.query.get("state") or ""
    if not state:
        raise SigninRefused("The provider sent no state back.", "Start the sign-in again from the Endpoints page.")
    flow = claim(req, bench, provider, OAUTH, state)
    if req.query.get("error") or not req.query.get("code"):
        why = req.query.get("error_description") or req.query.get("error") or "it sent no code back"
        return landing(bench, flow, record(bench, failure(
            provider, f"{provider.name} did not approve the sign-in: {redact(why[:200])}.")))
    try:
        grant = appflow.exchange(provider, req.query["code"], flow, ownapps.client_secret(provider.id))
    except BenchError as err:
        return landing(bench, flow, record(bench, failure(provider, str(err))))
    return landing(bench, flow, finish(bench, provider, flow.endpoint, grant.token, flow.replace, grant))


ROUTES: list[Route[Bench]] = [
    Route("GET", "/connect/{provider}/callback", callback, "html", PUBLIC, dashboard_only=True)]
