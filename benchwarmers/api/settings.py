"""/bench/settings: every setting with its value, default and help; change the ones settings.json holds."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..core.calling import LLM, client_in_use
from ..errors import BadRequest, ConfigError
from ..providers import llmcalls
from ..server.messages import Request, Response
from ..server.openapi import obj, op
from ..server.routes import ADMIN, Route
from ..settings import SETTINGS, coerce
from ..store import Config
from .parts import EffectiveSettings

if TYPE_CHECKING:
    from ..bench import Bench


class SettingsParts(EffectiveSettings, Protocol):
    config: Config


def settings_view(bench: SettingsParts) -> dict:
    try:
        stored, problem = bench.config.view("settings.json"), None
    except ConfigError as e:     # a broken hand edit: defaults serve, and the page says why
        stored, problem = {}, e.message
    values = bench.settings()
    return {"settings": [{"name": s.name, "value": values[s.name], "default": s.default, "type": s.type.__name__,
                          "help": s.help, "restart": s.restart, "set": s.name in stored}
                         for s in SETTINGS.values()],
            "file": str(bench.config.path("settings.json")), "problem": problem, "client": client_view(values)}


def client_view(values: dict) -> dict:
    """Who makes member calls and what chose it; whether llm is here and usable; what the llm path leaves out."""
    client, chosen_by = client_in_use(values)
    return {"in_use": client, "chosen_by": chosen_by, "llm_version": llmcalls.installed(),
            "problem": llmcalls.problem() if client == LLM else None, "llm_not_covered": list(llmcalls.NOT_COVERED)}


def get_settings(req: Request, bench: SettingsParts) -> Response:
    return Response.json(settings_view(bench))


def post_settings(req: Request, bench: SettingsParts) -> Response:
    """{name: value}: each checked against its declaration; null takes the setting back to its default."""
    body = req.json()
    if not body:
        raise BadRequest("Name at least one setting to change.", 'e.g. {"seat_timeout": 120}')
    changes = {}
    for name, value in body.items():
        if name not in SETTINGS:
            coerce(name, value)          # says which settings exist
        changes[name] = None if value is None else coerce(name, value)

    def apply(data: dict) -> None:
        for name, value in changes.items():
            if value is None:
                data.pop(name, None)
            else:
                data[name] = value
    bench.config.update("settings.json", apply)
    return Response.json(settings_view(bench))


SETTINGS_VIEW = obj(("settings", "file"), settings={"type": "array"}, file={"type": "string"})
ROUTES: list[Route[Bench]] = [
    Route("GET", "/bench/settings", get_settings, "bench", ADMIN, doc=op(
        "Every setting with its value, default, type and help, and which client makes member calls.",
        ok=SETTINGS_VIEW)),
    Route("POST", "/bench/settings", post_settings, "bench", ADMIN, doc=op(
        "Change settings: {name: value}, each checked against its declaration (null: back to the default).",
        body=obj(), ok=SETTINGS_VIEW)),
]
