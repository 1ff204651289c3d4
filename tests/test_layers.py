"""The package's layers, read from its imports (ast): nothing imports upward."""
from __future__ import annotations

import ast
from pathlib import Path

import benchwarmers

PACKAGE = Path(benchwarmers.__file__).parent
# value types, errors, redaction, words, numbers and JSON read strictly: anyone may use them
LEAVES = {"canonical", "errors", "redaction", "words", "numbers", "strictjson"}
# part -> the only other parts of benchwarmers it may import
ONLY = {"errors": set(), "redaction": set(), "words": set(), "numbers": set(), "strictjson": set(),
        "canonical": {"errors"},
        "formats": LEAVES, "providers": LEAVES, "store": LEAVES,
        "connect": set(), "signin": LEAVES | {"connect", "providers"}, "baseurls": set()}    # the provider table and its sign-in flows
# part -> parts of benchwarmers it must not import
NEVER = {"core": {"server", "api", "dashboard", "cli", "mcp", "client", "formats"},
         "roster": {"server", "api", "dashboard", "cli", "mcp", "client", "formats", "core"},
         "scheduler": {"server", "api", "dashboard", "cli", "mcp", "client", "formats"},
         "suite": {"server", "api", "dashboard", "cli", "mcp", "client", "formats", "scheduler"},
         "catalog": {"server", "api", "dashboard", "cli", "mcp", "client", "formats", "core", "roster", "scheduler"},
         "mcp": {"server", "api", "dashboard", "cli", "core", "roster", "catalog", "scheduler", "formats", "providers",
                 "store"}}


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
    used = used - {part}
    return (used - ONLY[part] if part in ONLY else set()) | (used & NEVER.get(part, set()))


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
    for source in ("from ..server.bench import Bench", "from .. import server", "import benchwarmers.server.app",
                   "def late():\n    from ..server import guard"):
        assert violations("core", imported_parts(source, "benchwarmers.core.panel")) == {"server"}, source
    assert violations("store", imported_parts("from ..roster import registry", "benchwarmers.store.calls")) \
        == {"roster"}
    assert violations("formats", imported_parts("from ..canonical import Ask\nfrom .base import sse",
                                                "benchwarmers.formats.ollama")) == set()
    assert violations("suite", imported_parts("from ..scheduler.pacing import Held\nfrom ..core.panel import Panel",
                                              "benchwarmers.suite.asker")) == {"scheduler"}
    assert violations("signin", imported_parts("from .roster import registry\nfrom .connect import HANDOFF",
                                               "benchwarmers.signin")) == {"roster"}       # a top-level module too
