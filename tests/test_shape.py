"""The package's shape, read from its source: no long parameter lists where the calls are made (core/, providers/,
store/), and one class to each public class name."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "benchwarmers"
LEAN = ("core", "providers", "store")   # the folders whose functions take at most MAX_PARAMETERS
MAX_PARAMETERS = 10


def nodes(folder: Path, kinds: tuple):
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, kinds):
                yield path, node


def functions(folder: Path):
    return nodes(folder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))


def parameters(node) -> list[str]:
    """Every parameter a function takes (positional, keyword-only, *args and **kwargs), less a method's self or cls
    (a dataclass's generated __init__ is not written as a function, so its fields are not counted: grouping values
    into one is the remedy for a long list)."""
    a = node.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    names += [f"*{a.vararg.arg}"] if a.vararg else []
    names += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def test_no_function_in_core_providers_or_store_takes_more_than_ten_parameters():
    long = [f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {getattr(node, 'name', 'lambda')} takes "
            f"{len(parameters(node))}" for folder in LEAN for path, node in functions(PACKAGE / folder)
            if len(parameters(node)) > MAX_PARAMETERS]
    assert not long, ("Group related values into a dataclass (one that exists, or a new one) so each of these takes "
                      f"at most {MAX_PARAMETERS} parameters:\n" + "\n".join(long))


def test_the_count_sees_every_kind_of_parameter():
    tree = ast.parse("class C:\n def f(self, a, /, b, *c, d, **e): pass\n def g(cls): pass\n"
                     "def h(x, self): pass\n")
    f, g, h = sorted((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), key=lambda n: n.lineno)
    assert parameters(f) == ["a", "b", "d", "*c", "**e"] and parameters(g) == [] and parameters(h) == ["x", "self"]


def test_each_public_class_name_is_defined_once_in_the_package():
    where: dict[str, list[str]] = {}
    for path, node in nodes(PACKAGE, (ast.ClassDef,)):
        if not node.name.startswith("_"):
            where.setdefault(node.name, []).append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    twice = [f"{name}: {', '.join(places)}" for name, places in sorted(where.items()) if len(places) > 1]
    assert not twice, ("A public class name stands for one class: rename all but one of each (a name that says which "
                       "kind it is), or make a module's own helper private (_Name):\n" + "\n".join(twice))
