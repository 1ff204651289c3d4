"""Open WebUI as a hub: its OpenAI connections (GET /openai/config, POST /openai/config/update) are the sources,
and its models API (POST /api/v1/models/create) makes a model visible to the hub's users.

Facts from Open WebUI's source (backend/open_webui/routers/openai.py, models.py, utils/auth.py): the config
holds OPENAI_API_BASE_URLS, OPENAI_API_KEYS and OPENAI_API_CONFIGS (by the connection's index as a string: enable,
prefix_id, model_ids); a connection whose model_ids is not empty lists only those models, and one with a prefix_id
lists each as "prefix.id"; /config/update takes the whole config back. Admin routes answer a missing token with
403 {"detail": "Not authenticated"}, a bad one with 401 and a non-admin with 401; a model id already registered is
a 401 whose detail says "already registered", a record not found on delete a 401 saying "could not find". Who may
use a model record: older releases read `access_control` (null: every user), newer ones `access_grants` (a grant
to principal "*" for every user), so a record carries both. Newer releases delete a record with POST
/api/v1/models/model/delete {"id"}; older ones only with DELETE ...?id= (a POST there is FastAPI's 405). The
OpenAI-compatible base URL is the hub's /api.
"""
from __future__ import annotations

from urllib.parse import quote

from .base import Hub, Source

TAKEN, MISSING = "already registered", "could not find"
EVERYONE_READS = {"principal_type": "user", "principal_id": "*", "permission": "read"}
DELETE = "/api/v1/models/model/delete"


class OpenWebUI(Hub):
    kind, title, name = "open-webui", "Open WebUI", "Open WebUI"
    doc = "base URL http://HOST:3000/api, admin key: an admin's API key"

    @staticmethod
    def root_of(base_url: str) -> str:
        return base_url.removesuffix("/api")

    def config(self) -> dict:
        data = self.ok(*self.call("GET", "/openai/config"), "reading its connections")
        if not isinstance(data, dict) or not isinstance(data.get("OPENAI_API_BASE_URLS"), list):
            raise self.bad("its connections")
        if not all(isinstance(u, str) for u in data["OPENAI_API_BASE_URLS"]):
            raise self.bad("its connections, each URL a text")
        self.secrets(data.get("OPENAI_API_KEYS"))      # the connections' own keys: sent back, never said
        return data

    def save(self, cfg: dict, configs: dict, doing: str) -> None:
        """The whole connections config back, with the changed per-connection settings (as the route wants)."""
        body = {k: cfg.get(k) for k in ("ENABLE_OPENAI_API", "OPENAI_API_BASE_URLS", "OPENAI_API_KEYS",
                                         "ENABLE_API_DEBUG_LOGGING") if k in cfg}
        self.ok(*self.call("POST", "/openai/config/update", {**body, "OPENAI_API_CONFIGS": configs}), doing)

    def sources(self) -> list[Source]:
        urls = self.config()["OPENAI_API_BASE_URLS"]
        return [Source(str(i), f"connection {i}: {u}", base_url=u.rstrip("/")) for i, u in enumerate(urls)]

    def add(self, model: str, source: Source) -> str:
        """The model joins the connection's model list when the connection keeps one (else the connection lists
        it already); then a model record makes it visible to the hub's users. Returns its id on the hub."""
        cfg = self.config()
        configs = got if isinstance(got := cfg.get("OPENAI_API_CONFIGS"), dict) else {}
        conn = got if isinstance(got := configs.get(source.id), dict) else {}
        ids = got if isinstance(got := conn.get("model_ids"), list) else []
        if ids and model not in ids:
            configs[source.id] = {**conn, "model_ids": [*ids, model]}
            self.save(cfg, configs, f"adding {model} to connection {source.id}")
        served = f"{conn['prefix_id']}.{model}" if conn.get("prefix_id") else model
        record = {"id": served, "base_model_id": None, "name": model, "params": {}, "access_control": None,
                  "access_grants": [EVERYONE_READS],
                  "meta": {"description": "Added by Benchwarmers from connection " + source.id}}
        status, data = self.call("POST", "/api/v1/models/create", record)
        if not (status == 401 and TAKEN in self.words(data)):   # a record there already is the model's own
            self.ok(status, data, f"making a model record for {served}")
        return served

    def remove(self, served: str) -> bool:
        """The model record goes, and the model leaves any connection's model list that names it."""
        cfg, changed = self.config(), False
        configs = got if isinstance(got := cfg.get("OPENAI_API_CONFIGS"), dict) else {}
        for idx, conn in configs.items():
            prefix = f"{conn.get('prefix_id')}." if isinstance(conn, dict) and conn.get("prefix_id") else ""
            ids = got if isinstance(conn, dict) and isinstance(got := conn.get("model_ids"), list) else []
            bare = served[len(prefix):] if prefix and served.startswith(prefix) else served
            if bare in ids:
                configs[idx] = {**conn, "model_ids": [i for i in ids if i != bare]}
                changed = True
        if changed:
            self.save(cfg, configs, f"removing {served} from its connections")
        status, data = self.call("POST", DELETE, {"id": served})
        if status == 405:                    # an older release: the same route takes DELETE with the id in the query
            status, data = self.call("DELETE", f"{DELETE}?id={quote(served, safe='')}")
        if status != 401 or MISSING not in self.words(data).lower():
            self.ok(status, data, f"removing the model record of {served}")
        return True
