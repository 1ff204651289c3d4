"""How a command's parser is made: one call a command or verb (its help, description, examples and what it runs), so
every --help page has the same shape and each module states only what is its own."""
from __future__ import annotations

import argparse

from . import verbless

FMT = argparse.RawDescriptionHelpFormatter   # descriptions and examples keep their own line breaks


def examples(*lines: str, after: str = "") -> str:
    """An epilog: the command lines indented under `example:` (or `examples:`), then `after` as it is."""
    return ("example:" if len(lines) == 1 else "examples:") + "".join(f"\n  {line}" for line in lines) + after


def command(sub, parent, name: str, help: str, func=None, *, example: str | tuple = (), after: str = "",
            description: str | None = None, **defaults) -> argparse.ArgumentParser:
    """Sub-command `name` of `sub` taking the common options (`parent`): its one-line `help`, its `description` (else
    the help as a sentence: main.describe), its `example` lines (`after` them: more words, as they are), and
    `func(args, client)` to run, with `defaults` set beside it."""
    lines = (example,) if isinstance(example, str) else example
    p = sub.add_parser(name, parents=[parent], help=help, description=description, formatter_class=FMT,
                       epilog=examples(*lines, after=after) if lines else None)
    if func is not None:
        p.set_defaults(func=func, **defaults)
    return p


def verbs(p: argparse.ArgumentParser, dest: str = "verb", refuse: bool = True):
    """`p`'s verbs (`bench model retire`, ...), their word kept as `dest`; with `refuse`, `p` given none names them and
    exits 2 (else `p` runs its own func)."""
    found = p.add_subparsers(dest=dest, metavar=dest.upper())
    if refuse:
        p.set_defaults(func=verbless.refuse(p))
    return found


def asks_first(p: argparse.ArgumentParser) -> None:
    """--yes, for a command that asks before it removes or changes something."""
    p.add_argument("--yes", action="store_true", help="do not ask")
