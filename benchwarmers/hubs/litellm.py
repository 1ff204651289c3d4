"""The LiteLLM proxy as a hub: the providers of its deployments (GET /model/info) are the sources, and a new
model is a deployment (POST /model/new) of the provider's model with a reference to its key, never the key.

Facts from LiteLLM's docs (proxy/model_management) and source (proxy/management_endpoints/
model_management_endpoints.py, proxy/common_utils/openai_endpoint_utils.py): /model/new takes {model_name,
litellm_params: {model: "<provider>/<model>", api_key, api_base, litellm_credential_name}, model_info} and answers
the stored row (model_id, model_name, litellm_params, model_info); it needs STORE_MODEL_IN_DB=True, else a 500
whose message says so; it keeps a second deployment of a name already served (LiteLLM balances between them), so
this adapter looks first. /model/info answers {"data": [{model_name, litellm_params (api_key removed),
model_info: {id, db_model, litellm_provider}}]}; POST /model/delete {"id"} removes one. Errors are
{"error": {"message", "type", "param", "code"}}, a bad key a 401. An `api_key` of "os.environ/NAME" is read from
the proxy's own environment.
"""
from __future__ import annotations

from .base import Hub, Source

# LiteLLM's provider prefix -> the catalog's (models.dev) provider id, where they differ or are worth naming
CATALOG = {"openrouter": "openrouter", "groq": "groq", "mistral": "mistral", "gemini": "google",
           "anthropic": "anthropic", "openai": "openai", "deepseek": "deepseek", "together_ai": "togetherai",
           "huggingface": "huggingface", "github": "github-models", "cerebras": "cerebras", "xai": "xai",
           "fireworks_ai": "fireworks-ai", "nvidia_nim": "nvidia", "cohere": "cohere"}
# the environment variable LiteLLM reads a provider's key from when none is given, where it is not PREFIX_API_KEY
KEY_VARS = {"together_ai": "TOGETHERAI_API_KEY", "fireworks_ai": "FIREWORKS_AI_API_KEY"}
NO_DB = "STORE_MODEL_IN_DB"


class LiteLLM(Hub):
    kind, title, name = "litellm", "LiteLLM proxy", "the LiteLLM proxy"
    doc = "base URL http://HOST:4000/v1, admin key: its master key or an admin's key"

    def deployments(self) -> list[dict]:
        data = self.ok(*self.call("GET", "/model/info"), "reading its models (/model/info)")
        rows = data.get("data") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise self.bad("a model list")
        rows = [r for r in rows if isinstance(r, dict) and isinstance(r.get("litellm_params"), dict)]
        if not all(isinstance(r["litellm_params"].get("api_base"), (str, type(None))) for r in rows):
            raise self.bad("a model list, each api_base a text")
        return rows

    @staticmethod
    def prefix_of(row: dict) -> str | None:
        model = str(row["litellm_params"].get("model") or "")
        info = got if isinstance(got := row.get("model_info"), dict) else {}
        found = model.split("/", 1)[0] if "/" in model else info.get("litellm_provider")
        return found if isinstance(found, str) and found else None      # a hub's odd answer names no provider

    def sources(self) -> list[Source]:
        found: dict[str, Source] = {}
        for row in self.deployments():
            prefix = self.prefix_of(row)
            if prefix and prefix not in found:
                base = row["litellm_params"].get("api_base")
                found[prefix] = Source(prefix, f"provider {prefix}", base_url=base.rstrip("/") if base else None,
                                       provider=CATALOG.get(prefix))
        return list(found.values())

    def key_ref(self, prefix: str, rows: list[dict]) -> dict:
        """How the new deployment finds its key: the credential a deployment of that provider already names, else
        the variable LiteLLM reads that provider's key from."""
        for row in rows:
            named = row["litellm_params"].get("litellm_credential_name")
            if self.prefix_of(row) == prefix and isinstance(named, str) and named and "*" not in named:
                return {"litellm_credential_name": named}
        return {"api_key": f"os.environ/{KEY_VARS.get(prefix, prefix.upper() + '_API_KEY')}"}

    def add(self, model: str, source: Source) -> str:
        rows = self.deployments()
        if any(r.get("model_name") == model for r in rows):
            return model                     # served already: a second deployment would only be balanced with it
        params = {"model": f"{source.id}/{model}", **self.key_ref(source.id, rows)}
        if source.base_url:
            params["api_base"] = source.base_url
        body = {"model_name": model, "litellm_params": params,
                "model_info": {"description": "Added by Benchwarmers"}}
        self.ok(*self.call("POST", "/model/new", body), f"adding {model} (/model/new)")
        return model

    def remove(self, served: str) -> bool:
        infos = [r["model_info"] for r in self.deployments()
                 if r.get("model_name") == served and isinstance(r.get("model_info"), dict)]
        ids = [i["id"] for i in infos if i.get("db_model") and i.get("id")]   # one from its config file stays
        for model_id in ids:
            self.ok(*self.call("POST", "/model/delete", {"id": model_id}), f"removing {served} (/model/delete)")
        return bool(ids)

    def advice(self, words: str) -> str:
        if NO_DB in words:
            return "Start the proxy with STORE_MODEL_IN_DB=True (and a database) so it can keep models it is given."
        return super().advice(words)
