"""Handlers declare the parts of the Bench they use: each `bench` parameter of the API's and the dashboard's
handlers is a Protocol (or `object`, for a handler that uses no part), read here from the source (ast). Every
`bench.<name>` a function uses is declared on its Protocol, a Protocol names nothing its functions leave unused,
a function hands `bench` only to functions whose Protocol it covers, and every declared name is on the real Bench
with the declared type. A class given the bench (`__init__(..., bench: P)`, kept as `self.bench`) is read as one
function: every `self.bench` in its methods is a use of P."""
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


def receiving(callee, call: ast.Call, name: ast.Name):
    """The annotation (resolved) of the callee's parameter that `bench` is passed to."""
    params = list(inspect.signature(callee).parameters.values())
    if name in call.args:
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        param = positional[call.args.index(name)]
    else:
        param = inspect.signature(callee).parameters[next(k.arg for k in call.keywords if k.value is name)]
    found = inspect.unwrap(callee)   # a class's annotations are read in its module
    return resolve(param.annotation, getattr(found, "__globals__", None) or vars(sys.modules[found.__module__]))


def is_test(name: ast.Name, parent: ast.AST) -> bool:
    if isinstance(parent, (ast.If, ast.IfExp, ast.While)):
        return parent.test is name
    if isinstance(parent, ast.Compare):
        return all(isinstance(c, ast.Constant) and c.value is None for c in [parent.left, *parent.comparators]
                   if c is not name)
    return isinstance(parent, ast.BoolOp) or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)


def uses(fn: ast.FunctionDef, namespace: dict, match=is_name) -> tuple[set[str], list[str]]:
    """The parts the function uses (its own `bench.<name>`, and the Protocols of what it hands `bench` to), and
    what is wrong: `bench` rebound, kept or handed on in a way not read here, or to a function wanting more.
    A class's __init__ may keep it as `self.bench` (the class's methods are read for it)."""
    used, problems = set(), []
    for name, parent in own_names(fn, match):
        if match is is_name and fn.name == "__init__" and isinstance(parent, ast.Assign) and parent.value is name \
                and len(parent.targets) == 1 and is_kept(parent.targets[0]):
            continue
        if isinstance(name.ctx, ast.Store):
            problems.append(f"{fn.name} rebinds `bench`")
        elif isinstance(parent, ast.Attribute):
            used.add(parent.attr)
        elif is_test(name, parent):
            continue   # `if bench`, `bench is None`: an optional bench, no part read
        elif isinstance(parent, (ast.Call, ast.keyword)):
            call = parent if isinstance(parent, ast.Call) else next(
                c for c in ast.walk(fn) if isinstance(c, ast.Call) and parent in c.keywords)
            where = ast.unparse(call.func)
            try:
                table = THROUGH_TABLE.get((namespace.get("__name__"), fn.name))
                hints = [receiving(c, call, name) for c in (table(namespace) if table else
                                                              [eval(where, dict(namespace))])]
            except Exception as e:   # a callee the test cannot read is not taken on trust
                problems.append(f"{fn.name} hands `bench` to {where}, not read here ({type(e).__name__}: {e})")
                continue
            for hint in hints:
                if hint is NOTHING or is_protocol(hint):
                    used |= declared(hint)
                else:
                    problems.append(f"{fn.name} hands `bench` to {where}, which takes {hint!r}, not a Protocol")
        else:
            problems.append(f"{fn.name} uses `bench` as {ast.unparse(parent)!r}: only bench.<part> or a call")
    return used, problems


def check_module(source: str, namespace: dict, where: str, per_protocol: dict) -> list[str]:
    """The problems of one module's functions; each Protocol's uses gathered into per_protocol."""
    problems, tree = [], ast.parse(source)
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
        problems += [f"{where}: {p}" for p in found]
        undeclared = used - declared(hint)
        if undeclared:
            problems.append(f"{where}: {fn.name} uses {sorted(undeclared)}, not declared on {hint.__name__}")
        per_protocol.setdefault(hint, set()).update(used)
    return problems


def all_protocols() -> tuple[dict, list[str]]:
    per_protocol, problems = {}, []
    for module, path in handler_modules().items():
        namespace = vars(importlib.import_module(module))
        problems += check_module(path.read_text(encoding="utf-8"), namespace, relative(path), per_protocol)
    per_protocol.pop(NOTHING, None)
    return per_protocol, problems


def test_every_handler_uses_only_the_parts_it_declares():
    per_protocol, problems = all_protocols()
    assert len(per_protocol) >= 20, "the handlers' Protocols were not found"
    assert not problems, "\n".join(problems)


def test_no_protocol_declares_a_part_its_functions_leave_unused():
    per_protocol, _ = all_protocols()
    unused = [f"{p.__module__}.{p.__name__}: {sorted(declared(p) - used)}"
              for p, used in per_protocol.items() if declared(p) - used]
    assert not unused, "declared but not used (drop them):\n" + "\n".join(unused)


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


def test_every_declared_part_is_on_the_real_bench_with_its_type(app):
    bench = app.bench
    per_protocol, _ = all_protocols()
    wrong = []
    for proto in per_protocol:
        hints = typing.get_type_hints(proto)
        for name in sorted(declared(proto)):
            place = f"{proto.__name__}.{name}"
            if not hasattr(bench, name):
                wrong.append(f"{place}: the Bench has no {name}")
                continue
            spec, real = inspect.getattr_static(proto, name, None), getattr(bench, name)
            if isinstance(spec, property):
                hint = typing.get_type_hints(spec.fget)["return"]
                if not isinstance(real, hint):
                    wrong.append(f"{place}: {real!r} is not {hint}")
            elif callable(spec):
                wanted = list(inspect.signature(spec).parameters)[1:]
                if not callable(real) or list(inspect.signature(real).parameters) != wanted:
                    wrong.append(f"{place}: the Bench's {name} is not a method taking {wanted}")
            elif not isinstance(real, hints[name]):
                wrong.append(f"{place}: {type(real).__name__} is not {hints[name]}")
    assert not wrong, "\n".join(wrong)


def test_an_undeclared_part_is_caught():
    """The checks above fail on a handler reaching past its Protocol, directly or through a helper."""
    from benchwarmers.api import history, models
    namespace = {**vars(history), "models_view": models.models_view}
    for source, wanted in (
            ("def h(req, bench: Records):\n    return bench.registry.models()", "uses ['registry']"),
            ("def h(req, bench: Records):\n    return models_view(bench)", "not declared on Records"),
            ("def h(req, bench: Records):\n    keep = bench\n    return keep.db", "only bench.<part> or a call"),
            ("def h(req, bench: object):\n    return bench.db", "not declared on object"),
            ("def h(req, bench: Records):\n    return len(bench)", "which takes"),
            ("def h(req, bench: Records):\n    bench = {}\n    return bench", "rebinds"),
            ("class C:\n    def __init__(self, bench: Records):\n        self.bench = bench\n"
             "    def m(self):\n        return self.bench.registry", "uses ['registry']"),
            ("class C:\n    def __init__(self, bench: Records):\n        self.kept = bench", "only bench.<part>")):
        problems = check_module(source, namespace, "x.py", {})
        assert any(wanted in p for p in problems), (source, problems)
    assert check_module("def h(req, bench: Records):\n    return history_page(bench, {})", namespace, "x.py", {}) \
        == []
    assert "Records" in namespace and "Bench" not in vars(history)
