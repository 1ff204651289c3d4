"""What a dashboard page's module gives: the contract of a module under dashboard/pages/.

A new page is a module meeting PageContract and one `Page(path, module)` line in PAGES (dashboard/routes.py); the
page is then served at its path and as JSON at path + ".json", and its actions are POST routes behind the CSRF
check. tests/test_plugins.py checks every page in PAGES against it."""
from __future__ import annotations

from typing import Callable, Protocol, Sequence, runtime_checkable

from ..bench import Bench
from ..server.messages import Request
from .markup import Html
from .web import Done, Form, Frame

# (its path, function(req, bench, form) -> Done, where to go back to: a pattern of the path's {params}); the route
# hands each function the whole Bench, and each declares the parts it uses (a Protocol, or `object` for none)
Action = tuple[str, Callable[[Request, Bench, Form], Done], str]


@runtime_checkable
class PageContract(Protocol):
    """A page, as its module declares it (module-level names; a module meets a Protocol by its names). Its two
    names are read-only here, so the type checker takes a module's own list or tuple of them as they are."""

    @property
    def SCRIPTS(self) -> tuple[str, ...]:
        """Static files it loads besides app.js (e.g. "ask.js"); () for none."""

    @property
    def ACTIONS(self) -> Sequence[Action]:
        """The forms it posts; () for none."""

    __name__: str                 # its module's name (the page's routes are named for it)

    def data(self, req: Request, bench: Bench) -> dict:
        """The page's one dict, from the bench's parts (also served as the page's JSON); a page's own `data`
        annotates `bench` with a Protocol naming the parts it reads."""

    def redirect(self, d: dict) -> str | None:
        """A path to send the browser to instead of showing the page (`stays` for a page that never does)."""

    def render(self, d: dict, frame: Frame) -> tuple[str, Html]:
        """The title and the body, made with the renderer (markup.html): every value escaped unless marked."""


def stays(d: dict) -> None:
    """The `redirect` of a page that always shows itself."""
    return None
