"""The OpenAPI document of the gateway and admin API (GET /openapi.json), built from the route table: each route
brings its own operation (`Route.doc`), written where the route is declared; this module adds what every
operation shares (parameters from the path, who may call, the error shapes)."""
from __future__ import annotations

import re
from typing import Any

from .. import __version__, formats
from .routes import ADMIN, GATEWAY, PUBLIC, Route, RouteTable

OBJECT = {"type": "object"}
ANY_JSON = {"type": ["object", "array"]}
STRING = {"type": "string"}
BENCH_ERROR = {"type": "object", "required": ["error"],
               "properties": {"error": {"type": "object", "required": ["message"],
                                        "properties": {"message": STRING, "code": STRING}}}}
JSONRPC_ERROR = {"type": "object", "required": ["jsonrpc", "error"],
                 "properties": {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]},
                                "error": {"type": "object", "required": ["code", "message"],
                                          "properties": {"code": {"type": "integer"}, "message": STRING}}}}
SECURITY: dict[str, list[dict[str, list]]] = {
    ADMIN: [{"bearer": []}],
    GATEWAY: [{"bearer": []}, {"x-api-key": []}, {"x-goog-api-key": []}, {"api-key": []}, {"key": []}],
    PUBLIC: [],
}
SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer",
               "description": "The admin token (BENCHWARMERS_ADMIN_TOKEN), or on gateway routes a gateway key."},
    "x-api-key": {"type": "apiKey", "in": "header", "name": "x-api-key", "description": "A gateway key."},
    "x-goog-api-key": {"type": "apiKey", "in": "header", "name": "x-goog-api-key", "description": "A gateway key."},
    "api-key": {"type": "apiKey", "in": "header", "name": "api-key", "description": "A gateway key."},
    "key": {"type": "apiKey", "in": "query", "name": "key", "description": "A gateway key."},
}
INFO = ("Every route of the gateway (each client API's own paths) and of the admin API under /bench/. Without an "
        "admin token the service listens on loopback and nothing needs a credential; with one, admin routes need "
        "it and gateway routes a gateway key (or it). GATEWAY.md is the prose contract.")


def obj(required: tuple = (), extra: bool = True, /, **properties: dict) -> dict:
    """A JSON object schema: these properties (`required` of them), and others allowed unless `extra` is False
    (both positional only: a property may be named anything, "required" too)."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if not extra:
        schema["additionalProperties"] = False
    return schema


def op(summary: str, *, body: dict | None = None, body_required: bool = True, query: dict | None = None,
       ok: dict | None = None, status: int = 200, content: tuple = ("application/json",),
       also: dict | None = None) -> dict:
    """An operation: what it does, its JSON body, its query parameters ({name: schema}) and its answer.
    `content`: the media types a success may come in (a stream's among them); `also`: other statuses it may
    answer with, {status: schema of its JSON body, or None for no body}."""
    operation: dict[str, Any] = {"summary": summary, "responses": {str(status): {
        "description": "Success.", "content": {kind: {"schema": ok or OBJECT} if kind == "application/json" else {}
                                               for kind in content}}}}
    for code, schema in (also or {}).items():
        operation["responses"][str(code)] = {"description": "Also a success."} if schema is None else {
            "description": "Also a success.", "content": {"application/json": {"schema": schema}}}
    if body is not None:
        operation["requestBody"] = {"required": body_required, "content": {"application/json": {"schema": body}}}
    if query:
        operation["parameters"] = [{"name": name, "in": "query", "required": False, "schema": schema}
                                   for name, schema in query.items()]
    return operation


def error_schema(shape: str) -> dict:
    """The error body of an API (the formats declare theirs; the admin API answers in OpenAI's)."""
    if shape in ("bench", "html"):
        return BENCH_ERROR
    if shape == "jsonrpc":
        return JSONRPC_ERROR
    return formats.SHAPES[shape].ERROR_SCHEMA


def path_of(pattern: str) -> tuple[str, list[str]]:
    """An OpenAPI path template and its parameter names, from a route pattern ({name:path} is one parameter)."""
    names = re.findall(r"\{(\w+)(?::path)?\}", pattern)
    return re.sub(r"\{(\w+):path\}", r"{\1}", pattern), names


def operation(route: Route) -> dict:
    """The route's own operation, completed: path parameters, who may call, and the errors in its API's shape."""
    assert route.doc is not None      # documented: the dashboard's pages, which bring none, are left out
    out = {**route.doc, "responses": dict(route.doc["responses"])}
    _, names = path_of(route.pattern)
    if names:
        out["parameters"] = [{"name": n, "in": "path", "required": True, "schema": STRING} for n in names] + \
            out.get("parameters", [])
    auth = route.auth or ADMIN
    out["security"] = SECURITY[auth]
    out.setdefault("tags", [{PUBLIC: "public", GATEWAY: "gateway", ADMIN: "admin"}[auth]])
    if route.shape != "html":
        error = {"description": "An error, in this API's own shape; the message says what to fix.",
                 "content": {"application/json": {"schema": error_schema(route.shape)}}}
        out["responses"].setdefault("4XX", error)
        out["responses"].setdefault("5XX", {**error, "description": "The upstream or the record store failed."})
    return out


def document(table: RouteTable, role: str = "dashboard") -> dict:
    """The whole document: every route the service answers in this role that has an operation (the dashboard's
    pages are not API; every other route has one: tests/test_openapi.py checks)."""
    paths: dict = {}
    for route in table.routes:
        if route.doc is None or (route.dashboard_only and role != "dashboard"):
            continue
        path, _ = path_of(route.pattern)
        paths.setdefault(path, {})[route.method.lower()] = operation(route)
    return {"openapi": "3.1.0", "info": {"title": "Benchwarmers", "version": __version__, "description": INFO},
            "paths": paths, "components": {"securitySchemes": SCHEMES}}

