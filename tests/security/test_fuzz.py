"""Property-based fuzzing of the whole API from its own OpenAPI document (schemathesis): zero 5xx, and no answer
that breaks the document (status codes, content types, bodies and headers as declared), with the admin token set.

The check script runs a short pass (a few examples per operation). A longer one, by hand:

    BENCHWARMERS_FUZZ_EXAMPLES=300 python scripts/check.py tests/security/test_fuzz.py

POST /bench/endpoints is left out: it makes the service connect to whatever base URL the fuzzer invents, and a
test never sends traffic off this machine (its input checks are tested in test_injection.py). As a second guard,
every non-loopback upstream goes through a proxy address where nothing listens."""
from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402  (installed with schemathesis)
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (content_type_conformance, response_headers_conformance,  # noqa: E402
                                               response_schema_conformance, status_code_conformance)

from benchwarmers.server import openapi  # noqa: E402
from benchwarmers.service.table import build_table  # noqa: E402
from tests.fakes import start_all  # noqa: E402
from tests.helpers.data import configure  # noqa: E402
from tests.security.attack import ADMIN_HEADERS, TOKEN  # noqa: E402

EXAMPLES = int(os.environ.get("BENCHWARMERS_FUZZ_EXAMPLES", "6"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance]
SCHEMA = schemathesis.openapi.from_dict(openapi.document(build_table())).exclude(method="POST",
                                                                                   path="/bench/endpoints")


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """A service with the admin token set, collections on a fake of each protocol, and no way off this machine."""
    from benchwarmers import home as home_mod
    from benchwarmers.service.lifecycle import Service
    saved = {k: os.environ.get(k) for k in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
                                            "no_proxy", "LLM_USER_PATH", "BENCHWARMERS_HOME")}
    data = tmp_path_factory.mktemp("fuzz") / "data"
    os.environ.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1",
                      LLM_USER_PATH=str(data.parent / "llm"))
    for name in ("no_proxy", "http_proxy", "https_proxy"):
        os.environ.pop(name, None)
    home_mod.init(data)
    with start_all() as fakes:
        configure(data, {api: (fake, api) for api, fake in fakes.items()},
                  {api: (api, f"m-{api}", {"tools": True}) for api in fakes},
                  {"core": {"members": sorted(fakes), "explore": 0, "merge_model": "openai"}})
        (data / "config" / "settings.json").write_text('{"seat_timeout": 10}', encoding="utf-8")
        svc = Service(data, admin_token=TOKEN).start()
        try:
            yield svc.url
        finally:
            svc.stop()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


@SCHEMA.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_the_api_holds_to_its_document(target, case):
    case.call_and_validate(base_url=target, headers=ADMIN_HEADERS, checks=CHECKS, timeout=60)
