"""Collections: each with its purpose, members and their record, what they share, suggestions, and how to ask it."""
from __future__ import annotations

from typing import Protocol

from ...api.collection import CollectionParts, collections_view, overview_view
from ...core.ratings import Ratings
from ...server.gatewaykeys import enforcement
from ...server.messages import Request
from ...words import plural
from ..contract import stays
from ..markup import Html, flag, html, join, link, table, trusted
from ..parts import Served
from ..ratingsview import by_model, rating_cell
from ..web import Frame
from ..widgets import chip, record_cell


class CollectionListPageParts(CollectionParts, Served, Protocol):
    """Every collection's overview with its members' ratings, and where the service is."""
    ratings: Ratings


CHIP_FOR = {"promote": "done", "replace": "wrong", "retired": "retired", "gone": "failed"}


def data(req: Request, bench: CollectionListPageParts) -> dict:
    names = [c["name"] for c in collections_view(bench)["collections"]]
    return {"collections": [dict(overview_view(bench, n), ratings=by_model(bench.ratings.of((n,)).to_dict()))
                            for n in names],
            "url": bench.url, "keys_enforced": enforcement(bench.admin_token, bench.settings())["enforced"]}


NEW = trusted('<div class="page-actions"><a class="button" href="/collections/_new">New collection</a></div>')


def render(d: dict, frame: Frame) -> tuple[str, Html]:
    if not d["collections"]:
        return "Collections", html('$new<p class="empty">No collections yet. A collection is a panel for one kind '
                                   'of work (code review, design, …): <a href="/collections/_new">make the first '
                                   "one</a> from the models on the bench.</p>", new=NEW)
    return "Collections", html("$new$cards", new=NEW, cards=[collection_card(c, d) for c in d["collections"]])


def collection_card(c: dict, d: dict) -> Html:
    return html('<section class="card collection"><h2>$title</h2>$purpose$seats$together$members$suggestions$usage'
                "</section>", title=link("/collections/" + c["name"], c["name"]),
                purpose=html('<p class="purpose">$p</p>', p=c["description"]) if c["description"] else "",
                seats=seats_line(c), together=together_line(c["together"]), members=members_table(c),
                suggestions=suggestions(c), usage=usage(c, d["url"], d["keys_enforced"]))


def seats_line(c: dict) -> Html:
    return html('<p class="seat-count">$count</p>', count=seat_count(c["seats"]))


def seat_count(s: dict) -> Html:
    """How many calls one ask makes, and of what (inline HTML; the editor's script writes the same words)."""
    return html("<strong>One ask makes $calls</strong>: $members + $explore$referee; :merged adds one for the merge.",
                calls=plural(s["calls"], "call"), members=plural(s["members"], "member"),
                explore=plural(s["explore"], "explore seat"),
                referee=" + the referee (after the reply)" if s.get("referee") else "")


def together_line(t: dict) -> Html:
    parts = [f'context up to {t["context_window"]:,} tokens' if t["context_window"] else "context window not known"]
    for what in ("tools", "vision"):
        parts.append({True: f"all use {what}", False: f"not all use {what}", None: f"{what}: not known for all"}
                     [t[what]])
    limit = t["tightest_limit"]
    parts.append(f'tightest limit {plural(limit["requests_limit"], "request")} ({limit["endpoint"]})' if limit
                 else "no rate limit known yet")
    return html('<p class="together"><span class="label">Together</span> $parts</p>', parts=" · ".join(parts))


def members_table(c: dict) -> Html:
    rated = c.get("ratings") or {}
    rows = [[link(f"/models/{m['alias']}", m["alias"]) if m["on_bench"] else m["alias"],
             chip(m["status"]), record_cell(m["record"]), rating_cell(rated.get(m["alias"])),
             record_cell(m["overall"])] for m in c["members_detail"]]
    return table(["Member", "Status", "Useful here", "Rating here (best picks)", "Useful everywhere"], rows,
                 f"No members: {c['explore']} explore seats answer each ask.")


def suggestions(c: dict) -> Html:
    if not c["suggestions"]:
        return Html("")
    items = [html("<li>$chip $text</li>", chip=chip(CHIP_FOR.get(s["kind"], "queued"), s["kind"]), text=s["text"])
             for s in c["suggestions"]]
    return html('<div class="suggestions"><h3>Suggestions from the record</h3><ul class="plain-list">$items</ul></div>',
                items=items)


def usage(c: dict, url: str, keyed: bool, opened: bool = False) -> Html:
    """The gateway names and copyable snippets: curl, the OpenAI SDK, Claude Code."""
    n = c["names"]
    key = "$BENCHWARMERS_KEY" if keyed else ""
    auth = f' -H "Authorization: Bearer {key}"' if keyed else ""
    snippets = {
        "curl": f"curl {url}/v1/chat/completions \\\n  -H \"Content-Type: application/json\""
                + (f" \\\n {auth}" if keyed else "") + " \\\n"
                f"  -d '{{\"model\": \"{n['panel']}\",\n       \"messages\": [{{\"role\": \"user\",\n"
                f"                     \"content\": \"Review this diff\"}}]}}'",
        "OpenAI SDK (Python)": f"from openai import OpenAI\n\nclient = OpenAI(\n    base_url=\"{url}/v1\",\n"
                               f"    api_key=\"{'your gateway key' if keyed else 'not-needed'}\")\n"
                               f"reply = client.chat.completions.create(\n    model=\"{n['panel']}\",\n"
                               f"    messages=[{{\"role\": \"user\",\n               \"content\": \"Review this "
                               f"diff\"}}])\n"
                               "print(reply.choices[0].message.content)",
        "Claude Code": f"export ANTHROPIC_BASE_URL={url}\nexport ANTHROPIC_MODEL={n['route']}\n"
                       f"export ANTHROPIC_DEFAULT_HAIKU_MODEL={n['route']}"
                       + ("\nexport ANTHROPIC_AUTH_TOKEN=<gateway key>" if keyed else "") + "\nclaude",
    }
    return html('<details class="usage"$open><summary>Ask it as $names</summary><p class="muted"><code>$panel</code> '
                "asks the panel, <code>$merged</code> adds one merged answer, <code>$route</code> gives an agent one "
                "member with its tools.</p>$blocks</details>", open=flag("open", opened),
                names=join([html("<code>$v</code>", v=v) for v in n.values()], " "), panel=n["panel"],
                merged=n["merged"], route=n["route"],
                blocks=[snippet(c["name"], label, text) for label, text in snippets.items()])


def snippet(name: str, label: str, text: str) -> Html:
    ident = f"snip-{name}-{label.split()[0].lower()}"
    return html('<div class="snippet"><div class="snippet-head"><span>$label</span><button type="button" '
                'class="ghost small" data-copy="#$id">Copy</button></div><pre id="$id">$text</pre></div>',
                label=label, id=ident, text=text)


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
