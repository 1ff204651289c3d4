"""Roles a model plays (from its facts and name, or set by the user) and the collection purposes they fit."""
from __future__ import annotations

import re

ROLES = ("general", "code", "light", "vision-only", "image", "reasoning")
TEXT_ROLES = {"general", "code", "light", "vision-only", "reasoning"}

# purpose -> (roles of which a model needs one, roles that keep it out)
PURPOSES = {
    "review": ({"general", "code", "reasoning"}, {"image", "vision-only"}),
    "design": ({"general", "reasoning"}, {"image", "vision-only", "light"}),
    "code": ({"code", "general", "reasoning"}, {"image", "vision-only"}),
    "enumeration": ({"general", "code", "reasoning", "light"}, {"image", "vision-only"}),
    "prose": ({"general", "reasoning", "light"}, {"image", "vision-only"}),
    "quick": ({"light", "general"}, {"image", "vision-only"}),
    "vision": ({"vision-only", "general"}, {"image"}),
    "image": ({"image"}, set()),
}
ANY = (TEXT_ROLES, {"image"})            # a collection with no purpose: any model that answers in text

_CODE = re.compile(r"coder|codestral|devstral|codex|\bcode\b")
_VISION_ONLY = re.compile(r"(^|[-/_.])(vl|vision|ocr)([-/_.:]|$)")
_LIGHT = re.compile(r"(^|[-/_.])(mini|nano|lite|small|tiny|micro|haiku|instant)([-/_.:]|$)")
_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")   # '8b', not the active 'a3b'
LIGHT_BILLIONS = 12.0


def auto(served: str, facts: dict) -> list[str]:
    """Roles from what the catalog says and what the name says."""
    name = served.lower()
    if facts.get("image_out"):
        return ["image"]
    roles = []
    if facts.get("vision") and _VISION_ONLY.search(name):
        roles.append("vision-only")
    else:
        roles.append("general")
    if _CODE.search(name):
        roles.append("code")
    sizes = [float(s) for s in _SIZE.findall(name)]
    if _LIGHT.search(name) or (sizes and max(sizes) <= LIGHT_BILLIONS):
        roles.append("light")
    if facts.get("reasoning"):
        roles.append("reasoning")
    return roles


def check_roles(value) -> list[str]:
    """The user's roles, validated; raises ValueError naming the allowed ones."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError("roles must be a non-empty list of: " + ", ".join(ROLES))
    unknown = [v for v in value if v not in ROLES]
    if unknown:
        raise ValueError(f"unknown role {unknown[0]!r}; roles are: " + ", ".join(ROLES))
    return list(dict.fromkeys(value))


def check_purpose(value) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or value not in PURPOSES:
        raise ValueError(f"unknown purpose {value!r}; purposes are: " + ", ".join(PURPOSES))
    return value


def unfit(roles: list[str], purpose: str) -> str | None:
    """Why a model with these roles does not fit the purpose, or None when it does."""
    wanted, kept_out = PURPOSES.get(purpose, ANY)
    label = f"purpose {purpose!r}" if purpose else "a collection with no purpose"
    barred = [r for r in roles if r in kept_out]
    if barred:
        return f"role {barred[0]} does not fit {label}"
    if not wanted & set(roles):
        return f"roles {', '.join(roles) or 'none'} do not fit {label} (it wants {' or '.join(sorted(wanted))})"
    return None
