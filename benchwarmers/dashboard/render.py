"""Page rendering: string.Template layouts with every value escaped by html.escape."""
from __future__ import annotations

import html
import re
from pathlib import Path
from string import Template

from ..server.messages import Response

STATIC = Path(__file__).parent / "static"
STATIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,99}")
NAV = (("/", "Home"),)   # each page adds itself here when it exists: no link may lead to a 404

LAYOUT = Template("""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title · Benchwarmers</title>
<link rel="stylesheet" href="/static/style.css">
</head><body>
<header><a class="brand" href="/">Benchwarmers</a><nav>$nav</nav>$logout</header>
<main>
<h1>$title</h1>
$body
</main>
<footer>Benchwarmers $version · <a href="$json_link">JSON</a></footer>
</body></html>
""")


def e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def table(headers: list[str], rows: list[list], empty: str) -> str:
    """An HTML table of already-escaped cells, or the `empty` message (already HTML) when there are no rows."""
    if not rows:
        return f'<p class="empty">{empty}</p>'
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, body: str, *, version: str, path: str, show_logout: bool = False, status: int = 200) -> Response:
    here = ' class="here"'
    nav = "".join(f'<a href="{href}"{here if href == path else ""}>{e(label)}</a>' for href, label in NAV)
    logout = ('<form method="post" action="/logout" class="logout"><button>Log out</button></form>'
              if show_logout else "")
    json_link = (path.rstrip("/") or "") + "/.json" if path != "/" else "/.json"
    return Response.html(LAYOUT.substitute(title=e(title), body=body, nav=nav, logout=logout, version=e(version),
                                           json_link=e(json_link)), status)


def static(name: str) -> Response | None:
    """A file of static/, or None: only plain file names (a NUL or a long name once made a 500)."""
    if not STATIC_NAME.fullmatch(name or ""):
        return None
    path = (STATIC / name).resolve()
    if STATIC.resolve() not in path.parents or not path.is_file():
        return None
    kind = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}.get(path.suffix, "text/plain")
    return Response(200, path.read_bytes(), {"Content-Type": kind + "; charset=utf-8",
                                             "Cache-Control": "max-age=300"})
