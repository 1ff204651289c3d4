"""The Settings page's section for providers whose free models work only in their own app: one switch each.

Off (the default), Discover leaves such a provider's free models out and explore seats pass them over; on, they
count like any model (say, for an endpoint that reaches the provider through its app). Kept in overrides.json
through PUT /bench/catalog/app-only/{provider}.
"""
from __future__ import annotations

from typing import Protocol

from ..catalog import Catalog
from ..server.messages import Request
from .apicall import call
from .markup import Html, flag, html
from .web import Done, Form, Frame
from .widgets import csrf, external


class AppOnlyParts(Protocol):
    """The catalog's providers whose free models work only in their own app."""
    catalog: Catalog


def read(req: Request, bench: AppOnlyParts) -> list[dict]:
    return bench.catalog.app_only()


def show(providers: list[dict], frame: Frame) -> Html:
    rows = [html('<li><label class="choice"><input type="checkbox" name="use_free" value="$p"$on> Use $name’s free '
                 'models anyway</label><span class="reason">$why $docs</span></li>', p=p["provider"],
                 on=flag("checked", p["use_free"]), name=p["name"], why=p["why"], docs=external(p["doc"], "Their docs"))
            for p in providers]
    return html('<p class="muted">These providers’ free models answer only their own app. While a switch is off, '
                "Discover leaves them out and explore seats pass them over; switch one on when your endpoint reaches "
                "them through that app. Their paid models are not affected.</p>"
                '<form method="post" action="/settings/app-only">$csrf<ul class="plain-list">$rows</ul>'
                '<div class="form-end"><button type="submit">Save switches</button></div></form>', csrf=csrf(frame),
                rows=rows)


def save(req: Request, bench: AppOnlyParts, form: Form) -> Done:
    """Only the switches that changed are sent."""
    wanted = set(form.getlist("use_free"))
    changed = []
    for p in read(req, bench):
        on = p["provider"] in wanted
        if on != p["use_free"]:
            call(req, "PUT", f"/bench/catalog/app-only/{p['provider']}", {"use_free": on})
            changed.append(f"{p['name']} {'on' if on else 'off'}")
    return Done("Saved: " + ", ".join(changed) + "." if changed else "Nothing changed.", "/settings#app_only",
                {"changed": changed})
