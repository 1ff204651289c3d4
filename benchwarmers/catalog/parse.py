"""Each source's own format -> the catalog's trimmed entries: only the facts Benchwarmers uses, in its own names.

An entry: name, context_window, max_output, vision, tools, reasoning, image_out, text_out, price_in and
price_out (USD per million tokens), released (YYYY-MM-DD), deprecated. A fact the source does not state
is left out, never guessed. Anything that is not the documented shape raises ValueError.
"""
from __future__ import annotations

import math
import time

from ..names import is_name


def _int(value) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _price(value) -> float | None:
    """A non-negative price; OpenRouter writes strings and uses -1 for 'varies'."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _million(value, scale: float) -> float | None:
    """A price in USD per million tokens (scale: what one unit of `value` is worth in that)."""
    number = _price(value)
    return round(number * scale, 6) if number is not None else None


def _object(raw: dict, key: str) -> dict:
    """raw[key] when it is an object, else an empty one."""
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def _flag(value) -> bool | None:
    return value if isinstance(value, bool) else None


def _clean(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if v is not None}


def _modalities(entry: dict, inputs, outputs) -> None:
    if isinstance(inputs, list):
        entry["vision"] = "image" in inputs
    if isinstance(outputs, list):
        entry["image_out"] = "image" in outputs
        entry["text_out"] = "text" in outputs


# ---- models.dev api.json: {provider_id: {id, name, api?, models: {model_id: {...}}}} ------------------

def modelsdev_model(raw: dict) -> dict:
    limit = _object(raw, "limit")
    cost = _object(raw, "cost")
    mods = _object(raw, "modalities")
    entry = {"name": raw.get("name") if isinstance(raw.get("name"), str) else None,
             "context_window": _int(limit.get("context")), "max_output": _int(limit.get("output")),
             "tools": _flag(raw.get("tool_call")), "reasoning": _flag(raw.get("reasoning")),
             "released": raw.get("release_date") if isinstance(raw.get("release_date"), str) else None,
             "deprecated": True if raw.get("status") == "deprecated" else None}
    if cost:
        entry["price_in"], entry["price_out"] = (_million(cost.get(k), 1) for k in ("input", "output"))
    _modalities(entry, mods.get("input"), mods.get("output"))
    return _clean(entry)


def modelsdev(data) -> dict:
    if not isinstance(data, dict):
        raise ValueError("models.dev: expected an object of providers")
    providers = {}
    for pid, raw in data.items():
        if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict) or not is_name(pid):
            continue        # a provider id becomes an endpoint's name, a URL and a command: it must be a name
        models = {mid: modelsdev_model(m) for mid, m in raw["models"].items() if isinstance(m, dict)}
        api = raw.get("api") if isinstance(raw.get("api"), str) and raw["api"].startswith("http") else None
        providers[str(pid)] = {"name": str(raw.get("name") or pid), "api": api, "models": models}
    if not any(p["models"] for p in providers.values()):
        raise ValueError("models.dev: no provider lists any model")
    return {"providers": providers}


# ---- OpenRouter /api/v1/models: {"data": [{id, context_length, pricing, architecture, ...}]} -------------

def openrouter_model(raw: dict) -> dict:
    arch = _object(raw, "architecture")
    pricing = _object(raw, "pricing")
    top = _object(raw, "top_provider")
    params = raw.get("supported_parameters")
    created = _int(raw.get("created"))
    entry = {"name": raw.get("name") if isinstance(raw.get("name"), str) else None,
             "context_window": _int(raw.get("context_length")) or _int(top.get("context_length")),
             "max_output": _int(top.get("max_completion_tokens")),
             "released": time.strftime("%Y-%m-%d", time.gmtime(created)) if created else None}
    if isinstance(params, list):
        entry["tools"] = "tools" in params
        entry["reasoning"] = "reasoning" in params or "include_reasoning" in params
    # the documented unit is USD per token; the catalog keeps USD per million tokens
    entry["price_in"], entry["price_out"] = (_million(pricing.get(k), 1_000_000) for k in ("prompt", "completion"))
    _modalities(entry, arch.get("input_modalities"), arch.get("output_modalities"))
    return _clean(entry)


def openrouter(data) -> dict:
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("OpenRouter: expected {\"data\": [models]}")
    models = {m["id"]: openrouter_model(m) for m in rows if isinstance(m, dict) and isinstance(m.get("id"), str)}
    if not models:
        raise ValueError("OpenRouter: the list holds no models")
    return {"models": models}


# ---- FreeLLMAPI: shipped as data extracted from its source (it publishes no JSON) ------------------------

ROW_INTS = ("context_window", "rpm", "rpd", "tpm", "tpd")


def freellmapi(data) -> dict:
    rows = data.get("models") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("FreeLLMAPI: expected {\"models\": [rows]}")
    out = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("platform"), str) or not isinstance(row.get("id"), str):
            continue
        clean = {"platform": row["platform"], "id": row["id"], "name": row.get("name") or row["id"]}
        clean.update({k: _int(row.get(k)) for k in ROW_INTS})
        # FreeLLMAPI flags only what it verified: a 1 is a yes, a 0 says nothing either way
        clean["vision"] = True if row.get("vision") else None
        clean["tools"] = True if row.get("tools") else None
        out.append(_clean(clean))
    if not out:
        raise ValueError("FreeLLMAPI: no rows")
    return {"models": out}


PARSERS = {"models.dev": modelsdev, "openrouter": openrouter, "freellmapi": freellmapi}

# ---- trimming: a copy keeps its source's own shape, with only the fields the parsers read ------------------

_MODEL = {"id": 1, "name": 1, "tool_call": 1, "reasoning": 1, "release_date": 1, "status": 1,
          "limit": {"context": 1, "output": 1}, "cost": {"input": 1, "output": 1},
          "modalities": {"input": 1, "output": 1}}
KEEP = {
    "models.dev": {"*": {"id": 1, "name": 1, "api": 1, "models": {"*": _MODEL}}},
    "openrouter": {"data": [{"id": 1, "name": 1, "created": 1, "context_length": 1, "supported_parameters": 1,
                             "architecture": {"input_modalities": 1, "output_modalities": 1},
                             "pricing": {"prompt": 1, "completion": 1},
                             "top_provider": {"context_length": 1, "max_completion_tokens": 1}}]},
}


def trim(value, keep):
    """`value` with only the keys `keep` names ("*": every key; [spec]: each item of a list)."""
    if isinstance(keep, list):
        return [trim(v, keep[0]) for v in value] if isinstance(value, list) else value
    if not isinstance(keep, dict) or not isinstance(value, dict):
        return value
    if "*" in keep:
        return {k: trim(v, keep["*"]) for k, v in value.items()}
    return {k: trim(value[k], spec) for k, spec in keep.items() if k in value}
