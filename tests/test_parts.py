"""Handlers declare the parts of the Bench they use: each `bench` parameter of the API's and the dashboard's
handlers is a Protocol (or `object`, for a handler that uses no part).

The type checker proves most of that (scripts/check.py runs mypy over the package; CONTRIBUTING.md says how): that
a handler uses only the parts its Protocol declares (`bench.<name>`, and `self.bench` in a class given it), hands
`bench` only to functions whose Protocol its own covers (through the settings page's SECTIONS and the gateway's
header choices too: both are typed), and that the real Bench meets every handler's Protocol with the declared types
(the service's route table is a list of Route[Bench]; each page module meets PageContract, whose `data` and ACTIONS
take the Bench).

Left here, read from the source (ast), is what a type checker cannot say: no Protocol declares a part its functions
leave unused, nor only combines others (a handler needing more than a helper's Protocol extends it and names the
rest); only the modules in WHOLE_BENCH take the whole Bench; and the MCP tools' in-process calls
(api/mcpreach.py), which find their routes by path at run time, are given a Protocol covering every route they
reach. A class given the bench (`__init__(..., bench: P)`, kept as `self.bench`) is read as one function: every
`self.bench` in its methods is a use of P."""
from __future__ import annotations

import ast
import importlib
import inspect
import sys
import types
import typing
from pathlib import Path

import benchwarmers

PACKAGE = Path(benchwarmers.__file__).parent
HANDLER_DIRS = ("api", "dashboard")
# modules still given the whole Bench, and why (their Protocol-typed functions are checked all the same)
WHOLE_BENCH = {
    "dashboard/routes.py": "serves every page: hands the bench to whichever page's data or action is asked for",
    "dashboard/web.py": "web.action runs any page's action, so it is given the whole Bench",
    "dashboard/contract.py": "the contract every page meets: a page's data is given the Bench (any page's Protocol)",
}
NOTHING = object   # the annotation of a handler that uses no part of the bench


def reached_routes(ns: dict) -> list:
    """The handlers of the routes a module's `self.route(method, path)` calls name, matched in the service's table
    (a part of an f-string path read as one segment); a call naming its route otherwise is not read."""
    from benchwarmers.service.table import build_table
    table, found = build_table(), []
    for call in ast.walk(ast.parse(Path(ns["__file__"]).read_text(encoding="utf-8"))):
        if isinstance(call, ast.Call) and ast.unparse(call.func) == "self.route":
            method, path = call.args[0], call.args[1]
            text = path.value if isinstance(path, ast.Constant) else "".join(
                v.value if isinstance(v, ast.Constant) else "x" for v in path.values)
            found.append(table.match(method.value, text, "gateway")[0].handler)
    return found


# functions that hand `bench` on through a table, not by name: (module, function) -> every callable it may reach
THROUGH_TABLE = {
    ("benchwarmers.dashboard.pages.settings", "data"): lambda ns: [s.read for s in ns["SECTIONS"]],
    ("benchwarmers.api.gateway", "first_sent"): lambda ns: [ns["handler_for"](fmt, route) for fmt in
                                                            ns["formats"].FORMATS.values() for route in fmt.ROUTES],
    ("benchwarmers.api.mcpreach", "route"): reached_routes,
}


def handler_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module under api/ and dashboard/."""
    found = {}
    for folder in HANDLER_DIRS:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            rel = path.relative_to(PACKAGE).with_suffix("")
            found[".".join(["benchwarmers", *rel.parts])] = path
    return found


def relative(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def resolve(text: str | None, namespace: dict):
    """An annotation's object (a Protocol, Bench, object), `X | None` read as X; None when unannotated."""
    if text is None or text is inspect.Parameter.empty:
        return None
    hint = eval(text, dict(namespace)) if isinstance(text, str) else text
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        kept = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = kept[0] if len(kept) == 1 else hint
    return hint


def is_protocol(hint) -> bool:
    return isinstance(hint, type) and bool(getattr(hint, "_is_protocol", False))


def declared(proto) -> set[str]:
    """The names a Protocol declares, its bases' included: annotated attributes, methods and properties."""
    if proto is NOTHING:
        return set()
    names = set()
    for cls in proto.__mro__:
        if cls in (object, typing.Protocol, typing.Generic) or not is_protocol(cls):
            continue
        names |= set(cls.__dict__.get("__annotations__", {}))
        names |= {n for n, v in cls.__dict__.items()
                  if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    return names


def bench_param(fn: ast.FunctionDef) -> ast.arg | None:
    args = fn.args
    return next((a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg == "bench"), None)


def functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and bench_param(n)]


def keeping_classes(tree: ast.AST) -> list[tuple[ast.ClassDef, ast.FunctionDef]]:
    """Each class given the bench, with its __init__."""
    found = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is not None and bench_param(init):
            found.append((cls, init))
    return found


def is_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "bench"


def is_kept(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "bench" and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def own_names(fn: ast.FunctionDef, match=is_name):
    """Every `bench` (or, in a class's methods, `self.bench`) in the function, with its parent, leaving out nested
    functions that take their own."""
    parents, todo, found = {}, list(fn.body), []
    for stmt in fn.body:
        parents[stmt] = fn
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and bench_param(node):
            continue
        if match(node):
            found.append((node, parents[node]))
            continue
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            todo.append(child)
    return found


def receiving(callee, call: ast.Call, name: ast.AST):
    """The annotation (resolved) of the callee's parameter that `bench` is passed to."""
    params = list(inspect.signature(callee).parameters.values())
    if name in call.args:
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        param = positional[call.args.index(name)]
    else:
        param = inspect.signature(callee).parameters[next(k.arg for k in call.keywords if k.value is name)]
    found = inspect.unwrap(callee)   # a class's annotations are read in its module
    return resolve(param.annotation, getattr(found, "__globals__", None) or vars(sys.modules[found.__module__]))


def callees(fn: ast.FunctionDef, call: ast.Call, namespace: dict) -> list:
    """What a call handing `bench` on may reach: the function it names, or every callable of its table."""
    table = THROUGH_TABLE.get((namespace.get("__name__"), fn.name))
    return table(namespace) if table else [eval(ast.unparse(call.func), dict(namespace))]


def uses(fn: ast.FunctionDef, namespace: dict, match=is_name) -> tuple[set[str], list[str]]:
    """The parts the function uses: its own `bench.<name>`, and all that the Protocols of what it hands `bench` to
    declare; and the hand-offs this test cannot read (the type checker has checked them; here they would count
    as unused parts)."""
    used, unread = set(), []
    for name, parent in own_names(fn, match):
        if isinstance(parent, ast.Attribute):
            used.add(parent.attr)
        elif isinstance(parent, (ast.Call, ast.keyword)):
            call = parent if isinstance(parent, ast.Call) else next(
                c for c in ast.walk(fn) if isinstance(c, ast.Call) and parent in c.keywords)
            try:
                hints = [receiving(c, call, name) for c in callees(fn, call, namespace)]
            except Exception as e:   # a callee the test cannot read is named, not passed over
                unread.append(f"{fn.name} hands `bench` to {ast.unparse(call.func)} ({type(e).__name__}: {e})")
                continue
            used |= set().union(*(declared(h) for h in hints if h is NOTHING or is_protocol(h)))
    return used, unread


def check_module(source: str, namespace: dict, where: str, per_protocol: dict) -> list[str]:
    """Each Protocol's uses in one module, gathered into per_protocol; the hand-offs not read."""
    unread, tree = [], ast.parse(source)
    methods = {init: [f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and f is not init] for cls, init in keeping_classes(tree)}
    for fn in functions(tree):
        ann = bench_param(fn).annotation
        hint = resolve(ast.unparse(ann) if ann is not None else None, namespace)
        if hint is not NOTHING and not is_protocol(hint):
            continue   # the whole Bench (or none): test_no_handler_takes_the_whole_bench says where that may be
        used, found = uses(fn, namespace)
        for method in methods.get(fn, []):
            more, wrong = uses(method, namespace, is_kept)
            used, found = used | more, found + wrong
        unread += [f"{where}: {p}" for p in found]
        per_protocol.setdefault(hint, set()).update(used)
    return unread


def all_protocols() -> tuple[dict, list[str]]:
    per_protocol, unread = {}, []
    for module, path in handler_modules().items():
        namespace = vars(importlib.import_module(module))
        unread += check_module(path.read_text(encoding="utf-8"), namespace, relative(path), per_protocol)
    per_protocol.pop(NOTHING, None)
    return per_protocol, unread


def unused_parts(per_protocol: dict) -> list[str]:
    return [f"{p.__module__}.{p.__name__}: {sorted(declared(p) - used)}"
            for p, used in per_protocol.items() if declared(p) - used]


def test_no_protocol_declares_a_part_its_functions_leave_unused():
    per_protocol, unread = all_protocols()
    assert len(per_protocol) >= 20, "the handlers' Protocols were not found"
    assert not unread, "hand-offs of `bench` this test cannot read:\n" + "\n".join(unread)
    unused = unused_parts(per_protocol)
    assert not unused, "declared but not used (drop them):\n" + "\n".join(unused)


def test_no_protocol_only_combines_others():
    """`class X(A, B, Protocol)` with nothing of its own says nothing A and B do not: extend one, name the rest."""
    combining = []
    for path in handler_modules().values():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and "Protocol" in map(ast.unparse, node.bases) and \
                    len(node.bases) > 2 and all(isinstance(s, (ast.Pass, ast.Expr)) for s in node.body):
                combining.append(f"{relative(path)}: {node.name}({', '.join(map(ast.unparse, node.bases))})")
    assert not combining, "Protocols that only combine others:\n" + "\n".join(combining)


def test_no_handler_takes_the_whole_bench():
    whole = []
    for module, path in handler_modules().items():
        if relative(path) in WHOLE_BENCH:
            continue
        namespace = vars(importlib.import_module(module))
        for fn in functions(ast.parse(path.read_text(encoding="utf-8"))):
            ann = bench_param(fn).annotation
            hint = resolve(ast.unparse(ann) if ann is not None else None, namespace)
            if hint is not NOTHING and not is_protocol(hint):
                whole.append(f"{relative(path)}: {fn.name}(bench: {ast.unparse(ann) if ann else 'unannotated'})")
    assert not whole, "declare the parts these use (a Protocol) instead:\n" + "\n".join(whole)
    assert all((PACKAGE / name).exists() for name in WHOLE_BENCH), "WHOLE_BENCH names a module that is gone"


def test_the_mcp_tools_reach_only_routes_their_protocol_covers():
    """api/mcpreach.py calls gateway routes by path, found in the route table at run time: the type checker
    cannot follow that, so the Protocol its `bench` has must declare what every route it reaches uses."""
    from benchwarmers.api import mcpreach
    ns = vars(mcpreach)
    reached = reached_routes(ns)
    assert len(reached) >= 4, "the routes the MCP tools call were not found"
    have = declared(mcpreach.McpReachParts)
    missing = {f"{h.__name__}: {sorted(declared(hint) - have)}" for h in reached
               if is_protocol(hint := resolve(inspect.signature(h).parameters["bench"].annotation,
                                               h.__globals__)) and declared(hint) - have}
    assert not missing, "McpReachParts lacks what these routes use:\n" + "\n".join(sorted(missing))


def test_an_unused_part_is_caught():
    """The check above fails on a Protocol declaring more than its functions use, directly or through a helper,
    and names a hand-off it cannot read."""
    from benchwarmers.api import history, models
    from benchwarmers.store import Database

    class Wider(typing.Protocol):
        db: Database
        registry: object

    namespace = {**vars(history), "models_view": models.models_view, "Wider": Wider}
    per_protocol: dict = {}
    assert check_module("def h(req, bench: Wider):\n    return bench.db", namespace, "x.py", per_protocol) == []
    assert unused_parts(per_protocol) == [f"{Wider.__module__}.Wider: ['registry']"]
    per_protocol = {}
    check_module("def h(req, bench: Wider):\n    return history_page(bench, {}), bench.registry", namespace, "x.py",
                 per_protocol)
    assert unused_parts(per_protocol) == []          # history_page's Records declares db
    assert "not_a_function" in check_module("def h(req, bench: Wider):\n    return not_a_function(bench)",
                                            namespace, "x.py", {})[0]
    per_protocol = {}
    check_module("class C:\n    def __init__(self, bench: Wider):\n        self.bench = bench\n"
                 "    def m(self):\n        return self.bench.registry, self.bench.db", namespace, "x.py", per_protocol)
    assert unused_parts(per_protocol) == []          # a kept bench's uses count
