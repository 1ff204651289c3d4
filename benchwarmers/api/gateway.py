"""The gateway routes: every client format asking a panel (`bench/<c>`, `:merged`), a model alias, or route mode,
plus each format's own routes (model lists, token counts, ...), all built from what the formats declare."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol
from urllib.parse import quote

from .. import formats
from ..askparts import Asker, ReplyOptions
from ..canonical import DIRECT, ROUTE, Ask, Text
from ..core.collection import Collections
from ..core.panel import Panel
from ..core.route import Router, TurnReply
from ..errors import BadRequest, CollectionNotFound, Forbidden, NotFound
from ..formats.base import FormatRoute, Lookup, Parsed, ReplyInfo, RequestInfo, points_wanted
from ..formats.benchfields import panel_options
from ..formats.contract import FormatContract
from ..providers.passthrough import native_body
from ..roster.registry import Registry
from ..server.guard import presented_key
from ..server.messages import Request, Response
from ..server.openapi import ANY_JSON, op
from ..server.routes import GATEWAY, Route

if TYPE_CHECKING:
    from ..bench import Bench


class ReachParts(Protocol):
    """The collections, for what a gateway key reaches."""
    collections: Collections


class ModelNamesParts(ReachParts, Protocol):
    """The collections and the roster, for the model names a caller may ask."""
    registry: Registry


class GatewayParts(ModelNamesParts, Protocol):
    """Asking in a client's format: the panel, route mode, and the names a format's own routes list."""
    panel: Panel
    router: Router


Handler = Callable[[Request, GatewayParts], Response]
SESSION_HEADER = "x-bench-session"
CONVERSATION_HEADERS = ("x-claude-code-session-id", "session-id", "thread-id")   # route mode pins by these


def check_reach(req: Request, target) -> None:
    """A gateway key reaches only its collections; asking a model alias directly needs a key for '*'."""
    key = req.caller
    if key is None:
        return
    if target.mode == DIRECT:
        if "*" not in key.collections:
            raise Forbidden(f"The key {key.name!r} cannot ask models directly.",
                           "Ask one of its collections: " + ", ".join(f"bench/{c}" for c in key.collections))
        return
    key.check_collection(target.name)


def check_reach_within(req: Request, ask: Ask, bench: ReachParts) -> None:
    """A key limited to some collections reaches only the models of those collections, by every path (`bench.with`
    in any format, streamed or merged, the CLI's --with, MCP), and its errors name nothing outside them: an unknown
    collection's 404 lists its own collections, never the others."""
    key = req.caller
    if key is None or "*" in key.collections:
        return
    collections = bench.collections.all()
    mine = sorted(c for c in key.collections if c in collections)
    if ask.aim.mode != DIRECT and ask.aim.name not in collections:
        raise CollectionNotFound(f"No collection named {ask.aim.name!r}.",
                                 "Ask one of: " + (", ".join(f"bench/{c}" for c in mine) or "(none yet)") + ".")
    reach = {m for c in mine for m in collections[c].members}
    outside = [m for m in ask.with_models if m not in reach]
    if outside:
        raise Forbidden(f"The key {key.name!r} does not reach {', '.join(map(repr, outside))}: `bench.with` may name "
                        "only members of its collections.",
                        "Ask with: " + (", ".join(sorted(reach)) or "(no members yet)") + ", or widen the key.")


def session_of(req: Request) -> str | None:
    """The session a client says it asks for (X-Bench-Session; the MCP server on stdio sends one), so its answers
    waiting for a verdict can be found again without a key."""
    value = req.headers.get(SESSION_HEADER)
    return None if value is None else check_session(value, "X-Bench-Session")


def client_session(headers: dict) -> str | None:
    """The conversation id an agent sends of its own (Claude Code's session header, a thread id), as
    "header|value" for route mode's pins; None when it sends none."""
    for name in CONVERSATION_HEADERS:
        value = headers.get(name)
        if value:
            return f"{name}|{value}"
    return None


def check_session(value: str, where: str) -> str:
    if not 1 <= len(value) <= 128 or not all("!" <= ch <= "~" for ch in value):
        raise BadRequest(f"{where} must be 1 to 128 visible ASCII characters.",
                         "Send a random id, the same one for every ask of one session.")
    return value


def admit(fmt: FormatContract, req: Request, bench: ReachParts, info: RequestInfo) -> tuple[Parsed, Asker]:
    """The request as the format parsed it, an Ask the caller may make (a target named and within its key's reach);
    and who asks (the key and session, for the record)."""
    body = req.json()
    req.body = b""                     # read: a large ask's bytes are not held while its seats run
    parsed = fmt.parse(body, info)
    ask = parsed.ask
    ask.points = points_wanted(body)
    panel_options(body, ask)
    if not ask.target or not ask.target.name:
        raise BadRequest("No model named.", "Send model: bench/<collection> (see GET /v1/models).")
    if ask.continues and ask.target.mode == ROUTE:
        raise BadRequest("`bench.continue` follows up a panel; route mode keeps its own conversation.",
                         f"Ask bench/{ask.target.name} to continue a panel, or leave `bench.continue` out.")
    check_reach(req, ask.target)
    check_reach_within(req, ask, bench)
    asker = Asker(req.caller.name if req.caller else None, session_of(req))
    return parsed, asker


def serve_ask(fmt: FormatContract, req: Request, bench: GatewayParts, info: RequestInfo) -> Response:
    """Parse in the client's format, run the panel (or route mode), answer in the same format."""
    (ask, options, native), asker = admit(fmt, req, bench, info)
    if not has_content(ask):
        return nothing_to_answer(fmt, req, bench, ask, options, info)
    reply = ReplyInfo.for_ask(ask, options, info)
    if ask.aim.mode == ROUTE:   # only a route turn may send the client's own body: cut it once, here
        turn = bench.router.take(ask, client_session(info.headers), presented_key(req), stream=options.stream,
                                 native=native.narrowed(native_body), asker=asker)
        return render_turn(fmt, turn, reply)
    run = bench.panel.start(ask, asker, live=options.stream)   # streamed: its first seat to write goes out live
    # the seats in seat order, so a client can show who it is still waiting for while the stream runs
    headers = {"x-bench-panel": run.id, "x-bench-seats": seats_header(run)}
    if options.stream:
        return Response.streaming(fmt.stream(bench.panel.events(run, req.gone), reply),
                                  fmt.stream_content_type(reply), headers)
    answer = bench.panel.whole(run, gone=req.gone)
    reply.extra = run.bench()
    if run.unkept:   # the panel's id names nothing the record holds
        headers = {"x-bench-record": "not kept", "x-bench-seats": headers["x-bench-seats"]}
    return Response.json(fmt.render(answer, reply), headers=headers)


def seats_header(run) -> str:
    """X-Bench-Seats: each seat's model, quoted (a blind panel's: seat-N, no model named)."""
    return ", ".join(f"seat-{s.seat}" if run.hidden else quote(s.model, safe="") for s in run.seats)


def render_turn(fmt: FormatContract, turn: TurnReply, reply: ReplyInfo) -> Response:
    """A route-mode turn in the caller's format: its member's stream, or its whole answer with the `bench` data."""
    headers = {"x-bench-call": turn.call, "x-bench-model": turn.model} if turn.call else \
        {"x-bench-record": "not kept", "x-bench-model": turn.model}   # its record could not be kept
    if turn.events is not None:
        return Response.streaming(fmt.stream(turn.events, reply), fmt.stream_content_type(reply), headers)
    reply.extra = turn.bench
    assert turn.answer is not None      # not streamed: the whole answer
    return Response.json(fmt.render(turn.answer, reply), headers=headers)


def has_content(ask: Ask) -> bool:
    for m in ask.messages:   # (loops, not any() of a generator: no call a part)
        for p in m.parts:
            if not isinstance(p, Text) or p.text:
                return True
    return False


def nothing_to_answer(fmt: FormatContract, req: Request, bench: ModelNamesParts, ask: Ask, options: ReplyOptions,
                      info: RequestInfo) -> Response:
    """An empty conversation asks no one: a format that has a "load the model" reply (Ollama) gives it,
    the others answer 400 naming the field that carries the conversation."""
    if fmt.load_reply:
        return Response.json(fmt.load_reply(ReplyInfo.for_ask(ask, options, info), model_names(req, bench)))
    raise BadRequest(f"Nothing to answer: `{fmt.CONVERSATION}` holds no content.",
                     f"Send the question in `{fmt.CONVERSATION}`.")


def model_names(req: Request, bench: ModelNamesParts) -> list[str]:
    """bench/<c>, :merged and :route for each collection the caller reaches, then every alias (keys for '*')."""
    key = req.caller
    names = []
    for c in sorted(bench.collections.all()):
        if key is None or key.allows(c):
            names += [f"bench/{c}", f"bench/{c}:merged", f"bench/{c}:route"]
    if key is None or "*" in key.collections:
        names += sorted(a for a, m in bench.registry.models().items() if m.active)
    return names


# -- the route table's gateway part, from the formats' declarations -------------------------------------

def request_info(req: Request, route: FormatRoute) -> RequestInfo:
    return RequestInfo(req.path, req.query, req.headers, path_model=req.params.get("model"),
                       stream_route=route.stream)


def handler_for(fmt: FormatContract, route: FormatRoute) -> Handler:
    """`ask` asks the bench; any other op is the format's own answer in its OPS, given a Lookup of the request."""
    if route.op == "ask":
        def handler(req: Request, bench: GatewayParts) -> Response:
            return serve_ask(fmt, req, bench, request_info(req, route))
        handler.__name__ = f"{fmt.NAME}_{route.op}"
        return handler
    answer = fmt.OPS[route.op]

    def op_handler(req: Request, bench: ModelNamesParts) -> Response:
        lookup = Lookup(request_info(req, route), req.params, req.json, lambda: model_names(req, bench))
        return Response.json(answer(lookup))
    op_handler.__name__ = f"{fmt.NAME}_{route.op}"
    return op_handler


def by_header(choices: list[tuple[str | None, Handler]]) -> Handler:
    """One path answered by several formats: the one whose header the request sends, else the one that asks none."""
    def first_sent(req: Request, bench: GatewayParts) -> Response:
        for header, chosen in choices:
            if header is None or header in req.headers:
                return chosen(req, bench)
        raise NotFound(f"No route for {req.method} {req.path}.")
    return first_sent


def routes() -> list[Route[Bench]]:
    """Every format's declared routes, in declaration order; a path two formats share is one route."""
    grouped: dict[tuple[str, str], list[tuple[FormatContract, FormatRoute]]] = {}
    for fmt in formats.FORMATS.values():
        for route in fmt.ROUTES:
            grouped.setdefault((route.method, route.pattern), []).append((fmt, route))
    table: list[Route[Bench]] = []
    for (method, pattern), declared in grouped.items():
        declared.sort(key=lambda item: item[1].header is None)   # header-bound ones are tried first
        plain, declaration = declared[-1]
        if len(declared) == 1:
            handler = handler_for(*declared[0])
        else:
            handler = by_header([(route.header, handler_for(fmt, route)) for fmt, route in declared])
        table.append(Route(method, pattern, handler, plain.SHAPE, GATEWAY, doc=operation(plain, declaration)))
    return table


def operation(fmt: FormatContract, route: FormatRoute) -> dict | None:
    """The OpenAPI operation of a format's route, from what the format declares (None when it says nothing, which
    tests/test_openapi.py refuses)."""
    if not route.summary:
        return None
    if route.op != "ask":
        return op(route.summary, body=route.body, ok=ANY_JSON)
    kinds = ("application/json", fmt.stream_content_type(ReplyInfo.new("")))
    return op(route.summary, body=route.body, ok=ANY_JSON, content=tuple(dict.fromkeys(kinds)),
              query={"alt": {"type": "string"}} if route.stream else None)
