"""A command given no verb (`bench model`): one line naming its verbs, exit 2, rather than its whole help page."""
from __future__ import annotations

import argparse

from ..servicelink import CommandError


def refuse(parser: argparse.ArgumentParser):
    """The func of a command whose verb is missing. Its verbs are read when it runs, so ones added after this call
    (catalog.py adds some of `bench model`'s) are named too."""
    def run(args, client) -> int:
        raise CommandError(f"{parser.prog}: say what to do: {', '.join(names(parser))} ({parser.prog} --help).", 2)
    return run


def names(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []
