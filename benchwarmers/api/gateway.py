"""The gateway routes: every client format asking a panel (`bench/<c>`, `:merged`), a model alias, or route mode."""
from __future__ import annotations

from .. import formats
from ..canonical import ROUTE, Text, estimate_tokens
from ..core.route import TurnReply
from ..errors import BadRequest, NotFound
from ..formats.base import ReplyInfo, RequestInfo
from ..server.bench import Bench
from ..server.guard import presented_key
from ..server.messages import Request, Response
from ..server.routes import GATEWAY, Route


def check_reach(req: Request, target) -> None:
    """A gateway key reaches only its collections; asking a model alias directly needs a key for '*'."""
    key = req.caller
    if key is None:
        return
    if target.mode == "direct":
        if "*" not in key.collections:
            raise NotFound(f"The key {key.name!r} cannot ask models directly.",
                           "Ask one of its collections: " + ", ".join(f"bench/{c}" for c in key.collections))
        return
    key.check_collection(target.name)


def serve_ask(fmt_name: str, req: Request, bench: Bench, info: RequestInfo) -> Response:
    """Parse in the client's format, run the panel (or route mode), answer in the same format."""
    fmt = formats.get(fmt_name)
    ask = fmt.parse(req.json(), info)
    if not ask.target or not ask.target.name:
        raise BadRequest("No model named.", "Send model: bench/<collection> (see GET /v1/models).")
    check_reach(req, ask.target)
    if not has_content(ask):
        return nothing_to_answer(fmt_name, req, bench, ask, info)
    ask.caller = req.caller.name if req.caller else None
    if "anthropic-beta" in req.headers:   # forwarded only when an Anthropic member gets the body as it came
        ask.passthrough_headers["anthropic-beta"] = req.headers["anthropic-beta"]
    if ask.target.mode == ROUTE:
        return render_turn(fmt, bench.router.take(ask, info.headers, presented_key(req)), ReplyInfo.for_ask(ask, info))
    run = bench.panel.start(ask)
    headers = {"x-bench-panel": run.id}
    reply = ReplyInfo.for_ask(ask, info)
    if ask.stream:
        return Response.streaming(fmt.stream(bench.panel.events(run), reply),
                                  formats.stream_content_type(fmt, reply), headers)
    answer = bench.panel.whole(run)
    reply.extra = run.bench()
    return Response.json(fmt.render(answer, reply), headers=headers)


def render_turn(fmt, turn: TurnReply, reply: ReplyInfo) -> Response:
    """A route-mode turn in the caller's format: its member's stream, or its whole answer with the `bench` data."""
    headers = {"x-bench-call": turn.call, "x-bench-model": turn.model}
    if turn.events is not None:
        return Response.streaming(fmt.stream(turn.events, reply), formats.stream_content_type(fmt, reply), headers)
    reply.extra = turn.bench
    return Response.json(fmt.render(turn.answer, reply), headers=headers)


CONVERSATION = {"openai_chat": "messages", "openai_responses": "input", "openai_completions": "prompt",
                "anthropic": "messages", "gemini": "contents", "ollama": "messages"}


def has_content(ask) -> bool:
    return any(not isinstance(p, Text) or p.text for m in ask.messages for p in m.parts)


def nothing_to_answer(fmt_name: str, req: Request, bench: Bench, ask, info: RequestInfo) -> Response:
    """An empty conversation asks no one: Ollama's "load the model" request is answered as Ollama does, others 400."""
    if fmt_name == "ollama":
        if ask.target.requested not in model_names(req, bench):
            raise NotFound(f"model {ask.target.requested!r} not found",
                           "GET /api/tags lists what this service answers as.")
        return Response.json(formats.get("ollama").load_reply(ReplyInfo.for_ask(ask, info)))
    field = CONVERSATION.get(fmt_name, "messages")
    raise BadRequest(f"Nothing to answer: `{field}` holds no content.", f"Send the question in `{field}`.")


def _info(req: Request, **kw) -> RequestInfo:
    return RequestInfo(req.path, req.query, req.headers, **kw)


def ask_handler(fmt_name: str):
    def handler(req: Request, bench: Bench) -> Response:
        return serve_ask(fmt_name, req, bench, _info(req))
    handler.__name__ = f"ask_{fmt_name}"
    return handler


def gemini_action(req: Request, bench: Bench) -> Response:
    """POST /v1beta/models/{model}:generateContent | :streamGenerateContent | :countTokens."""
    model, _, action = req.params["model"].rpartition(":")
    if action == "countTokens":
        ask = formats.get("gemini").parse(req.json(), _info(req, path_model=model))
        require_listed(req, bench, model)
        return Response.json({"totalTokens": estimate_tokens(ask.prompt_text())})
    if action not in ("generateContent", "streamGenerateContent") or not model:
        raise NotFound(f"Unknown Gemini method {action!r}.",
                       "Use models/bench/<collection>:generateContent or :streamGenerateContent.")
    return serve_ask("gemini", req, bench, _info(req, path_model=model,
                                                stream_route=action == "streamGenerateContent"))


# -- model lists ---------------------------------------------------------------------------------

def model_names(req: Request, bench: Bench) -> list[str]:
    """bench/<c>, :merged and :route for each collection the caller reaches, then every alias (keys for '*')."""
    key = req.caller
    names = []
    for c in sorted(bench.collections.all()):
        if key is None or key.allows(c):
            names += [f"bench/{c}", f"bench/{c}:merged", f"bench/{c}:route"]
    if key is None or "*" in key.collections:
        names += sorted(a for a, m in bench.registry.models().items() if m.active)
    return names


def openai_models(req: Request, bench: Bench) -> Response:
    """The OpenAI shape, or Anthropic's for a client that sends anthropic-version (the same path in both APIs)."""
    fmt = "anthropic" if "anthropic-version" in req.headers else "openai_chat"
    return Response.json(formats.get(fmt).models_list(model_names(req, bench)))


def openai_model(req: Request, bench: Bench) -> Response:
    """GET /v1/models/{id}: what the OpenAI SDK's models.retrieve asks."""
    name = req.params["model"]
    if name not in model_names(req, bench):
        raise NotFound(f"The model {name!r} does not exist here.", "GET /v1/models lists what this service answers.")
    return Response.json(formats.get("openai_chat").models_list([name])["data"][0])


def gemini_models(req: Request, bench: Bench) -> Response:
    return Response.json(formats.get("gemini").models_list(model_names(req, bench)))


def ollama_tags(req: Request, bench: Bench) -> Response:
    return Response.json(formats.get("ollama").tags([{"name": n} for n in model_names(req, bench)]))


def ollama_version(req: Request, bench: Bench) -> Response:
    return Response.json(formats.get("ollama").version())


def ollama_show(req: Request, bench: Bench) -> Response:
    body = req.json()
    name = body.get("model") or body.get("name")
    if not isinstance(name, str) or name not in model_names(req, bench):
        raise NotFound(f"model {name!r} not found", "GET /api/tags lists what this service answers as.")
    return Response.json(formats.get("ollama").show(name, {}))


def require_listed(req: Request, bench: Bench, name) -> None:
    """Token counts are only for names this caller could ask (a typo should not get a cheerful estimate)."""
    if name not in model_names(req, bench):
        raise NotFound(f"The model {name!r} does not exist here.", "GET /v1/models lists what this service answers.")


def anthropic_count_tokens(req: Request, bench: Bench) -> Response:
    body = req.json()
    counted = formats.get("anthropic").count_tokens(body)   # validates the body first (400s before 404s)
    require_listed(req, bench, body.get("model"))
    return Response.json(counted)


def responses_get(req: Request, bench: Bench) -> Response:
    raise NotFound(f"Response {req.params['id']!r} is not stored: this gateway stores no responses.",
                   "Send the whole conversation as input on each request (store is ignored).")


ROUTES = [
    Route("POST", "/v1/chat/completions", ask_handler("openai_chat"), "openai", GATEWAY),
    Route("POST", "/v1/completions", ask_handler("openai_completions"), "openai", GATEWAY),
    Route("POST", "/v1/responses", ask_handler("openai_responses"), "openai", GATEWAY),
    Route("GET", "/v1/responses/{id}", responses_get, "openai", GATEWAY),
    Route("GET", "/v1/models", openai_models, "openai", GATEWAY),
    Route("GET", "/v1/models/{model:path}", openai_model, "openai", GATEWAY),
    Route("POST", "/v1/messages", ask_handler("anthropic"), "anthropic", GATEWAY),
    Route("POST", "/v1/messages/count_tokens", anthropic_count_tokens, "anthropic", GATEWAY),
    Route("POST", "/api/chat", ask_handler("ollama"), "ollama", GATEWAY),
    Route("POST", "/api/generate", ask_handler("ollama"), "ollama", GATEWAY),
    Route("GET", "/api/tags", ollama_tags, "ollama", GATEWAY),
    Route("GET", "/api/version", ollama_version, "ollama", GATEWAY),
    Route("POST", "/api/show", ollama_show, "ollama", GATEWAY),
    Route("GET", "/v1beta/models", gemini_models, "gemini", GATEWAY),
    Route("POST", "/v1beta/models/{model:path}", gemini_action, "gemini", GATEWAY),
    Route("POST", "/v1/models/{model:path}", gemini_action, "gemini", GATEWAY),
]
