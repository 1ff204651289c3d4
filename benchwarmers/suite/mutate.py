"""Planting bugs by AST mutation: each operator finds places in a function and rewrites only those lines.

The mutant is the original file with one small textual change (so it differs from the clean control in the
intended lines only) and must still parse.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

NEGATE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
          ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
SHIFT = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
OP_TEXT = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
CLOSERS = ("close", "release", "unlock", "shutdown")
OPERATORS = ("off_by_one", "flipped_comparison", "wrong_variable", "dropped_guard", "swapped_arguments",
             "wrong_default", "missing_await_close")


@dataclass
class Mutation:
    operator: str
    first: int                      # first line changed in the original (1-based)
    last: int                       # last line changed
    new: list                       # the lines that take their place (empty: they are removed)
    note: str                       # what changed, in words
    node: object = field(default=None, repr=False, compare=False)   # the AST node changed (checks read it)

    def apply(self, lines: list) -> tuple[list, list]:
        """(mutant lines, [first, last] of the buggy lines in the mutant)."""
        mutant = lines[:self.first - 1] + self.new + lines[self.last:]
        if self.new:
            return mutant, [self.first, self.first + len(self.new) - 1]
        # a removed line is pointed at by its neighbours: the line before the gap and the one now in it
        return mutant, [max(1, self.first - 1), min(max(len(mutant), 1), self.first)]


def char_col(line: str, byte_col: int | None) -> int:
    """ast gives UTF-8 byte offsets; text needs character offsets."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def one_line(node) -> bool:
    return getattr(node, "lineno", None) is not None and node.lineno == node.end_lineno


def splice(lines: list, lineno: int, start: int, end: int | None, text: str) -> str:
    """Line `lineno` with byte columns start..end replaced by `text`."""
    line = lines[lineno - 1]
    a, b = char_col(line, start), char_col(line, end)
    return line[:a] + text + line[b:]


def whole_lines(lines: list, node) -> bool:
    """The statement alone on its lines (nothing before it, nothing after it but a comment)."""
    head = lines[node.lineno - 1][:char_col(lines[node.lineno - 1], node.col_offset)]
    tail = lines[node.end_lineno - 1][char_col(lines[node.end_lineno - 1], node.end_col_offset):]
    return not head.strip() and (not tail.strip() or tail.strip().startswith("#"))


# ---- the operators ----------------------------------------------------------------------------------

def compare_ops(lines: list, func, table: dict, operator: str) -> list:
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in table):
            continue
        left, right = node.left, node.comparators[0]
        if not (one_line(node) and left.end_lineno == right.lineno == node.lineno):
            continue
        line = lines[node.lineno - 1]
        a, b = char_col(line, left.end_col_offset), char_col(line, right.col_offset)
        gap = line[a:b]
        old, new = OP_TEXT[type(node.ops[0])], OP_TEXT[table[type(node.ops[0])]]
        pattern = r"(?<![=<>!\w])" + re.escape(old).replace(r"\ ", r"\s+") + r"(?![=<>\w])"
        if len(re.findall(pattern, gap)) != 1:
            continue
        changed = line[:a] + re.sub(pattern, new, gap) + line[b:]
        out.append(Mutation(operator, node.lineno, node.lineno, [changed], f"`{old}` became `{new}`", node))
    return out


def off_by_one(lines: list, func) -> list:
    out = compare_ops(lines, func, SHIFT, "off_by_one")
    for parent in ast.walk(func):
        if not isinstance(parent, (ast.Subscript, ast.Slice, ast.BinOp, ast.Compare)):
            continue
        for node in ast.iter_child_nodes(parent):
            if (isinstance(node, ast.Constant) and type(node.value) is int and one_line(node)
                    and 0 <= node.value < 10**6):
                new = str(node.value + 1)
                out.append(Mutation("off_by_one", node.lineno, node.lineno,
                                    [splice(lines, node.lineno, node.col_offset, node.end_col_offset, new)],
                                    f"`{node.value}` became `{new}`", node))
    return out


def flipped_comparison(lines: list, func) -> list:
    return compare_ops(lines, func, NEGATE, "flipped_comparison")


def local_names(func) -> list:
    """Parameters and names the function assigns, in order of first binding (never self or cls)."""
    names = [a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs]
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
            names.append(node.id)
    return [n for n in names if n not in ("self", "cls", "_")]


def wrong_variable(lines: list, func) -> list:
    names = local_names(func)
    bound = {a.arg: func.lineno for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound[node.id] = min(bound.get(node.id, node.lineno), node.lineno)
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names and one_line(node)):
            continue
        others = [n for n in names if n != node.id and bound.get(n, 10**9) < node.lineno]
        if others:
            other = others[(node.lineno + node.col_offset) % len(others)]
            out.append(Mutation("wrong_variable", node.lineno, node.lineno,
                                [splice(lines, node.lineno, node.col_offset, node.end_col_offset, other)],
                                f"`{node.id}` became `{other}`", node))
    return out


def dropped_guard(lines: list, func) -> list:
    out = []
    for node in ast.walk(func):
        if (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
                and isinstance(node.body[0], (ast.Return, ast.Raise, ast.Continue, ast.Break))
                and whole_lines(lines, node)):
            out.append(Mutation("dropped_guard", node.lineno, node.end_lineno or node.lineno, [],
                                f"the guard `if {ast.unparse(node.test)}:` was removed", node))
    return out


def swapped_arguments(lines: list, func) -> list:
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and len(node.args) >= 2 and one_line(node)):
            continue
        a, b = node.args[0], node.args[1]
        if any(isinstance(x, (ast.Starred, ast.Constant)) for x in (a, b)):   # swapping a literal in is no typo
            continue
        line = lines[node.lineno - 1]
        ta = line[char_col(line, a.col_offset):char_col(line, a.end_col_offset)]
        tb = line[char_col(line, b.col_offset):char_col(line, b.end_col_offset)]
        if ta == tb:
            continue
        start, mid, end = (char_col(line, x) for x in (a.col_offset, a.end_col_offset, b.col_offset))
        changed = line[:start] + tb + line[mid:end] + ta + line[char_col(line, b.end_col_offset):]
        out.append(Mutation("swapped_arguments", node.lineno, node.lineno, [changed],
                            f"the arguments `{ta}` and `{tb}` were swapped", node))
    return out


def changed_default(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 if value else 1.0
    if isinstance(value, str) and value:
        return ""
    return None


def wrong_default(lines: list, func) -> list:
    out = []
    for node in func.args.defaults + [d for d in func.args.kw_defaults if d is not None]:
        if isinstance(node, ast.Constant) and one_line(node):
            new = changed_default(node.value)
            if new is not None:
                out.append(Mutation("wrong_default", node.lineno, node.lineno,
                                    [splice(lines, node.lineno, node.col_offset, node.end_col_offset, repr(new))],
                                    f"the default `{node.value!r}` became `{new!r}`", node))
    return out


def missing_await_close(lines: list, func) -> list:
    out = []
    for node in ast.walk(func):
        if isinstance(node, ast.Await) and one_line(node) and one_line(node.value):
            line = lines[node.lineno - 1]
            inner = line[char_col(line, node.value.col_offset):char_col(line, node.value.end_col_offset)]
            out.append(Mutation("missing_await_close", node.lineno, node.lineno,
                                [splice(lines, node.lineno, node.col_offset, node.end_col_offset, inner)],
                                "an `await` was dropped", node))
        elif (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in CLOSERS
              and whole_lines(lines, node)):
            out.append(Mutation("missing_await_close", node.lineno, node.end_lineno or node.lineno, [],
                                f"the call `{ast.unparse(node.value)}` was removed", node))
    return out


FINDERS = {"off_by_one": off_by_one, "flipped_comparison": flipped_comparison, "wrong_variable": wrong_variable,
           "dropped_guard": dropped_guard, "swapped_arguments": swapped_arguments, "wrong_default": wrong_default,
           "missing_await_close": missing_await_close}


def mutations(source: str, func, operators=OPERATORS, lines: list | None = None) -> list:
    """Every mutation of `func` (a node of `source`, whose lines the caller may pass) whose function still parses,
    in a stable order. Only the function is parsed again: a change inside it leaves the rest of the file as it was,
    so a large file costs no more per mutant than a small one."""
    lines = source.splitlines() if lines is None else lines
    start = min([func.lineno] + [d.lineno for d in func.decorator_list])
    found = []
    for op in operators:
        for m in FINDERS[op](lines, func):
            mutant, _ = m.apply(lines)
            removed = (m.last - m.first + 1) - len(m.new)
            if mutant != lines and parses_block(mutant[start - 1:func.end_lineno - removed]):
                found.append(m)
    return sorted(found, key=lambda m: (OPERATORS.index(m.operator), m.first, m.note))


def parses_block(block: list) -> bool:
    """A function's lines parse where they stand (an indented method is parsed as the body of an `if`)."""
    text = "\n".join(block)
    return parses("if 1:\n" + text if block and block[0][:1].isspace() else text)


def parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
