"""What the documents and the code name: the docs' files, paths and links; the commands, env vars and pages."""
from __future__ import annotations

import argparse
import ast
import functools
import re
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {"tests", "node_modules", "__pycache__"}    # beside the hidden and the .gitignored ones
TASKS = ROOT / "suite" / "tasks"                         # the suite's task texts quote code, not our docs
PLACEHOLDER = re.compile(r"<[^<>/]+>|\{[^{}/]+\}")       # `benchwarmers/formats/<name>.py`, `runs/{id}`
CHECKED_SUFFIXES = (".py", ".md")                        # a bare `name.py` or `name.md` names a file of ours


@dataclass(frozen=True)
class Mention:
    doc: str       # the document, relative to the checkout
    line: int
    text: str      # what it names, as written
    kind: str      # "link", "path" (backticked) or "code" (a word of a code block)

    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def ignored() -> set[str]:
    """Top-level names that are generated or private (.gitignore's plain entries), never a file the docs may name."""
    names = {".git"}
    gitignore = ROOT / ".gitignore"
    if gitignore.exists():
        for line in gitignore.read_text(encoding="utf-8").splitlines():
            line = line.strip().strip("/")
            if line and not line.startswith("#") and not any(c in line for c in "*?[/"):
                names.add(line)
    return names


def top_level() -> set[str]:
    """The checkout's own top-level files and folders."""
    skip = ignored()
    return {p.name for p in ROOT.iterdir() if p.name not in skip}


def documents() -> list[Path]:
    """Every markdown document of the checkout (not the tests' or the suite tasks'), and NOTICE."""
    skip = ignored() | SKIP_DIRS
    found = [p for p in ROOT.glob("*.md")] + [ROOT / "NOTICE"]
    for folder in sorted(ROOT.iterdir()):
        if folder.is_dir() and folder.name not in skip and not folder.name.startswith("."):
            found += [p for p in folder.rglob("*.md") if TASKS not in p.parents
                      and not skip & set(p.relative_to(ROOT).parts)]
    return sorted(p for p in found if p.exists())


@functools.lru_cache(maxsize=1)
def repo_files() -> tuple[str, ...]:
    """Every file of the checkout, as a posix path from its root (generated and private folders left out)."""
    skip = ignored() | {"node_modules", "__pycache__"}
    out = []
    for top in ROOT.iterdir():
        if top.name in skip:
            continue
        paths = [top] if top.is_file() else top.rglob("*")
        out += [p.relative_to(ROOT).as_posix() for p in paths
                if p.is_file() and not skip & set(p.relative_to(ROOT).parts)]
    return tuple(out)


def text(name: str) -> str:
    path = ROOT / name
    return path.read_text(encoding="utf-8") if path.exists() else ""


# ---- what the documents name ------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"\]\(([^()\s]+)\)")
TICKED = re.compile(r"`([^`\n]+)`")


def mentions(doc: Path) -> list[Mention]:
    """The links, backticked paths and code-block words of one document, with their line numbers."""
    rel = doc.relative_to(ROOT).as_posix()
    out, fenced = [], False
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            out += [Mention(rel, number, word, "code") for word in re.split(r"[\s=\"'(),;]+", line) if word]
            continue
        out += [Mention(rel, number, m.group(1), "link") for m in LINK.finditer(line)]
        out += [Mention(rel, number, m.group(1).strip(), "path") for m in TICKED.finditer(line)]
    return out


def link_target(m: Mention) -> Path | None:
    """A relative link's file (its #fragment dropped), or None for a web, mail or in-page link."""
    target = m.text.split("#", 1)[0]
    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
        return None
    return (ROOT / m.doc).parent / target


def path_patterns(m: Mention, tops: set[str]) -> list[str] | None:
    """The glob patterns one of which must match a file for the mention to hold, or None when it names no file of
    the checkout (a route, a data-folder file, a model name, a command)."""
    word = m.text.rstrip(".,:;")
    if m.kind == "code":
        word = word.lstrip("./") if word.startswith("./") else word
    if not word or any(c in word for c in " \\$~@") or "://" in word or word.startswith(("/", "-")):
        return None
    pattern = PLACEHOLDER.sub("*", word).rstrip("/")
    first = pattern.split("/", 1)[0]
    if first in tops and ("/" in pattern or m.kind != "code" or "." in first):
        return [pattern]                                           # `deploy/fly/fly.toml`, `serve.py`
    if m.kind != "code" and pattern.endswith(CHECKED_SUFFIXES):
        folder = (ROOT / m.doc).parent.relative_to(ROOT).as_posix()
        near = f"{folder}/{pattern}" if folder != "." else pattern
        return [near, pattern, f"*/{pattern}"]                     # `calling.py`, `core/choose.py`
    return None


def exists(patterns: list[str]) -> bool:
    """Some file of the checkout matches a pattern, or lies in the folder it names."""
    return any(fnmatch(f, p) or fnmatch(f, p + "/*") for p in patterns for f in repo_files())


# ---- what the code has ------------------------------------------------------------------------------

def commands(parser: argparse.ArgumentParser, prefix: tuple = ()) -> list[tuple[tuple[str, ...], str]]:
    """Every command and sub-command of the parser, as (words, its one-line help)."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                out.append(((*prefix, name), helps.get(name, "")))
                out += commands(sub, (*prefix, name))
    return out


ENV_NAME = re.compile(r"^(?:BENCH|BENCHWARMERS)_[A-Z0-9_]*$")
JS_ENV = re.compile(r"process\.env(?:\.([A-Z_][A-Z0-9_]*)|\[\s*[\"']([A-Z_][A-Z0-9_]*)[\"']\s*\])")


def code_files() -> list[Path]:
    """The program's own source: the package, the checkout's entry scripts, scripts/, suite/ and the npm shim."""
    files = sorted((ROOT / "benchwarmers").rglob("*.py")) + sorted(ROOT.glob("*.py"))
    for folder in ("scripts", "suite"):
        files += sorted((ROOT / folder).glob("*.py"))
    return files + sorted((ROOT / "bin").glob("*.js"))


def environment_reads() -> dict[str, str]:
    """Every environment variable the program reads -> the first file:line that reads it."""
    found: dict[str, str] = {}
    for path in code_files():
        rel = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        if path.suffix == ".js":
            for m in JS_ENV.finditer(source):
                found.setdefault(m.group(1) or m.group(2), f"{rel}:{source[:m.start()].count(chr(10)) + 1}")
            continue
        for name, line in python_reads(ast.parse(source)):
            found.setdefault(name, f"{rel}:{line}")
    return found


def python_reads(tree: ast.AST) -> list[tuple[str, int]]:
    """(name, line) for environ.get(NAME) / env.get / os.getenv / environ[NAME], where NAME is a string, a module
    constant or the loop variable over a module tuple of strings; and every BENCH*_ string constant."""
    constants = module_strings(tree)
    loops = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name) \
                and isinstance(node.iter, ast.Name) and node.iter.id in constants:
            loops[node.target.id] = constants[node.iter.id]
    out = []
    for node in ast.walk(tree):
        arg = reads_environment(node)
        if arg is not None:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((arg.value, node.lineno))
            elif isinstance(arg, ast.Name):
                out += [(name, node.lineno) for name in constants.get(arg.id, loops.get(arg.id, []))]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ENV_NAME.match(node.value):
            out.append((node.value, node.lineno))
    return out


def module_strings(tree: ast.AST) -> dict[str, list[str]]:
    """Module-level NAME = "text" or NAME = ("a", "b"): the strings each holds."""
    out = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            if all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
                out[node.targets[0].id] = [i.value for i in items]
    return out


def reads_environment(node: ast.AST):
    """The name argument when the node reads the environment, else None."""
    def is_env(target) -> bool:
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        return name in ("environ", "env")
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("get", "pop") and is_env(f.value):
            return node.args[0]
        if (isinstance(f, ast.Attribute) and f.attr == "getenv") or (isinstance(f, ast.Name) and f.id == "getenv"):
            return node.args[0]
    if isinstance(node, ast.Subscript) and is_env(node.value) and isinstance(node.ctx, ast.Load):
        return node.slice
    return None
