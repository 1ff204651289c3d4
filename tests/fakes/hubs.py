"""Fake hubs whose admin APIs follow each hub's own source (see benchwarmers/hubs/ for the facts and where they
come from), error shapes included; each serves its OpenAI-compatible list and chat with the API key, computed
from what its admin API was told, so adding a model through the admin API is what makes it listed.

    with FakeLiteLLM(admin_key="sk-master") as hub: hub.deployments, hub.added   # /model/new bodies received
    with FakeCLIProxy(admin_key="mgmt") as hub: hub.entries, hub.lag = 2         # reloads after 2 list reads
    with FakeOpenWebUI(admin_key="sk-admin") as hub: hub.urls, hub.configs, hub.upstream, hub.records
    hub.raw = b"[[[..."                     # a hostile hub: its admin read answers these bytes instead
    HUB_FAKES[kind]                         # the fake of each kind of benchwarmers.hubs.KINDS
"""
from __future__ import annotations

import copy
import secrets

from .openai import FakeOpenAI
from .server import Recorded

API_KEY = "sk-hub-api-key-0123"
UPSTREAM_KEY = "upstream-Xk7Qm2Rt9Lp4Vw8Z"     # the key a hub's admin answer shows for its upstream: key-shaped


class FakeHub(FakeOpenAI):
    """The shared part: the API key for the OpenAI-compatible routes, the admin key for the admin ones."""
    api_prefix = "/v1"

    def __init__(self, admin_key: str = "admin-key-0123", **kw):
        super().__init__(**kw)
        self.admin_key = admin_key
        self.expect_key(API_KEY)
        self.writes: list[Recorded] = []          # every admin call that changes something
        self.raw: bytes | None = None             # what its admin read answers instead of its state, when set

    def read_answer(self, h, body) -> bool:
        """Answer an admin read with the hub's state, or with the bytes a test set in `raw`."""
        if self.raw is not None:
            h.send_bytes(200, "application/json", self.raw)
        else:
            h.send_json(200, body)
        return True

    def listed(self) -> list[str]:
        raise NotImplementedError

    def admin(self, h, rec: Recorded) -> bool:
        """Route an admin call; False when the path is not one of its admin routes."""
        raise NotImplementedError

    def route(self, h, rec: Recorded) -> None:
        if self.admin(h, rec):
            return
        if rec.path.startswith(self.api_prefix + "/"):
            rec.path = "/v1" + rec.path[len(self.api_prefix):]
        if rec.path.rstrip("/") == "/v1/models" and rec.method == "GET":
            self.set_models(self.listed())
        return super().route(h, rec)

    def sent_admin(self, rec: Recorded) -> str | None:
        return self.sent_key(rec)


class FakeLiteLLM(FakeHub):
    """/model/info, /model/new, /model/delete; errors as ProxyException: {"error": {message, type, param, code}}."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.store_model_in_db = True
        self.deployments: list[dict] = []
        self.added: list[dict] = []

    def deploy(self, name: str, model: str, db: bool = False, **params) -> None:
        self.deployments.append({"model_name": name, "litellm_params": {"model": model, **params},
                                 "model_info": {"id": secrets.token_hex(8), "db_model": db}})

    def listed(self) -> list[str]:
        return sorted({d["model_name"] for d in self.deployments})

    def proxy_error(self, h, status: int, message: str, kind: str = "auth_error") -> None:
        h.send_json(status, {"error": {"message": message, "type": kind, "param": "None", "code": str(status)}})

    def admin(self, h, rec: Recorded) -> bool:
        if rec.path not in ("/model/info", "/v1/model/info", "/model/new", "/model/delete"):
            return False
        if self.sent_admin(rec) != self.admin_key:
            self.proxy_error(h, 401, "Authentication Error, Invalid proxy server token passed. Received API Key = "
                                     "sk-...0123, Key Hash (Token) =abc. Unable to find token in cache or "
                                     "`LiteLLM_VerificationTokenTable`")
            return True
        if rec.path.endswith("/model/info"):
            rows = [{**d, "litellm_params": {k: v for k, v in d["litellm_params"].items() if k != "api_key"}}
                    for d in self.deployments]
            return self.read_answer(h, {"data": rows})
        self.writes.append(rec)
        body = rec.body if isinstance(rec.body, dict) else {}
        if not self.store_model_in_db:
            self.proxy_error(h, 500, "{'error': \"Set `'STORE_MODEL_IN_DB='True'` in your env to enable this "
                                     "feature.\"}")
            return True
        if rec.path == "/model/delete":
            before = len(self.deployments)
            self.deployments = [d for d in self.deployments if d["model_info"]["id"] != body.get("id")]
            if len(self.deployments) == before:
                self.proxy_error(h, 400, "Authentication Error, model not found")
            else:
                h.send_json(200, {"message": f"Model: {body.get('id')} deleted successfully"})
            return True
        if not body.get("model_name") or not isinstance(body.get("litellm_params"), dict) \
                or not body["litellm_params"].get("model"):
            self.proxy_error(h, 422, "litellm_params.model: Field required", "bad_request_error")
            return True
        self.added.append(body)
        row = {"model_name": body["model_name"], "litellm_params": dict(body["litellm_params"]),
               "model_info": {**(body.get("model_info") or {}), "id": secrets.token_hex(8), "db_model": True}}
        self.deployments.append(row)          # a second one of a name is kept too: LiteLLM balances them
        h.send_json(200, {"model_id": row["model_info"]["id"], "model_name": row["model_name"],
                          "litellm_params": {"model": row["litellm_params"]["model"]}, "model_info": row["model_info"]})
        return True


class FakeCLIProxy(FakeHub):
    """/v0/management/openai-compatibility GET and PATCH, the management key as a bearer; errors {"error": ...}.
    A PATCH sets the fields its `value` holds, as newer releases do, or with `legacy` replaces the entry whole with
    `value` (and deletes it when `value` has no base-url), as older ones do."""
    FIELDS = ("name", "prefix", "base-url", "api-key-entries", "models", "headers")

    def __init__(self, **kw):
        super().__init__(**kw)
        self.entries: list[dict] = []
        self.legacy = False
        self.management = True
        self.lag = 0                    # list reads before a saved change shows (its config reloads in background)
        self._shown: list[dict] = []

    def entry(self, name: str, base_url: str, models: list[str], prefix: str = "") -> None:
        self.entries.append({"name": name, "prefix": prefix, "base-url": base_url,
                             "api-key-entries": [{"api-key": UPSTREAM_KEY}],
                             "models": [{"name": m, "alias": ""} for m in models]})
        self._shown = copy.deepcopy(self.entries)

    def listed(self) -> list[str]:
        if self.lag:
            self.lag -= 1
        else:
            self._shown = copy.deepcopy(self.entries)
        out = []
        for e in self._shown:
            for m in e["models"] if isinstance(e["models"], list) else []:
                alias = m.get("alias") or m.get("name")
                out += [alias] + ([f"{e['prefix']}/{alias}"] if e.get("prefix") else [])
        return out

    def admin(self, h, rec: Recorded) -> bool:
        if not rec.path.startswith("/v0/management"):
            return False
        if not self.management:
            h.send_bytes(404, "text/plain", b"404 page not found")
            return True
        key = self.sent_admin(rec) or rec.headers.get("x-management-key")
        if not key:
            h.send_json(401, {"error": "missing management key"})
            return True
        if key != self.admin_key:
            h.send_json(401, {"error": "invalid management key"})
            return True
        if rec.path != "/v0/management/openai-compatibility":
            h.send_bytes(404, "text/plain", b"404 page not found")
            return True
        if rec.method == "GET":
            return self.read_answer(h, {"openai-compatibility": self.entries or None})
        if rec.method != "PATCH":
            h.send_json(405, {"error": "method not allowed"})
            return True
        self.writes.append(rec)
        body = rec.body if isinstance(rec.body, dict) else {}
        value = body.get("value")
        if not isinstance(value, dict):
            h.send_json(400, {"error": "invalid body"})
            return True
        target = next((e for e in self.entries if e["name"] == body.get("name")), None)
        if target is None:
            h.send_json(404, {"error": "item not found"})
            return True
        if self.legacy:        # an older release: the entry becomes `value`, and one without a base-url is deleted
            where = self.entries.index(target)
            if str(value.get("base-url") or "").strip():
                self.entries[where] = {k: v for k, v in value.items() if k in self.FIELDS}
            else:
                del self.entries[where]
        else:                  # a newer one: only the fields `value` holds change
            target.update({k: v for k, v in value.items() if k in self.FIELDS})
        h.send_json(200, {"status": "ok"})
        return True


class FakeOpenWebUI(FakeHub):
    """/openai/config, /openai/config/update, /api/v1/models/create and /model/delete; FastAPI's {"detail": ...}.
    The delete is a POST with {"id"} as newer releases take it, or with `legacy` a DELETE with ?id= as older ones
    do (the other method is FastAPI's 405)."""
    url_suffix = "/api"
    api_prefix = "/api"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.urls: list[str] = []
        self.keys: list[str] = []
        self.configs: dict[str, dict] = {}
        self.upstream: dict[int, list[str]] = {}     # what each connection's upstream serves
        self.records: dict[str, dict] = {}
        self.legacy = False

    def connection(self, url: str, serves: list[str], model_ids: list[str] | None = None, prefix: str = "") -> None:
        idx = len(self.urls)
        self.urls.append(url)
        self.keys.append(UPSTREAM_KEY)
        self.upstream[idx] = serves
        self.configs[str(idx)] = {"enable": True, "model_ids": model_ids or [], "prefix_id": prefix}

    def listed(self) -> list[str]:
        out = []
        for idx, _ in enumerate(self.urls):
            cfg = self.configs.get(str(idx), {})
            if cfg.get("enable", True) is False:
                continue
            ids = cfg.get("model_ids") or self.upstream.get(idx, [])
            out += [f"{cfg['prefix_id']}.{m}" if cfg.get("prefix_id") else m for m in ids]
        return out

    def detail(self, h, status: int, detail) -> bool:
        h.send_json(status, {"detail": detail})
        return True

    def admin(self, h, rec: Recorded) -> bool:
        if not (rec.path.startswith("/openai/") or rec.path.startswith("/api/v1/models")):
            return False
        key = self.sent_admin(rec)
        if key is None:
            return self.detail(h, 403, "Not authenticated")
        if key == API_KEY:
            return self.detail(h, 401, "You do not have permission to access this resource. Please contact your "
                                       "administrator for assistance.")
        if key != self.admin_key:
            return self.detail(h, 401, "Your session has expired or the token is invalid. Please sign in again.")
        if rec.method == "GET" and rec.path == "/openai/config":
            return self.read_answer(h, {"ENABLE_OPENAI_API": True, "OPENAI_API_BASE_URLS": self.urls,
                                        "OPENAI_API_KEYS": self.keys, "OPENAI_API_CONFIGS": self.configs,
                                        "ENABLE_API_DEBUG_LOGGING": False})
        self.writes.append(rec)
        body = rec.body if isinstance(rec.body, dict) else {}
        if rec.method == "POST" and rec.path == "/openai/config/update":
            if not all(isinstance(body.get(k), t) for k, t in (("OPENAI_API_BASE_URLS", list),
                                                               ("OPENAI_API_KEYS", list), ("OPENAI_API_CONFIGS", dict))):
                return self.detail(h, 422, [{"type": "missing", "loc": ["body", "OPENAI_API_BASE_URLS"],
                                             "msg": "Field required"}])
            self.urls, self.keys = body["OPENAI_API_BASE_URLS"], body["OPENAI_API_KEYS"]
            self.configs = {k: v for k, v in body["OPENAI_API_CONFIGS"].items() if k.isdigit()
                            and int(k) < len(self.urls)}
            return self.detail_free(h, body)
        if rec.method == "POST" and rec.path == "/api/v1/models/create":
            if body.get("id") in self.records:
                return self.detail(h, 401, "Uh-oh! This model id is already registered. Please choose another "
                                           "model id string.")
            self.records[body["id"]] = body
            return self.detail_free(h, {**body, "user_id": "admin", "created_at": 1, "updated_at": 1})
        if rec.path == "/api/v1/models/model/delete":
            if rec.method != ("DELETE" if self.legacy else "POST"):
                return self.detail(h, 405, "Method Not Allowed")
            found = self.records.pop(rec.query.get("id") if self.legacy else body.get("id"), None)
            if found is None:
                return self.detail(h, 401, "We could not find what you're looking for :/")
            return self.detail_free(h, True)
        return self.detail(h, 404, "Not Found")

    def detail_free(self, h, body) -> bool:
        h.send_json(200, body)
        return True


HUB_FAKES: dict[str, type[FakeHub]] = {"open-webui": FakeOpenWebUI, "litellm": FakeLiteLLM,
                                       "cliproxy": FakeCLIProxy}
