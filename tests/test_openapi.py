"""The OpenAPI document at /openapi.json: every route of the gateway and admin API brings its own operation, the
document is valid OpenAPI, and it matches the route table."""
from __future__ import annotations

import pytest

from benchwarmers.server import openapi
from benchwarmers.service.table import build_table


def test_every_api_route_has_an_operation():
    """A route that lands without its operation fails here: write it where the route is declared (`doc=op(...)`, or
    a format's FormatRoute summary and body)."""
    missing = [f"{r.method} {r.pattern}" for r in build_table().routes if r.doc is None and not r.dashboard_only]
    assert not missing, f"routes without an OpenAPI operation: {missing}"


def test_every_operation_says_what_it_does_and_what_it_takes():
    for route in build_table().routes:
        if route.doc is None:
            continue
        assert route.doc["summary"].strip().endswith((".", ")")), route.pattern
        assert route.doc["responses"], route.pattern


def test_the_document_matches_the_table(app):
    status, _, doc = app("GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    listed = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    expected = {(r.method, openapi.path_of(r.pattern)[0]) for r in build_table().routes if r.doc is not None}
    assert listed == expected
    ask = doc["paths"]["/v1/chat/completions"]["post"]
    assert ask["requestBody"]["content"]["application/json"]["schema"]["required"] == ["model", "messages"]
    assert "text/event-stream" in ask["responses"]["200"]["content"]
    assert ask["security"] and doc["paths"]["/healthz"]["get"]["security"] == []
    assert ask["responses"]["4XX"]["content"]["application/json"]["schema"]["required"] == ["error"]


def test_the_gateway_alone_documents_no_dashboard_route(make_app):
    doc = make_app(role="gateway")("GET", "/openapi.json")[2]
    assert "/login" not in doc["paths"] and "/v1/messages" in doc["paths"]


def test_the_document_is_valid_openapi(app):
    schemathesis = pytest.importorskip("schemathesis")
    doc = app("GET", "/openapi.json")[2]
    loaded = schemathesis.openapi.from_dict(doc)
    operations = [op for op in loaded.get_all_operations()]
    assert len(operations) == sum(len(ops) for ops in doc["paths"].values())
    assert all(op.ok() for op in operations), [op.err() for op in operations if not op.ok()][:3]
