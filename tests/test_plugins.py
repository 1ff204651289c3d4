"""Each plugin kind (format, provider, hub, dashboard page, scheduler job) meets its contract (a typing.Protocol);
the provider contract names every method the code calls on a provider; each provider and each hub is reachable
everywhere it must be: the dashboard's endpoint form, the CLI's --api or --hub, route mode's pass-through, the
hints naming every hub, and the fakes of tests/fakes/."""
from __future__ import annotations

import argparse
import ast
import inspect
import textwrap
from functools import partial
from pathlib import Path

import pytest

import benchwarmers
from benchwarmers import hubs
from benchwarmers.cli.main import build_parser
from benchwarmers.errors import UpstreamFailed
from benchwarmers.dashboard.contract import PageContract
from benchwarmers.dashboard.routes import PAGES
from benchwarmers.formats import FORMATS, FormatContract
from benchwarmers.hubs.base import Hub
from benchwarmers.hubs.contract import HubContract
from benchwarmers.hubs.litellm import LiteLLM
from benchwarmers.providers import PROVIDERS, Provider, make_provider
from benchwarmers.providers.contract import ProviderContract
from benchwarmers.providers.openai import OpenAIProvider
from benchwarmers.providers.passthrough import native_body
from benchwarmers.scheduler.jobs import JOBS, JobContract
from benchwarmers.servicelink import CommandError
from tests.fakes import FAKES, FakeUpstream
from tests.fakes.hubs import HUB_FAKES, FakeHub

PACKAGE = Path(benchwarmers.__file__).parent
ROOT = PACKAGE.parent


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def add_choices(flag: str) -> list[str]:
    """The choices of `bench endpoint add --api` or `--hub`, read from the parser the command line uses."""
    add = subcommand(subcommand(build_parser(), "endpoint"), "add")
    return list(next(a for a in add._actions if flag in a.option_strings).choices)


def form_select(app, select_id: str) -> str:
    """The <select> of the dashboard's endpoint form with this id, as served."""
    status, _, page = app("GET", "/endpoints")
    assert status == 200, page
    form = page[page.index(f'id="{select_id}"'):]
    return form[:form.index("</select>")]


def methods(contract: type) -> set[str]:
    """The methods a contract (a Protocol) names."""
    return {n for n, v in vars(contract).items() if inspect.isfunction(v) and not n.startswith("_")}


def left_to_subclass(base: type) -> set[str]:
    """The methods a base class leaves to its subclasses: past the docstring, they only raise NotImplementedError."""
    found = set()
    for name, fn in vars(base).items():
        if inspect.isfunction(fn):
            body = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0].body
            body = body[1:] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body
            if len(body) == 1 and isinstance(body[0], ast.Raise) and "NotImplementedError" in ast.unparse(body[0]):
                found.add(name)
    return found


def unmet(cls: type, base: type, contract: type) -> list[str]:
    """What of its contract a plugin class lacks, or takes from its base's NotImplementedError stub (an instance
    still meets the Protocol then, and fails only when the code calls that method)."""
    stubs = left_to_subclass(base)
    return sorted(n for n in set(contract.__annotations__) | methods(contract)
                  if not hasattr(cls, n) or (n in stubs and getattr(cls, n) is getattr(base, n)))


def names_provider(annotation) -> bool:
    """`Provider`, or a union naming it (not a container of providers, nor a provider class)."""
    if isinstance(annotation, ast.BinOp):
        return names_provider(annotation.left) or names_provider(annotation.right)
    return isinstance(annotation, ast.Name) and annotation.id == "Provider"


def provider_makers(trees: dict) -> set[tuple[Path, str, bool]]:
    """(module, name, whether a method) of each function annotated to return a Provider."""
    return {(path, f.name, isinstance(parent, ast.ClassDef)) for path, tree in trees.items()
            for parent in ast.walk(tree) if isinstance(parent, (ast.Module, ast.ClassDef, ast.FunctionDef))
            for f in parent.body if isinstance(f, ast.FunctionDef) and names_provider(f.returns)}


def makes_provider(makers: set, path: Path, e) -> bool:
    """Whether `e`, in module `path`, calls a function that returns a provider: a module's function by its name, a
    method on `self` in its own module or on anything else elsewhere."""
    f = e.func if isinstance(e, ast.Call) else None
    if isinstance(f, ast.Name):
        return any(name == f.id and not method for _, name, method in makers)
    if not isinstance(f, ast.Attribute):
        return False
    on_self = isinstance(f.value, ast.Name) and f.value.id == "self"
    return any(name == f.attr and method and (where == path) == on_self for where, name, method in makers)


def provider_reads() -> dict[str, str]:
    """Each attribute the package reads on a provider outside the adapters' own methods -> one place it does
    (file:line). A provider is what a function annotated `-> Provider` returns, a parameter or field annotated
    `Provider` in the same module, or a name assigned one of those."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}
    makers, reads = provider_makers(trees), {}
    for path, tree in trees.items():
        nodes, makes = list(ast.walk(tree)), partial(makes_provider, makers, path)
        held = {n.arg for n in nodes if isinstance(n, ast.arg) and names_provider(n.annotation)}
        held |= {n.target.id for n in nodes if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                 and names_provider(n.annotation)}
        held |= {t.id for n in nodes if isinstance(n, ast.Assign) and makes(n.value) for t in n.targets
                 if isinstance(t, ast.Name)}
        for n in nodes:
            if isinstance(n, ast.Attribute) and (makes(n.value) or getattr(n.value, "id", None) in held
                                                 or getattr(n.value, "attr", None) in held):
                reads.setdefault(n.attr, f"{path.relative_to(ROOT).as_posix()}:{n.lineno}")
    return reads


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_each_provider_states_its_contract_on_its_class(api):
    cls = PROVIDERS[api]
    assert isinstance(make_provider(api, "", None), ProviderContract)
    assert not unmet(cls, Provider, ProviderContract), f"{cls.__name__} lacks {unmet(cls, Provider, ProviderContract)}"
    assert cls.api == api and cls.title and cls.default_base.startswith("http")
    assert {"model", "tools"} <= cls.passthrough_fields or {"contents", "tools"} <= cls.passthrough_fields
    assert cls.client_tool({"type": "web_search_20250305", "name": "web_search"}) is False


def test_the_provider_contract_names_every_method_the_code_calls_on_a_provider():
    """Its methods are exactly the adapter's own (those Provider calls on itself and leaves to the subclass) and
    those the package calls on a provider, read from the source: one called but not named fails, as does one named
    that nothing calls."""
    reads, named, facts = provider_reads(), methods(ProviderContract), set(ProviderContract.__annotations__)
    unnamed = {name: at for name, at in reads.items() if name not in named | facts}
    assert not unnamed, f"read on a provider, not named in providers/contract.py: {unnamed}"
    own = left_to_subclass(Provider)
    on_self = {n.func.attr for n in ast.walk(ast.parse(inspect.getsource(Provider))) if isinstance(n, ast.Call)
               and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", "") == "self"}
    assert own <= on_self, f"Provider leaves {own - on_self} to its subclasses but never calls it"
    called = own | (reads.keys() - facts)
    assert named == called, f"named but called nowhere: {named - called}; called but not named: {called - named}"
    assert {"stream_head", "list_models", "send_whole"} <= named


STRIPPED = [(Provider, OpenAIProvider, ProviderContract, m) for m in sorted(left_to_subclass(Provider))] + \
           [(Hub, LiteLLM, HubContract, m) for m in sorted(left_to_subclass(Hub))]


@pytest.mark.parametrize("base, cls, contract, method", STRIPPED, ids=lambda v: getattr(v, "__name__", v))
def test_a_plugin_lacking_one_of_its_methods_fails_the_check(base, cls, contract, method):
    """A class with every fact and method of a real one but `method` meets the Protocol (its base has a stub), so
    the check must find the stub."""
    stripped = type("Stripped", (base,), {k: v for k, v in vars(cls).items() if k not in (method, "__dict__")})
    assert isinstance(object.__new__(stripped), contract) and not unmet(cls, base, contract)
    assert unmet(stripped, base, contract) == [method]


@pytest.mark.parametrize("api", sorted(PROVIDERS))
def test_each_provider_is_in_the_form_the_cli_pass_through_and_the_fakes(api, app):
    cls = PROVIDERS[api]
    form = form_select(app, "ep-api")
    assert f'<option value="{api}"' in form and f">{cls.title}</option>" in form
    assert api in add_choices("--api")
    sent, dropped = native_body(api, {"unheard_of": 1, **{f: 1 for f in cls.passthrough_fields}})
    assert set(sent) == set(cls.passthrough_fields) and dropped == ["field unheard_of"]
    assert issubclass(FAKES[api], FakeUpstream)
    with FAKES[api]() as fake:
        fake.set_models(["m-one"])
        assert [m["id"] for m in make_provider(api, fake.url, None).list_models()] == ["m-one"]


@pytest.mark.parametrize("kind", sorted(hubs.KINDS))
def test_each_hub_states_its_contract_on_its_class(kind):
    cls = hubs.KINDS[kind]
    assert isinstance(cls("e", "http://127.0.0.1:9/v1", None), HubContract)
    assert not unmet(cls, Hub, HubContract), f"{cls.__name__} does not give {unmet(cls, Hub, HubContract)}"
    assert cls.kind == kind and cls.title and cls.name and cls.doc.startswith("base URL http")


@pytest.mark.parametrize("kind", sorted(hubs.KINDS))
def test_each_hub_is_in_the_form_the_cli_the_fakes_and_the_docs(kind, app):
    cls = hubs.KINDS[kind]
    form = form_select(app, "ep-hub")
    assert f'<option value="{kind}"' in form and f">{cls.title}</option>" in form
    page = app("GET", "/endpoints")[2]
    summary = page[page.index('id="ep-hub-box"'):]
    assert cls.title in summary[:summary.index("</summary>")]
    assert kind in add_choices("--hub")
    assert issubclass(HUB_FAKES[kind], FakeHub)
    with HUB_FAKES[kind](admin_key="admin-key-0123") as fake:    # an empty hub: its admin API reads no source
        assert cls("e", fake.url, "admin-key-0123").sources() == []
        with pytest.raises(UpstreamFailed, match="refused the admin key"):
            cls("e", fake.url, "not-its-admin-key").sources()
    assert f"`{kind}`" in (ROOT / "GATEWAY.md").read_text(encoding="utf-8"), "GATEWAY.md's Hubs paragraph names it"


def test_every_hint_that_lists_the_hubs_names_each_kind(app):
    """The API's two hints and the CLI's one offer `--hub` with every kind."""
    with FAKES["openai"]() as fake:
        fake.set_models(["m-one"])
        status, _, refused = app("POST", "/bench/endpoints", {"name": "plain", "base_url": fake.url, "no_key": True,
                                                              "admin_key": "admin-key-0123"})
        assert status == 400, refused
        added = app("POST", "/bench/endpoints", {"name": "plain", "base_url": fake.url, "no_key": True})
        assert added[0] == 201, added
        status, _, not_hub = app("GET", "/bench/endpoints/plain/hub")
        assert status == 400, not_hub
    args = build_parser().parse_args(["endpoint", "add", "x", "--base", "http://127.0.0.1:9/v1", "--no-key",
                                      "--admin-key-stdin"])
    with pytest.raises(CommandError) as cli:
        args.func(args, None)
    for hint in (refused["error"]["message"], not_hub["error"]["message"], str(cli.value)):
        assert "--hub " in hint and all(kind in hint for kind in hubs.KINDS), hint


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
