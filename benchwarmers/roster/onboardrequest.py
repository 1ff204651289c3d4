"""An onboarding request's body, checked: the models it names (each with its endpoint, alias and the hub source
`via` names) and the mode, as the items the queue (onboardqueue.py) will hold."""
from __future__ import annotations

from ..errors import BadRequest
from . import onboard
from .registry import check_name

BODY_FIELDS = {"models", "mode", "endpoint", "alias", "via"}


def _text(value, what: str, required: bool = False) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{what} must be a non-empty string.", 'e.g. {"models": ["openai/gpt-4o-mini"]}')
    return value.strip()


def parse(body: dict) -> tuple[list[dict], str]:
    """The items a request asks for, checked: ([{served, endpoint, alias}], mode)."""
    extra = sorted(set(body) - BODY_FIELDS)
    if extra:
        raise BadRequest(f"Unknown field(s): {', '.join(extra)}.", "Send models, mode, endpoint, alias and via.")
    models, mode = body.get("models"), body.get("mode") or "full"
    if not isinstance(models, list) or not models:
        raise BadRequest("Say which models to onboard: `models` is a list of served names.",
                         'e.g. {"models": ["openai/gpt-4o-mini"], "mode": "quick"}')
    if mode not in onboard.MODES:
        raise BadRequest(f"Unknown mode {mode!r}.", "Use full, quick or adhoc.")
    endpoint, alias = _text(body.get("endpoint"), "endpoint"), _text(body.get("alias"), "alias")
    via = _text(body.get("via"), "via")
    if alias and len(models) != 1:
        raise BadRequest("An alias names one model; this asks for several.", "Onboard that one model on its own.")
    specs, seen = [], set()
    for m in models:
        m = m if isinstance(m, dict) else {"served": m}
        spec = {"served": _text(m.get("served"), "Each model's served name", required=True),
                "endpoint": _text(m.get("endpoint"), "endpoint") or endpoint,
                "alias": _text(m.get("alias"), "alias") or alias, "via": _text(m.get("via"), "via") or via}
        if spec["alias"]:
            check_name(spec["alias"], "Alias")
        if (spec["served"], spec["endpoint"]) in seen:
            raise BadRequest(f"{spec['served']!r} is named twice.", "Name each model once.")
        seen.add((spec["served"], spec["endpoint"]))
        specs.append(spec)
    return specs, mode
