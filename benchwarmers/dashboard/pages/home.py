"""The home page: service status, data folder, endpoints, models and collections."""
from __future__ import annotations

from ...api.status import summary
from ...errors import ConfigError
from ...server.bench import Bench
from ...server.messages import Request, Response
from ..render import e, page, table


def data(bench: Bench) -> dict:
    """The status summary, and the roster and collections as the registry and the collections store read them."""
    d = summary(bench)
    d["endpoints"] = [{"name": n, "base_url": x.base_url, "api": x.api}
                      for n, x in sorted(readable(bench.registry.endpoints).items())]
    d["models"] = [{"alias": a, "endpoint": m.endpoint, "served": m.served, "status": m.status}
                   for a, m in sorted(readable(bench.registry.models).items())]
    d["collections"] = [{"name": n, "description": c.description, "members": c.members, "explore": c.explore}
                        for n, c in sorted(readable(bench.collections.all).items())]
    return d


def readable(read) -> dict:
    """What `read()` returns, or nothing while a config file is broken (config_problems names its line)."""
    try:
        return read()
    except ConfigError:
        return {}


def render(d: dict) -> str:
    problems = "".join(f'<p class="error">Config problem: {e(p)}</p>' for p in d["config_problems"])
    problems += "".join(f'<p class="error">Held: {e(h["model"])}: {e(h["reason"])}. '
                        f'<code>bench model confirm {e(h["model"])}</code> accepts it.</p>' for h in d.get("held", []))
    facts = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in (
        ("Service", f'<span class="ok">running</span> · {e(d["role"])}'),
        ("Version", e(d["version"])), ("URL", e(d["url"])), ("Gateway base URL", e(d["url"] + "/v1")),
        ("Listening on", e(d["bind"])), ("Data folder", e(d["data_folder"])),
        ("Admin token", "set" if d["admin_token_set"] else "not set (loopback only)")))
    endpoints = table(["Name", "API", "Base URL"],
                      [[e(x["name"]), e(x["api"]), f"<code>{e(x['base_url'])}</code>"] for x in d["endpoints"]],
                      "No endpoints yet. Add the first one with "
                      "<code>bench endpoint add openrouter --base https://openrouter.ai/api/v1</code> "
                      "(the key is prompted for, never typed as an argument).")
    models = table(["Alias", "Endpoint", "Served name", "Status"],
                   [[e(m["alias"]), e(m["endpoint"]), f"<code>{e(m['served'])}</code>", e(m["status"])]
                    for m in d["models"]],
                   "No models on the bench yet. See what your endpoints serve with "
                   "<code>bench candidates --new</code>, then <code>bench onboard NAME</code>.")
    collections = table(["Name", "Description", "Members", "Explore seats", "Ask as"],
                        [[e(c["name"]), e(c["description"]), e(", ".join(c["members"])), e(c["explore"]),
                          f"<code>bench/{e(c['name'])}</code>"] for c in d["collections"]],
                        "No collections yet. Make one with "
                        "<code>bench collection save core --members a,b,c --description \"code review\"</code>.")
    return (f'{problems}<section class="card"><dl class="facts">{facts}</dl></section>'
            f"<h2>Endpoints</h2>{endpoints}<h2>Models</h2>{models}<h2>Collections</h2>{collections}")


def view(req: Request, bench: Bench) -> Response:
    d = data(bench)
    if req.path.endswith(".json"):
        return Response.json(d)
    return page("Status", render(d), version=bench.version, path="/", show_logout=bool(bench.admin_token))
