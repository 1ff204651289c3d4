"""Each plugin kind (format, provider, dashboard page, scheduler job) meets its contract (a typing.Protocol), and
each provider is reachable everywhere it must be: the dashboard's endpoint form, the CLI's --api, route mode's
pass-through and the fakes of tests/fakes/."""
from __future__ import annotations

import argparse
import inspect

import pytest

from benchwarmers.cli.main import build_parser
from benchwarmers.dashboard.contract import PageContract
from benchwarmers.dashboard.routes import PAGES
from benchwarmers.formats import FORMATS, FormatContract
from benchwarmers.providers import PROVIDERS, make_provider
from benchwarmers.providers.contract import ProviderContract
from benchwarmers.providers.passthrough import native_body
from benchwarmers.scheduler.jobs import JOBS, JobContract
from tests.fakes import FAKES, FakeUpstream


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def api_choices() -> list[str]:
    """The choices of `bench endpoint add --api`, read from the parser the command line uses."""
    add = subcommand(subcommand(build_parser(), "endpoint"), "add")
    return list(next(a for a in add._actions if "--api" in a.option_strings).choices)


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_each_provider_states_its_contract_on_its_class(api):
    cls = PROVIDERS[api]
    assert isinstance(make_provider(api, "", None), ProviderContract)
    assert cls.api == api and cls.title and cls.default_base.startswith("http")
    assert {"model", "tools"} <= cls.passthrough_fields or {"contents", "tools"} <= cls.passthrough_fields
    assert cls.client_tool({"type": "web_search_20250305", "name": "web_search"}) is False


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_each_provider_is_in_the_form_the_cli_pass_through_and_the_fakes(api, app):
    cls = PROVIDERS[api]
    status, _, page = app("GET", "/endpoints")
    assert status == 200, page
    form = page[page.index('id="ep-api"'):]
    form = form[:form.index("</select>")]
    assert f'<option value="{api}"' in form and f">{cls.title}</option>" in form
    assert api in api_choices()
    sent, dropped = native_body(api, {"unheard_of": 1, **{f: 1 for f in cls.passthrough_fields}})
    assert set(sent) == set(cls.passthrough_fields) and dropped == ["field unheard_of"]
    assert issubclass(FAKES[api], FakeUpstream)
    with FAKES[api]() as fake:
        fake.set_models(["m-one"])
        assert [m["id"] for m in make_provider(api, fake.url, None).list_models()] == ["m-one"]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_declares_its_contract(name):
    module = FORMATS[name]
    assert isinstance(module, FormatContract)
    missing = [n for n in FormatContract.__annotations__ if not hasattr(module, n)]
    assert not missing, f"formats/{name}.py does not declare {missing}"
    own = {r.op for r in module.ROUTES} - {"ask"}
    assert own == set(module.OPS), f"formats/{name}.py: each route's op other than ask is in OPS, and only those"
    assert module.load_reply is None or callable(module.load_reply)
    assert module.ERROR_SCHEMA["type"] == "object"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.path)
def test_each_dashboard_page_declares_its_contract(page):
    module = page.module
    assert isinstance(module, PageContract), f"{module.__name__} lacks part of PageContract"
    assert all(isinstance(s, str) and s.endswith(".js") for s in module.SCRIPTS)
    for path, fn, back in module.ACTIONS:
        assert path.startswith("/") and callable(fn) and back.startswith("/")


@pytest.mark.parametrize("name", sorted(JOBS))
def test_each_scheduler_job_meets_its_contract(name):
    job = JOBS[name]
    assert job.run is None or isinstance(job.run, JobContract)
    assert list(inspect.signature(job.run).parameters) == ["job"]
