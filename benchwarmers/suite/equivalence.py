"""Whether a planted bug changes what the code does, read from the code when there are no tests to run: the changed
line must be reachable, and each operator has its own test that the result differs (a `>` that becomes `>=` in
`if x > hi: return hi` gives the same answer at the boundary, so that mutant is no bug)."""
from __future__ import annotations

import ast
import re

TERMINAL = (ast.Return, ast.Raise, ast.Continue, ast.Break)
SYMMETRIC = {"min", "max", "hypot", "gcd", "lcm", "add", "mul", "eq", "ne", "and_", "or_", "xor", "isdisjoint"}
RENAMED = re.compile(r"^`(\w+)` became `(\w+)`$")


def verdict(func, mutation) -> tuple[bool, str]:
    """(True, how the mutant behaves differently) or (False, why it may well behave the same)."""
    node = mutation.node
    if node is None:
        return False, "the change cannot be traced to the code"
    if unreachable(func, node):
        return False, "the changed line can never run (it follows a return, raise, continue or break, or sits "\
                      "under `if False`/`if TYPE_CHECKING`)"
    return CHECKS[mutation.operator](func, node, mutation)


# ---- reachability -------------------------------------------------------------------------------

def unreachable(func, node) -> bool:
    line = getattr(node, "lineno", None)
    return line is not None and any(a <= line <= b for a, b in dead_spans(func.body))


def dead_spans(block: list) -> list[tuple[int, int]]:
    """Line spans of statements that never run: after a return, raise, continue or break in the same block, and
    the body of `if False:` or `if TYPE_CHECKING:`."""
    spans, ended = [], False
    for st in block:
        if ended:
            spans.append((st.lineno, st.end_lineno))
            continue
        if isinstance(st, ast.If) and never_true(st.test):
            spans += [(s.lineno, s.end_lineno) for s in st.body]
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(st, name, None)
            if isinstance(inner, list) and not (name == "body" and isinstance(st, ast.If) and never_true(st.test)):
                spans += dead_spans(inner)
        for handler in getattr(st, "handlers", []):
            spans += dead_spans(handler.body)
        ended = isinstance(st, TERMINAL)
    return spans


def never_true(test) -> bool:
    if isinstance(test, ast.Constant):
        return not test.value
    return isinstance(test, (ast.Name, ast.Attribute)) and ast.unparse(test).endswith("TYPE_CHECKING")


# ---- per operator ------------------------------------------------------------------------------

def parent_of(func, node):
    for parent in ast.walk(func):
        if node in ast.iter_child_nodes(parent):
            return parent
    return None


def same(a, b) -> bool:
    return a is not None and b is not None and ast.dump(a) == ast.dump(b)


def off_by_one(func, node, m) -> tuple[bool, str]:
    if not isinstance(node, ast.Compare):
        return True, "a number changes by one wherever the line runs"
    left, right = node.left, node.comparators[0]
    parent = parent_of(func, node)
    if isinstance(parent, ast.If) and parent.test is node and len(parent.body) == 1:
        body = parent.body[0]
        value = body.value if isinstance(body, (ast.Return, ast.Assign)) else None
        sides = (left, right)
        if isinstance(body, ast.Return) and any(same(value, s) for s in sides):
            return False, "at the boundary the branch returns a value equal to the one compared (a clamp)"
        if isinstance(body, ast.Assign) and value is not None and len(body.targets) == 1 and \
                {ast.unparse(body.targets[0]), ast.unparse(value)} == {ast.unparse(s) for s in sides}:
            return False, "at the boundary the branch assigns a value the variable already holds"
    if isinstance(parent, ast.IfExp) and parent.test is node and \
            {ast.dump(parent.body), ast.dump(parent.orelse)} == {ast.dump(left), ast.dump(right)}:
        return False, "at the boundary both results are equal (a min or a max)"
    return True, "where the two sides are equal, the other branch now runs"


def flipped(func, node, m) -> tuple[bool, str]:
    parent = parent_of(func, node)
    if isinstance(parent, ast.If) and parent.test is node and not parent.orelse and \
            all(isinstance(s, ast.Pass) for s in parent.body):
        return False, "both branches do nothing"
    return True, "the test is negated: every run that reaches it takes the other way"


def wrong_variable(func, node, m) -> tuple[bool, str]:
    names = RENAMED.match(m.note)
    if names:
        a, b = names.groups()
        for st in ast.walk(func):
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) and \
                    isinstance(st.value, ast.Name) and {st.targets[0].id, st.value.id} == {a, b}:
                return False, "the two variables may hold the same value (one is assigned from the other)"
    return True, "another variable's value is used"


def dropped_guard(func, node, m) -> tuple[bool, str]:
    body = node.body[0]
    block, index = enclosing_block(func, node)
    after = block[index + 1:] if block is not None else []
    if isinstance(body, ast.Return) and (body.value is None or is_none(body.value)) and block is func.body and \
            all(isinstance(s, ast.Pass) or (isinstance(s, ast.Return) and (s.value is None or is_none(s.value)))
                for s in after):
        return False, "the function returns None right after the guard anyway"
    if isinstance(body, ast.Continue) and not after:
        return False, "the loop goes on to its next turn right after the guard anyway"
    if isinstance(body, ast.Return) and after and isinstance(after[0], ast.Return) and same(body.value, after[0].value):
        return False, "the statement after the guard returns the same"
    return True, "the case the guard stopped now runs the code below it"


def enclosing_block(func, node) -> tuple[list | None, int]:
    for parent in ast.walk(func):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and node in block:
                return block, block.index(node)
    return None, 0


def is_none(value) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def swapped(func, node, m) -> tuple[bool, str]:
    callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
    if callee in SYMMETRIC:
        return False, "the function called gives the same answer with its arguments either way round"
    return True, "the call gets its arguments the other way round"


def wrong_default(func, node, m) -> tuple[bool, str]:
    name = parameter_of(func, node)
    if name and not any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                        for n in ast.walk(func)):
        return False, "the parameter is never read"
    return True, "a call that leaves the argument out gets another value"


def parameter_of(func, default) -> str | None:
    args = func.args
    positional = args.posonlyargs + args.args
    for arg, value in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if value is default:
            return arg.arg
    for arg, value in zip(args.kwonlyargs, args.kw_defaults):
        if value is default:
            return arg.arg
    return None


def await_close(func, node, m) -> tuple[bool, str]:
    if isinstance(node, ast.Await):
        call = node.value
        if isinstance(call, ast.Call) and getattr(call.func, "attr", getattr(call.func, "id", "")) == "sleep" and \
                call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0:
            return False, "`sleep(0)` only yields to other tasks"
        return True, "the awaited call no longer runs: its coroutine is made and dropped"
    receiver = ast.unparse(node.value.func.value)
    for w in ast.walk(func):
        if isinstance(w, (ast.With, ast.AsyncWith)) and w.lineno < node.lineno <= w.end_lineno and any(
                ast.unparse(item.optional_vars or item.context_expr) == receiver for item in w.items):
            return False, "a `with` block closes it anyway"
    return True, f"`{receiver}` is left open"


CHECKS = {"off_by_one": off_by_one, "flipped_comparison": flipped, "wrong_variable": wrong_variable,
          "dropped_guard": dropped_guard, "swapped_arguments": swapped, "wrong_default": wrong_default,
          "missing_await_close": await_close}
