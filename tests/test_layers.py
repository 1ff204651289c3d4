"""The package's layers, read from its imports (ast): nothing imports upward or sideways."""
from __future__ import annotations

import ast
from pathlib import Path

import benchwarmers

PACKAGE = Path(benchwarmers.__file__).parent
# The layers, bottom first: a part (a top-level module or package of benchwarmers) imports only parts of the
# layers below its own. A new part is placed here before anything may import it.
LAYERS = [
    {"errors", "redaction", "words", "numberchecks", "strictjson", "tokencount"},  # leaves: anyone may use them
    {"canonical", "askparts"},                          # the value types: what is asked, and what comes with it
    {"formats", "providers", "store"},                  # client wire formats, upstream protocols, the data folder
    {"names", "baseurls", "settings", "home", "keys"},  # the rules for names and URLs, settings, where data is, keys
    {"hubs"},                                           # hubs an endpoint may be (Open WebUI, LiteLLM, CLIProxyAPI)
    {"catalog"},                                        # model facts and prices
    {"roster"},                                         # endpoints, models, health, rate limits, onboarding
    {"core", "signin"},                                 # seating, panel, route mode; getting a key by signing in
    {"suite"},                                          # the benchmark suite
    {"scheduler"},                                      # the jobs the bench runs on its own
    {"servicelink"},                                    # the way to the running service, for its clients (below)
    {"server", "mcp"},                                  # the HTTP layer; the stdio MCP server (both narrowed below)
    {"bench"},                                          # every part built once at start-up
    {"api"},                                            # the API's route handlers
    {"dashboard"},                                      # the dashboard's pages (they read the API in-process)
    {"service"},                                        # the top: the route table, the App, start and stop
    {"cli"},                                            # the `bench` command
    {"__main__"},
]
RANK = {part: n for n, layer in enumerate(LAYERS) for part in layer}
LEAVES = LAYERS[0]
ROOT = {"__init__", "__version__"}          # the package itself: its version, imported by anyone
# parts narrower than their layer: part -> the only parts it may import
ONLY = {"server": set().union(*LAYERS[:4]),             # HTTP only: values, formats, the store, names; no core
        "servicelink": set(LEAVES),                     # the CLI's and MCP's way to the running service: HTTP alone
        "mcp": LEAVES | {"servicelink"}}                # the stdio MCP server, a client of the service
# parts that only some may import: part -> who may (the core and below know no wire format)
IMPORTED_ONLY_BY = {"formats": {"server", "api", "dashboard", "service", "cli"}}


def imported_parts(source: str, module: str) -> set[str]:
    """Every part of benchwarmers (its top-level module or package) that `source`, the text of the dotted
    `module`, imports anywhere in the file, functions included."""
    package = module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = [*base, *(node.module.split(".") if node.module else [])]
            names = [".".join(target)] if node.module else [".".join([*target, a.name]) for a in node.names]
        else:
            continue
        found |= {name.split(".")[1] for name in names if name.startswith("benchwarmers.")}
    return found


def violations(part: str, used: set[str]) -> set[str]:
    used = used - {part} - ROOT
    upward = {u for u in used if RANK.get(u, len(LAYERS)) >= RANK[part]}
    narrowed = used - ONLY[part] if part in ONLY else set()
    kept_out = {u for u in used if u in IMPORTED_ONLY_BY and part not in IMPORTED_ONLY_BY[u]}
    return upward | narrowed | kept_out


def parts_of_package() -> set[str]:
    return {path.relative_to(PACKAGE).with_suffix("").parts[0] for path in PACKAGE.rglob("*.py")} - ROOT


def test_every_part_has_its_layer():
    unplaced = parts_of_package() - set(RANK)
    assert not unplaced, "place these in LAYERS: " + ", ".join(sorted(unplaced))
    assert not set().union(*LAYERS) - parts_of_package(), "LAYERS names parts that are gone"
    assert sum(len(layer) for layer in LAYERS) == len(RANK), "a part is in two layers"


def test_no_module_imports_upward():
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        module = ".".join(["benchwarmers", *rel.parts])
        bad = violations(rel.parts[0], imported_parts(path.read_text(encoding="utf-8"), module))
        if bad:
            problems.append(f"{rel}.py imports {sorted(bad)}")
    assert not problems, "\n".join(problems)


def test_an_upward_import_is_caught_in_every_form():
    for source in ("from ..bench import Bench", "from .. import bench", "import benchwarmers.service.app",
                   "def late():\n    from ..server import guard", "from ..formats import FORMATS"):
        assert violations("core", imported_parts(source, "benchwarmers.core.panel")), source
    assert violations("store", imported_parts("from ..roster import registry", "benchwarmers.store.calls")) \
        == {"roster"}
    assert violations("formats", imported_parts("from ..canonical import Ask\nfrom .base import sse",
                                                "benchwarmers.formats.ollama")) == set()
    assert violations("suite", imported_parts("from ..scheduler.pacing import Held\nfrom ..core.panel import Panel",
                                              "benchwarmers.suite.asker")) == {"scheduler"}
    assert violations("roster", imported_parts("from ..signin.vendors import HANDOFF",
                                               "benchwarmers.roster.registry")) == {"signin"}
    assert violations("core", imported_parts("from ..signin import flows", "benchwarmers.core.route")) \
        == {"signin"}                                   # a part of the same layer is refused too
    assert violations("bench", imported_parts("from . import __version__, keys", "benchwarmers.bench")) == set()


def test_the_http_layer_imports_nothing_above_it():
    """server/ is the bottom of the HTTP side: the handlers (api/, dashboard/), the Bench they are given and the
    service that puts them together (service/) import it, never the other way."""
    for source, part in (("from ..api import admin", "api"), ("from ..dashboard.routes import ROUTES", "dashboard"),
                         ("from ..service.app import App", "service"), ("from ..bench import Bench", "bench"),
                         ("from ..core.panel import Panel", "core"), ("import benchwarmers.cli.main", "cli")):
        assert violations("server", imported_parts(source, "benchwarmers.server.routes")) == {part}, source
    assert violations("server", imported_parts("from ..formats import FORMATS\nfrom ..store import Database\n"
                                               "from .messages import Request", "benchwarmers.server.handler")) == set()
    assert violations("api", imported_parts("from ..service.table import build_table", "benchwarmers.api.x")) \
        == {"service"}
    assert violations("mcp", imported_parts("from ..servicelink import ServiceLink\nfrom ..store import Database",
                                            "benchwarmers.mcp.reach")) == {"store"}
