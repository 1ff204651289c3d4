"""Page rendering: the layout (string.Template), escaping with html.escape, and small generic HTML helpers."""
from __future__ import annotations

import html
import re
import time
from pathlib import Path
from string import Template

from .. import connect
from ..server.messages import HTML_SECURITY, Response

STATIC = Path(__file__).parent / "static"
STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}")

LAYOUT = Template("""<!doctype html>
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
""")


def e(value) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


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


def table(headers: list[str], rows: list[list], empty: str = "", cls: str = "", row_attrs: list | None = None) -> str:
    """A table of already-escaped cells; each cell carries its header, so narrow screens can stack rows.
    `row_attrs`: each row's own attributes, already escaped (e.g. an id a script finds it by)."""
    if not rows:
        return f'<p class="empty">{empty}</p>' if empty else ""
    head = "".join(f'<th scope="col">{e(h)}</th>' for h in headers)
    attrs = [f" {a}" if a else "" for a in (row_attrs or [])] + [""] * len(rows)
    body = "".join(f"<tr{attrs[i]}>" + "".join(f'<td data-label="{e(h)}">{c}</td>' for h, c in zip(headers, row))
                   + "</tr>" for i, row in enumerate(rows))
    return (f'<div class="table-wrap"><table class="{e(cls)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def facts(pairs: list[tuple[str, str]], cls: str = "") -> str:
    """A definition list of (label, already-escaped value)."""
    return f'<dl class="facts {e(cls)}">' + "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in pairs) + "</dl>"


def card(title: str, body: str, cls: str = "", anchor: str = "") -> str:
    ident = f' id="{e(anchor)}"' if anchor else ""
    heading = f"<h2>{e(title)}</h2>" if title else ""
    return f'<section class="card {e(cls)}"{ident}>{heading}{body}</section>'


def link(href: str, text: str, cls: str = "") -> str:
    cls_attr = f' class="{e(cls)}"' if cls else ""
    return f'<a href="{e(href)}"{cls_attr}>{e(text)}</a>'


def options(choices: list[tuple[str, str]], selected=None) -> str:
    chosen = {selected} if isinstance(selected, str) or selected is None else set(selected)
    return "".join(f'<option value="{e(v)}"{" selected" if v in chosen else ""}>{e(label)}</option>'
                   for v, label in choices)


def page(title: str, body: str, frame, *, nav_items: list, nav: str, version: str, json_link: str,
         scripts: tuple = (), status: int = 200) -> Response:
    """The whole page; `nav_items` are (href, label) for the top bar, `nav` the one to mark as current."""
    here = ' aria-current="page"'
    items = "".join(f'<a href="{e(href)}"{here if href == nav else ""}>{e(label)}</a>' for href, label in nav_items)
    nav_html = f'<nav aria-label="Main">{items}</nav>' if frame.signed_in else ""
    logout = ""
    if frame.logout:
        logout = (f'<form method="post" action="/logout" class="logout"><input type="hidden" name="csrf" '
                  f'value="{e(frame.csrf)}"><button class="ghost" type="submit">Log out</button></form>')
    flashes = "".join(f'<div class="flash flash-{token(kind)}" role="{"alert" if kind == "error" else "status"}">'
                      f"{e(text)}</div>" for kind, text in frame.flashes)
    extra = "".join(f'\n<script src="/static/{e(name)}" defer></script>' for name in scripts)
    twin = f' · <a href="{e(json_link)}">This page as JSON</a>' if json_link else ""
    text = LAYOUT.substitute(title=e(title), body=body, nav=nav_html, logout=logout, version=e(version),
                             json_link=twin, csrf=e(frame.csrf), flashes=flashes, scripts=extra)
    headers = {"Cache-Control": "no-store", "Content-Security-Policy": policy()}
    if frame.set_cookie:
        headers["Set-Cookie"] = frame.set_cookie
    return Response.html(text, status, headers)


def policy() -> str:
    """The strict policy; its form-action also names the providers' sign-in pages, where a sign-in form's POST is
    redirected (a browser checks form-action on that redirect too)."""
    return HTML_SECURITY["Content-Security-Policy"].replace(
        "form-action 'self'", " ".join(["form-action 'self'", *connect.auth_origins()]))


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
