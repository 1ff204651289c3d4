"""Provider keys: from BENCHWARMERS_KEY_<NAME> or the llm CLI's keys.json, never the data folder; redaction."""
from __future__ import annotations

import json
import os
import re
import sys
import threading
from pathlib import Path

LLM_APP = "io.datasette.llm"   # the llm CLI's click app name; its user folder holds keys.json
_lock = threading.Lock()
_known: set[str] = set()       # every key value we have handed out, so redact() can find it


def env_name(endpoint: str) -> str:
    return "BENCHWARMERS_KEY_" + re.sub(r"[^A-Z0-9]", "_", endpoint.upper())


def llm_user_dir(platform: str | None = None, environ: dict | None = None, home: Path | None = None) -> Path:
    """Exactly where the llm CLI keeps its files: LLM_USER_PATH, else click.get_app_dir('io.datasette.llm')."""
    env = os.environ if environ is None else environ
    if env.get("LLM_USER_PATH"):
        return Path(env["LLM_USER_PATH"]).expanduser()
    platform = platform or sys.platform
    home = home or Path.home()
    if platform.startswith("win"):   # click uses the roaming APPDATA folder by default
        return Path(env.get("APPDATA") or home) / LLM_APP
    if platform == "darwin":
        return home / "Library" / "Application Support" / LLM_APP
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / LLM_APP


def keys_file(environ: dict | None = None) -> Path:
    return llm_user_dir(environ=environ) / "keys.json"


def _read_keys(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def get(endpoint: str, environ: dict | None = None) -> tuple[str | None, str | None]:
    """(key, where) for an endpoint: where is 'environment', 'keys.json' or None."""
    env = os.environ if environ is None else environ
    value = env.get(env_name(endpoint))
    if value:
        remember(value)
        return value, "environment"
    value = _read_keys(keys_file(env)).get(endpoint)
    if isinstance(value, str) and value:
        remember(value)
        return value, "keys.json"
    return None, None


def store(endpoint: str, key: str, environ: dict | None = None) -> Path:
    """Write the key into llm's keys.json (atomic, mode 0600), keeping every other entry."""
    path = keys_file(environ)
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = _read_keys(path)
        data.setdefault("// Note", "This file stores secret API credentials. Do not share!")
        data[endpoint] = key
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
        try:
            os.chmod(path, 0o600)
        except OSError:   # filesystems without modes
            pass
    remember(key)
    return path


def delete(endpoint: str, environ: dict | None = None) -> bool:
    path = keys_file(environ)
    with _lock:
        data = _read_keys(path)
        if endpoint not in data:
            return False
        del data[endpoint]
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
        os.replace(tmp, path)
    return True


def remember(key: str) -> None:
    if key and len(key) >= 6:
        _known.add(key)


_PATTERNS = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|AIza[0-9A-Za-z_\-]{20,}|(?i:bearer)\s+[A-Za-z0-9._\-]{12,})")


def redact(text: str, extra: tuple = ()) -> str:
    """Remove every known key and anything shaped like one."""
    if not text:
        return text
    for key in list(_known) + [k for k in extra if k]:
        text = text.replace(key, "[redacted]")
    return _PATTERNS.sub("[redacted]", text)
