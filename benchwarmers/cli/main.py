"""argv -> exit code: builds the parser from one module per noun and maps every failure to its exit code."""
from __future__ import annotations

import argparse
import difflib
import logging
import os
import sys
import traceback

from .. import __version__
from ..servicelink import CommandError, ServiceLink
from . import commands, terminal
from .serve import SERVE_FLAGS
from ..baseurls import base_problem
from .output import write

EPILOG = """examples:
  benchwarmers                      start the dashboard (initialises the data folder on first run)
  benchwarmers --no-browser         the same, without opening a browser
  bench status                      what is running and where
  bench ask core "Where can this return a stale value?" -f cache.py
  git diff | bench ask core "Review this diff"

environment: BENCHWARMERS_URL (default http://127.0.0.1:8122), BENCHWARMERS_ADMIN_TOKEN, BENCHWARMERS_KEY,
BENCHWARMERS_TIMEOUT (seconds, default 900).
exit codes: 0 done, 1 refused or failed, 2 usage error, 3 no service at the URL."""


UNRECOGNIZED_BY = "_unrecognized_by"   # the namespace's note of the innermost parser that met unknown arguments


class Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with the message and a pointer to --help (not the usage block: --help has it)."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\nTry '{self.prog} --help' for examples.\n")
        raise SystemExit(2)

    def parse_known_args(self, args=None, namespace=None):
        """Argparse hands a sub-command's unknown arguments up to `bench`, whose usage then names none of them: the
        innermost parser that met them notes itself, so the error comes from the sub-command that has the options."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(namespace, UNRECOGNIZED_BY):
            setattr(namespace, UNRECOGNIZED_BY, self)
        return namespace, extras

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        owner = vars(namespace).pop(UNRECOGNIZED_BY, self)
        if extras:
            owner.error(f"unrecognized arguments: {' '.join(extras)}{suggestion(owner, extras)}")
        return namespace


def suggestion(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """' (did you mean --context?)' for a mistyped option the parser has one close to; '' otherwise."""
    options = [o for o in parser._option_string_actions if o.startswith("--")]
    for extra in extras:
        if extra.startswith("--"):
            close = difflib.get_close_matches(extra.split("=", 1)[0], options, n=1)
            if close:
                return f" (did you mean {close[0]}?)"
    return ""


def common() -> argparse.ArgumentParser:
    """Options every sub-command takes too (defaults suppressed so the top-level value survives)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--url", default=argparse.SUPPRESS, help="the service (default $BENCHWARMERS_URL or "
                   "http://127.0.0.1:8122)")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the service's JSON")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return p


def build_parser() -> Parser:
    parser = Parser(prog="bench", description="Benchwarmers: ask a panel of models, judge them, route agents.",
                    epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"benchwarmers {__version__}")
    parser.add_argument("--url", help="the service (default $BENCHWARMERS_URL or http://127.0.0.1:8122)")
    parser.add_argument("--json", action="store_true", help="print the service's JSON")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    parent = common()
    for module in commands.MODULES:
        module.register(sub, parent)
    describe(parser)
    return parser


def describe(parser: argparse.ArgumentParser) -> None:
    """Every help page opens with a description line: a sub-command given none gets its one-line help, as a
    sentence (the list of commands already shows it; its own --help should too)."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, sub in action.choices.items():
            text = helps.get(name)
            if not sub.description and text:
                sub.description = text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
            describe(sub)


def not_utf8(argv: list[str]) -> str | None:
    """What to say of an argument that is not UTF-8 text (Python keeps its bad bytes as lone surrogates, which no
    request, file or terminal can carry), or None when every one is."""
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return (f"bench: argument {i} ({shown(arg)}) is not valid UTF-8 text: give it in UTF-8 (check the "
                    "terminal's or the script's encoding).")
    return None


def shown(arg: str, most: int = 60) -> str:
    """An argument with its bad bytes as \\xNN escapes, cut to `most` characters."""
    try:
        text = arg.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:      # a surrogate that stands for no byte (given to main() directly)
        text = arg.encode("utf-8", "backslashreplace").decode("utf-8")
    return "'" + (text if len(text) <= most else text[:most] + "…") + "'"


def make_client(args) -> ServiceLink:
    """The service client, its URL checked here so a bad --url (or BENCHWARMERS_URL) is a usage error."""
    client = ServiceLink(args.url, environ=None)
    problem = base_problem(client.url)   # the check an endpoint's base URL gets
    if problem:
        where, given = ("--url", args.url) if args.url else ("BENCHWARMERS_URL", os.environ.get("BENCHWARMERS_URL"))
        raise CommandError(f"The {where} value {given!r} is not a usable URL ({problem}): give the service's "
                           "address, like http://127.0.0.1:8122.", 2)
    return client


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    problem = not_utf8(argv)
    if problem:
        write(problem + "\n", sys.stderr)
        return 2
    parser = build_parser()
    if not argv or argv[0].split("=", 1)[0] in SERVE_FLAGS:   # `benchwarmers --no-browser`: serve's flags alone
        from . import serve
        return serve.bare(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO, format="%(message)s",
                        stream=sys.stderr)
    try:
        client = make_client(args) if getattr(args, "needs_client", True) else None
        return int(args.func(args, client) or 0)
    except CommandError as e:
        write(f"{e}\n", sys.stderr)   # its message may quote an upstream's words
        return e.code
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    except BrokenPipeError:
        quiet_stdout()   # `bench models | head`: the reader left; say nothing more, as other command-line tools do
        return 1
    except Exception as e:
        if args.debug:
            traceback.print_exc()
        else:
            write(f"Failed: {type(e).__name__}: {e}\n(--debug shows the traceback)\n", sys.stderr)
        return 1


def quiet_stdout() -> None:
    """Point stdout at the null device, so the interpreter's own flush at exit finds no closed pipe to complain of."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run(argv: list[str] | None = None) -> None:
    """Console-script entry point (and the checkout's scripts'): streams made safe for any text, then main()."""
    terminal.prepare()
    sys.exit(main(argv))
