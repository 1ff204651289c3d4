"""The dashboard's one HTML renderer: templates whose values are escaped unless they are marked as HTML.

`html('<a href="$href">$text</a>', href=url, text=name)` fills a string.Template; every value is escaped for text
and quoted attributes (html.escape), unless it is `Html`: what this renderer made, or markup made in code and
marked with `trusted` (never a value from a request, a file or an upstream). A list is each item escaped, joined.
The helpers below (table, facts, card, link, options) take plain values and escape them the same way.
"""
from __future__ import annotations

import html as _html
from functools import lru_cache
from string import Template
from typing import Iterable


class Html(str):
    """Markup to put in a page as it is: never escaped again."""
    __slots__ = ()


def trusted(markup: str) -> Html:
    """Mark markup made in code (a literal, a renderer's output) as safe to put in a page as it is."""
    return Html(markup)


def escape(value) -> Html:
    """Html as it is; None as nothing; a list or tuple each item escaped and joined; anything else escaped."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html("")
    if isinstance(value, (list, tuple)):
        return join(value)
    return Html(_html.escape(str(value), quote=True))


def join(parts: Iterable, sep: str = "") -> Html:
    """The parts (each escaped unless Html) with `sep` (text, escaped) between them."""
    return Html(escape(sep).join(escape(p) for p in parts))


@lru_cache(maxsize=1024)
def _template(text: str) -> Template:
    return Template(text)


def html(template: str, /, **values) -> Html:
    """`template` with each $name (or ${name}) replaced by its value, escaped unless Html; `$$` is a dollar sign.
    A placeholder without a value is an error, not an empty string."""
    return Html(_template(template).substitute({k: escape(v) for k, v in values.items()}))


def flag(name: str, on) -> Html:
    """A boolean attribute (` selected`, ` checked`) when `on`, else nothing."""
    return html(" $name", name=name) if on else Html("")


def attrs(**values) -> Html:
    """Attributes from keywords (`data_call=x` is data-call="x"); None and False leave one out, True is bare."""
    out = []
    for key, value in values.items():
        name = key.rstrip("_").replace("_", "-")
        if value is True:
            out.append(html(" $n", n=name))
        elif value is not None and value is not False:
            out.append(html(' $n="$v"', n=name, v=value))
    return join(out)


def table(headers: list[str], rows: list[list], empty: str = "", cls: str = "", row_attrs: list | None = None) -> Html:
    """A table; each cell carries its header, so narrow screens can stack rows. Cells are escaped unless Html;
    `row_attrs`: each row's own attributes, as Html (from `attrs`), e.g. an id a script finds it by."""
    if not rows:
        return html('<p class="empty">$empty</p>', empty=empty) if empty else Html("")
    head = [html('<th scope="col">$h</th>', h=h) for h in headers]
    extra = list(row_attrs or []) + [Html("")] * len(rows)
    body = [html("<tr$a>$cells</tr>", a=extra[i], cells=[html('<td data-label="$h">$c</td>', h=h, c=c)
                                                          for h, c in zip(headers, row)])
            for i, row in enumerate(rows)]
    return html('<div class="table-wrap"><table class="$cls"><thead><tr>$head</tr></thead><tbody>$body</tbody>'
                '</table></div>', cls=cls, head=head, body=body)


def facts(pairs: list[tuple[str, object]], cls: str = "") -> Html:
    """A definition list of (label, value); values are escaped unless Html."""
    return html('<dl class="facts $cls">$items</dl>', cls=cls,
                items=[html("<dt>$k</dt><dd>$v</dd>", k=k, v=v) for k, v in pairs])


def card(title: str, body, cls: str = "", anchor: str = "") -> Html:
    """A section with a heading; `body` is escaped unless Html."""
    return html('<section class="card $cls"$ident>$heading$body</section>', cls=cls, body=body,
                ident=attrs(id=anchor or None), heading=html("<h2>$t</h2>", t=title) if title else "")


def link(href: str, text, cls: str = "") -> Html:
    return html('<a href="$href"$cls>$text</a>', href=href, text=text, cls=attrs(class_=cls or None))


def options(choices: list[tuple[str, str]], selected=None) -> Html:
    chosen = {selected} if isinstance(selected, str) or selected is None else set(selected)
    return join(html('<option value="$v"$on>$label</option>', v=v, label=label, on=flag("selected", v in chosen))
                for v, label in choices)
