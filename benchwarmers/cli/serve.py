"""bench serve / gateway / init: run the service in the foreground, or seed a data folder."""
from __future__ import annotations

import argparse
import getpass
import os
import sys
import threading
import webbrowser
from pathlib import Path
from typing import Any

from .. import home, keys
from ..errors import BadRequest, ConfigError
from ..roster.registry import APIS, Registry, new_endpoint
from ..servicelink import CommandError
from ..store import Config
from ..words import plural
from . import terminal
from .output import note
from .parsers import command

SERVE_FLAGS = ("--host", "--port", "--no-browser", "--open")   # what bare `benchwarmers` takes, as `serve` does


def local() -> argparse.ArgumentParser:
    """The options of commands that run here rather than ask a service: no --url, no --json."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    return p


def serve_options(p: argparse.ArgumentParser, port: int, dashboard: bool) -> None:
    p.add_argument("--host", default=None, help="address to listen on (default $BENCHWARMERS_HOST or 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=None, help=f"port (default $BENCHWARMERS_PORT or {port}; 0 "
                   "picks a free one)")
    # the gateway alone opens no browser: it takes --no-browser (older scripts pass it) without offering it
    p.add_argument("--no-browser", action="store_true", help="never open a browser" if dashboard else argparse.SUPPRESS)
    if dashboard:
        p.add_argument("--open", action="store_true", help="open the dashboard in a browser")


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535: refused while the arguments are read, not by bind() once the service starts."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, not {text!r}")
    return port


def register(sub, parent) -> None:
    for name, port, helptext, example in (
            ("serve", 8122, "start the dashboard and gateway (port 8122)", "--port 8122 --open"),
            ("gateway", 8123, "start the gateway routes alone, no dashboard (port 8123)", "--port 8123")):
        opens: dict[str, Any] = {} if name == "serve" else {"open": False}
        p = command(sub, local(), name, helptext, run_serve, example=f"benchwarmers {name} {example}",
                    description=helptext[0].upper() + helptext[1:] + ". Runs in the foreground until Ctrl-C.",
                    role="dashboard" if name == "serve" else "gateway", default_port=port, needs_client=False,
                    **opens)
        serve_options(p, port, dashboard=name == "serve")
    p = command(sub, local(), "init", "seed a data folder (never overwrites a file)", run_init, needs_client=False,
                description="Seed a data folder from examples/ and point this checkout at it. With --endpoint and "
                            "--key, add an endpoint and store its key in the llm CLI's keys.json (prompted without "
                            "echo; never in the data folder).",
                example=("bench init",
                         "bench init ~/bench-data --endpoint openrouter https://openrouter.ai/api/v1 --key"))
    p.add_argument("folder", nargs="?", help="the data folder (default: the resolved one)")
    p.add_argument("--endpoint", nargs=2, metavar=("NAME", "BASE_URL"), help="add a first endpoint")
    p.add_argument("--api", choices=APIS, default="openai", help="the endpoint's protocol (default openai)")
    p.add_argument("--key", action="store_true", help="prompt for the endpoint's key (stored in llm's keys.json; "
                                                      "read from stdin when that is no terminal)")
    p.add_argument("--key-stdin", action="store_true", help="read the key from stdin instead of prompting")
    p.add_argument("--allow-link-local", action="store_true",
                   help="a base URL at a link-local or cloud metadata address: refused without this")


def env_port(default: int) -> int:
    raw = os.environ.get("BENCHWARMERS_PORT")
    if not raw:
        return default
    try:
        return port_number(raw)
    except argparse.ArgumentTypeError:
        raise CommandError(f"BENCHWARMERS_PORT must be a port number from 0 to 65535, not {raw!r}.", 2) from None


def check_client_env() -> None:
    """A BENCH_CLIENT the service would not know is refused at start, rather than ignored on every call."""
    from ..settings import CLIENTS
    raw = os.environ.get("BENCH_CLIENT", "").strip()
    if raw and raw.lower() not in CLIENTS:
        raise CommandError(f"BENCH_CLIENT must be one of {', '.join(CLIENTS)}, not {raw!r} (unset it to use the "
                           "client setting).", 2)


def llm_note(settings: dict) -> None:
    """At start, when members are called through llm: which llm, or why no call can succeed."""
    from ..core.calling import LLM, client_in_use
    from ..providers import llmcalls
    client, chosen_by = client_in_use(settings)
    if client == LLM:
        note(llmcalls.problem() or f"Member calls go through llm {llmcalls.installed()} (chosen by {chosen_by}).")


def on_desktop() -> bool:
    if sys.platform.startswith("win") or sys.platform == "darwin":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def run_serve(args, client=None, open_browser: bool | None = None) -> int:
    from ..service.lifecycle import BindRefused, DataFolderUnusable, Service
    from ..service.memory import cap_malloc_arenas, start_trimming
    cap_malloc_arenas()   # before any thread of the service starts
    start_trimming()
    host = args.host or os.environ.get("BENCHWARMERS_HOST") or "127.0.0.1"
    port = args.port if args.port is not None else env_port(args.default_port)
    check_client_env()
    try:
        service = Service(host=host, port=port, role=args.role)
    except BindRefused as e:
        raise CommandError(str(e), 2) from None
    except DataFolderUnusable as e:
        raise CommandError(str(e), 1) from None
    except OSError as e:
        raise CommandError(f"Cannot listen on {host}:{port}: {e.strerror or e}. "
                       "Is another copy running? Choose another --port.", 1) from None
    want = args.open if open_browser is None else (open_browser or args.open)

    def ready() -> None:
        where = "Dashboard and gateway" if args.role == "dashboard" else "Gateway"
        note(f"{where} at {service.url}  (gateway base URL {service.url}/v1)")
        note(f"Data folder: {service.bench.home}")
        llm_note(service.bench.settings())
        note("Press Ctrl-C to stop.")
        if want and not args.no_browser and args.role == "dashboard":
            threading.Timer(0.5, webbrowser.open, (service.url + "/",)).start()
    service.serve_forever(ready)
    note("Stopped.")
    return 0


def bare_parser() -> argparse.ArgumentParser:
    from .main import Parser
    p = Parser(prog="benchwarmers", formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Start the dashboard and gateway (port 8122), initialising the data folder on first run; "
                           "a browser opens on a desktop. `benchwarmers --help` lists every command.")
    serve_options(p, 8122, dashboard=True)
    return p


def bare(argv: list[str] | None = None) -> int:
    """Plain `benchwarmers` (with serve's flags, if any): initialise on first run, then the dashboard (a browser on
    a desktop)."""
    try:
        args = bare_parser().parse_args(argv or [])
    except SystemExit as e:
        return int(e.code or 0)
    folder = home.resolve()
    if not home.is_initialised(folder):
        from ..service.lifecycle import unusable
        try:
            home.init(folder)
        except OSError as e:
            note(str(unusable(folder, e)))
            return 1
        note(f"Created the data folder {folder}")
    args.role, args.default_port = "dashboard", 8122
    try:
        return run_serve(args, open_browser=on_desktop())
    except CommandError as e:
        note(str(e))
        return e.code


def read_secret(from_stdin: bool, prompt: str) -> str:
    """The key: prompted without echo at a terminal, else the first line of stdin (as --key-stdin reads it)."""
    if from_stdin or terminal.piped():
        return terminal.read_line().strip()
    if not sys.stdin or not sys.stdin.isatty():
        raise CommandError("No terminal to prompt for the key on; pipe it in with --key-stdin. Nothing was saved.",
                           2)
    return getpass.getpass(prompt).strip()


def run_init(args, client=None) -> int:
    if (args.key or args.key_stdin) and not args.endpoint:
        raise CommandError("--key needs --endpoint NAME BASE_URL.", 2)
    endpoint, key = None, None
    if args.endpoint:
        try:   # checked as the admin API checks it, before anything is written
            endpoint = new_endpoint(args.endpoint[0], args.endpoint[1], args.api,
                                    allow_link_local=args.allow_link_local)
        except BadRequest as e:
            raise CommandError(str(e), 2) from None
    # the key before anything is written: never an endpoint saved without it (a key needs --endpoint: checked above)
    if endpoint is not None and (args.key or args.key_stdin):
        key = read_secret(args.key_stdin, f"Key for {endpoint.name} (input hidden): ")
        if not key:
            raise CommandError("No key given; nothing was saved. Type it at the prompt, or pipe it in: "
                               "... | bench init --endpoint NAME BASE_URL --key-stdin.", 1)
    folder = Path(args.folder).expanduser().resolve() if args.folder else home.resolve()
    created = home.init(folder, write_pointer=bool(args.folder) or not os.environ.get("BENCHWARMERS_HOME"))
    note(f"Data folder: {folder} ({plural(len(created), 'file')} created, existing files kept)")
    if args.folder and not home.in_checkout() and not os.environ.get("BENCHWARMERS_HOME"):
        note(f"To use it, set BENCHWARMERS_HOME={folder} (an installed package keeps no pointer file).")
    if endpoint:
        init_endpoint(folder, endpoint, key)
    return 0


def init_endpoint(folder: Path, endpoint, key: str | None) -> None:
    """Store the key (when given), then save the endpoint through the registry (an existing one of that name is
    kept): a key that cannot be stored leaves no endpoint behind without it."""
    try:
        registry = Registry(Config(folder))
        if key:
            path = keys.store(endpoint.name, key)
            note(f"Key stored in {path} (not in the data folder).")
        if endpoint.name in registry.endpoints():
            note(f"Endpoint {endpoint.name} exists; kept as it is.")
        else:
            registry.save_endpoint(endpoint)
            note(f"Endpoint {endpoint.name}: {endpoint.base_url}")
    except ConfigError as e:   # a file that does not parse is the user's to fix, never ours to replace
        raise CommandError(str(e), 1) from None
