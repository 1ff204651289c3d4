"""CLI Proxy API as a hub: the entries of its management API's OpenAI-compatibility list are the sources, and a
new model joins an entry's models.

Facts from CLIProxyAPI's source (internal/api/server_management.go, internal/api/handlers/management/
handler.go, config_lists.go, internal/config/config_types.go, sdk/cliproxy/service_models.go): the management
routes are under /v0/management and take the management key as `Authorization: Bearer` (or X-Management-Key);
GET /openai-compatibility answers {"openai-compatibility": [{name, prefix, base-url, api-key-entries, models:
[{name, alias}]}]}; PATCH /openai-compatibility {"name", "value"} changes the entry so named (404 {"error": "item
not found"}): newer releases set only the fields `value` holds, older ones replace the entry whole with `value`
and delete an entry whose `value` has no base-url, so the adapter sends the whole entry as read, its models
changed (the same on either); refusals are {"error": "..."}: 401 missing or invalid management key, 403
remote management disabled or no key set, and a bare 404 while management is off. A model is listed under its
alias (its name when no alias), and also as "prefix/alias" when the entry has a prefix; the proxy reloads its
config after a save, in the background.
"""
from __future__ import annotations

from .base import Hub, Source

LIST = "/v0/management/openai-compatibility"


def models_of(entry: dict) -> list[dict]:
    """An entry's models as the hub listed them (anything else in an odd answer is no model)."""
    found = entry.get("models")
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


class CLIProxy(Hub):
    kind, title, name = "cliproxy", "CLI Proxy API", "CLI Proxy API"
    doc = "base URL http://HOST:8317/v1, admin key: its management key"

    def entries(self) -> list[dict]:
        data = self.ok(*self.call("GET", LIST), "reading its OpenAI-compatibility list")
        if not isinstance(data, dict):
            raise self.bad("an OpenAI-compatibility list")
        rows = data.get("openai-compatibility")
        if rows is None:
            return []                        # no entry yet: Go's nil list
        if not isinstance(rows, list):
            raise self.bad("an OpenAI-compatibility list")
        rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"]]
        if not all(isinstance(r.get("base-url"), (str, type(None))) for r in rows):
            raise self.bad("an OpenAI-compatibility list, each base-url a text")
        for r in rows:     # the entries' own keys: never said
            held = got if isinstance(got := r.get("api-key-entries"), list) else []
            self.secrets([e.get("api-key") for e in held if isinstance(e, dict)])
        return rows

    def sources(self) -> list[Source]:
        return [Source(r["name"], f"entry {r['name']}", base_url=(r.get("base-url") or "").rstrip("/") or None)
                for r in self.entries()]

    def add(self, model: str, source: Source) -> str:
        entry = next((r for r in self.entries() if r["name"] == source.id), None)
        if entry is None:
            raise self.bad(f"an entry named {source.id!r}")
        models = models_of(entry)
        if not any(model in (m.get("name"), m.get("alias")) for m in models):
            self.save(entry, [*models, {"name": model, "alias": model}], f"adding {model} to {source.id}")
        return model

    def save(self, entry: dict, models: list[dict], doing: str) -> None:
        """The entry back whole with new models: an older release would otherwise drop what the PATCH leaves out."""
        self.ok(*self.call("PATCH", LIST, {"name": entry["name"], "value": {**entry, "models": models}}), doing)

    def remove(self, served: str) -> bool:
        removed = False
        for entry in self.entries():
            models = models_of(entry)
            kept = [m for m in models if served not in (m.get("alias") or m.get("name"), m.get("name"))]
            if len(kept) != len(models):
                self.save(entry, kept, f"removing {served} from {entry['name']}")
                removed = True
        return removed
