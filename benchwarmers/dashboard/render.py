"""Page rendering: the layout (through the renderer of markup.py), words for times, rates and seconds, static files."""
from __future__ import annotations

import re
import time
from pathlib import Path

from ..server.messages import HTML_SECURITY, Response
from ..signin import vendors
from .markup import Html, attrs, html
from .web import Frame

STATIC = Path(__file__).parent / "static"
STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}")

LAYOUT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="csrf-token" content="$csrf">
<title>$title · Benchwarmers</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="/static/icon.svg" type="image/svg+xml">
<script src="/static/app.js" defer></script>$scripts
</head><body>
<a class="skip" href="#main">Skip to the content</a>
<header class="top"><div class="bar">
<a class="brand" href="/"><span class="mark" aria-hidden="true">B</span>Benchwarmers</a>
$nav$logout</div></header>
<main id="main" tabindex="-1">
$flashes<h1>$title</h1>
$body
</main>
<footer class="foot">Benchwarmers $version$json_link</footer>
</body></html>
"""


def token(value) -> str:
    """A CSS class fragment from a state word: lower-case letters and dashes only."""
    return re.sub(r"[^a-z-]", "", str(value or "").lower()) or "none"


def when(epoch, seconds: bool = False) -> str:
    if not epoch:
        return ""
    return time.strftime("%Y-%m-%d %H:%M" + (":%S" if seconds else ""), time.localtime(epoch))


def pct(rate) -> str:
    return "" if rate is None else f"{rate * 100:.0f}%"


def secs(value) -> str:
    if value is None:
        return ""
    return f"{value:.2f} s" if value < 1 else f"{value:.1f} s" if value < 100 else f"{value:.0f} s"


def page(title: str, body: Html, frame: Frame, *, nav_items: list, nav: str, version: str, json_link: str,
         scripts: tuple = (), status: int = 200) -> Response:
    """The whole page; `nav_items` are (href, label) for the top bar, `nav` the one to mark as current."""
    items = [html('<a href="$href"$here>$label</a>', href=href, label=label,
                  here=attrs(aria_current="page" if href == nav else None)) for href, label in nav_items]
    logout = html('<form method="post" action="/logout" class="logout"><input type="hidden" name="csrf" '
                  'value="$csrf"><button class="ghost" type="submit">Log out</button></form>', csrf=frame.csrf) \
        if frame.logout else ""
    flashes = [html('<div class="flash flash-$kind" role="$role">$text</div>', kind=token(kind), text=text,
                    role="alert" if kind == "error" else "status") for kind, text in frame.flashes]
    text = html(LAYOUT, title=title, body=body, version=version, csrf=frame.csrf, flashes=flashes, logout=logout,
                nav=html('<nav aria-label="Main">$items</nav>', items=items) if frame.signed_in else "",
                json_link=html(' · <a href="$href">This page as JSON</a>', href=json_link) if json_link else "",
                scripts=[html('\n<script src="/static/$name" defer></script>', name=n) for n in scripts])
    headers = {"Cache-Control": "no-store", "Content-Security-Policy": policy()}
    if frame.set_cookie:
        headers["Set-Cookie"] = frame.set_cookie
    return Response.html(text, status, headers)


def policy() -> str:
    """The strict policy; its form-action also names the providers' sign-in pages, where a sign-in form's POST is
    redirected (a browser checks form-action on that redirect too)."""
    return HTML_SECURITY["Content-Security-Policy"].replace(
        "form-action 'self'", " ".join(["form-action 'self'", *vendors.auth_origins()]))


def static(name: str) -> Response | None:
    """A file of static/, or None: only plain file names (a NUL or a long name once made a 500)."""
    if not STATIC_NAME.fullmatch(name or ""):
        return None
    path = (STATIC / name).resolve()
    if STATIC.resolve() not in path.parents or not path.is_file():
        return None
    kind = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}.get(path.suffix, "text/plain")
    return Response(200, path.read_bytes(), {"Content-Type": kind + "; charset=utf-8", "Cache-Control": "max-age=300",
                                             "X-Content-Type-Options": "nosniff"})
