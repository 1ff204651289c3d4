"""Collections: each with its purpose, members and their record, what they share, suggestions, and how to ask it."""
from __future__ import annotations

from ...words import plural
from ..apicall import get
from ..contract import stays
from ..render import card, e, link, table
from ..widgets import chip, record_cell

CHIP_FOR = {"promote": "done", "replace": "wrong", "retired": "retired", "gone": "failed"}


def data(req, bench) -> dict:
    names = [c["name"] for c in get(req, "/bench/collections")["collections"]]
    status = get(req, "/bench/status")
    return {"collections": [get(req, f"/bench/collections/{n}/overview") for n in names],
            "url": status["url"], "keys_enforced": status["gateway_keys"]["enforced"]}


def render(d: dict, frame) -> tuple[str, str]:
    head = '<div class="page-actions"><a class="button" href="/collections/_new">New collection</a></div>'
    if not d["collections"]:
        return "Collections", head + (
            '<p class="empty">No collections yet. A collection is a panel for one kind of work (code review, '
            'design, …): <a href="/collections/_new">make the first one</a> from the models on the bench.</p>')
    return "Collections", head + "".join(collection_card(c, d) for c in d["collections"])


def collection_card(c: dict, d: dict) -> str:
    title = f'<h2>{link("/collections/" + c["name"], c["name"])}</h2>'
    purpose = f'<p class="purpose">{e(c["description"])}</p>' if c["description"] else ""
    body = (title + purpose + seats_line(c) + together_line(c["together"]) + members_table(c) + suggestions(c)
            + usage(c, d["url"], d["keys_enforced"]))
    return f'<section class="card collection">{body}</section>'


def seats_line(c: dict) -> str:
    return f'<p class="seat-count">{seat_count(c["seats"])}</p>'


def seat_count(s: dict) -> str:
    """How many calls one ask makes, and of what (inline HTML; the editor's script writes the same words)."""
    return (f'<strong>One ask makes {plural(s["calls"], "call")}</strong>: '
            f'{plural(s["members"], "member")} + {plural(s["explore"], "explore seat")}; '
            ':merged adds one for the merge.')


def together_line(t: dict) -> str:
    parts = [f'context up to {t["context_window"]:,} tokens' if t["context_window"] else "context window not known"]
    for flag in ("tools", "vision"):
        parts.append({True: f"all use {flag}", False: f"not all use {flag}", None: f"{flag}: not known for all"}
                     [t[flag]])
    limit = t["tightest_limit"]
    parts.append(f'tightest limit {plural(limit["requests_limit"], "request")} ({e(limit["endpoint"])})' if limit
                 else "no rate limit known yet")
    return f'<p class="together"><span class="label">Together</span> {e(" · ".join(parts))}</p>'


def members_table(c: dict) -> str:
    rows = [[link(f"/models/{m['alias']}", m["alias"]) if m["on_bench"] else e(m["alias"]),
             chip(m["status"]), record_cell(m["record"]), record_cell(m["overall"])] for m in c["members_detail"]]
    return table(["Member", "Status", "Useful here", "Useful everywhere"], rows,
                 f"No members: {c['explore']} explore seats answer each ask.")


def suggestions(c: dict) -> str:
    if not c["suggestions"]:
        return ""
    items = "".join(f'<li>{chip(CHIP_FOR.get(s["kind"], "queued"), s["kind"])} {e(s["text"])}</li>'
                    for s in c["suggestions"])
    return f'<div class="suggestions"><h3>Suggestions from the record</h3><ul class="plain-list">{items}</ul></div>'


def usage(c: dict, url: str, keyed: bool, opened: bool = False) -> str:
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
    names = " ".join(f'<code>{e(v)}</code>' for v in n.values())
    blocks = "".join(snippet(c["name"], label, text) for label, text in snippets.items())
    return (f'<details class="usage"{" open" if opened else ""}><summary>Ask it as {names}</summary>'
            f'<p class="muted"><code>{e(n["panel"])}</code> asks the panel, <code>{e(n["merged"])}</code> adds one '
            f'merged answer, <code>{e(n["route"])}</code> gives an agent one member with its tools.</p>{blocks}'
            "</details>")


def snippet(name: str, label: str, text: str) -> str:
    ident = f"snip-{name}-{label.split()[0].lower()}"
    return (f'<div class="snippet"><div class="snippet-head"><span>{e(label)}</span>'
            f'<button type="button" class="ghost small" data-copy="#{e(ident)}">Copy</button></div>'
            f'<pre id="{e(ident)}">{e(text)}</pre></div>')


SCRIPTS: tuple = ()
redirect = stays                 # always shows itself
ACTIONS: list = []               # posts no form of its own
