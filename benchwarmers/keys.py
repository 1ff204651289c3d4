"""Provider keys: from BENCHWARMERS_KEY_<NAME> or the llm CLI's keys.json, never the data folder."""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
import threading
from pathlib import Path

from .errors import ConfigError, key_env
from .redaction import remember
from .store.config import atomic_write, parse

log = logging.getLogger("benchwarmers.keys")
LLM_APP = "io.datasette.llm"   # the llm CLI's click app name; its user folder holds keys.json
_lock = threading.Lock()
KEY_PREFIX = key_env("")       # BENCHWARMERS_KEY_, which every endpoint's key variable starts with
# entries kept beside an endpoint's key, named <endpoint><suffix>: a hub's admin key (hubs/), a sign-in's refresh
# token (signin/renewal.py), the client secret of an own app, by provider id (signin/ownapps.py); no
# endpoint may be so named
ADMIN, REFRESH, APP_SECRET = ".admin", ".refresh", ".app-secret"
BESIDE = (ADMIN, REFRESH, APP_SECRET)
_warned: set[tuple] = set()    # broken keys.json states already logged, so a bad file is said once, not per call


def llm_user_dir(platform: str | None = None, environ: Mapping[str, str] | None = None,
                 home: Path | None = None) -> Path:
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


def keys_file(environ: Mapping[str, str] | None = None) -> Path:
    return llm_user_dir(environ=environ) / "keys.json"


_read: dict = {}     # "keys": ((path, mtime, size, inode), what keys.json held then)


def _read_keys(path: Path) -> dict:
    """For reading a key (read-only: the dict is shared): a file that does not parse holds no key we can use, and the
    log says where it broke. Read again only when the file changed (a stat a call, not a parse: every seat's call
    looks its key up)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError:
        st = None
    state = (str(path), st.st_mtime_ns, st.st_size, st.st_ino) if st else (str(path), None)
    hit = _read.get("keys")
    if st and hit is not None and hit[0] == state:
        return hit[1]
    try:
        data = _parsed(path)
    except ConfigError as e:
        if state not in _warned:
            _warned.add(state)
            log.warning("%s %s", e.message, e.hint)
        return {}
    _read["keys"] = (state, data)
    for name, value in data.items():
        if isinstance(value, str) and not name.startswith("//"):   # llm's "// Note" is no key
            remember(value.strip())
    return data


def _parsed(path: Path) -> dict:
    """keys.json as a dict ({} when there is none); a file that cannot be read raises ConfigError naming its line."""
    try:
        return parse(path)
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise ConfigError(f"{path}: cannot be read ({e.strerror or e}).", "Check the file's permissions.") from None


def get(endpoint: str, environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """(key, where) for an endpoint: where is 'environment', 'keys.json' or None."""
    env = os.environ if environ is None else environ
    value = env.get(key_env(endpoint))
    if value:
        remember(value)
        return value, "environment"
    value = _read_keys(keys_file(env)).get(endpoint)
    if isinstance(value, str) and value:
        remember(value)
        return value, "keys.json"
    return None, None


def learn(environ: Mapping[str, str] | None = None) -> None:
    """Make every key this service could send known to redaction now, before any is used: a key pasted into the
    first prompt after a start is then kept out of the record like any other. That is every BENCHWARMERS_KEY_*
    variable and every entry of keys.json (whichever endpoint is added later may read it)."""
    env = os.environ if environ is None else environ
    for name, value in env.items():
        if name.startswith(KEY_PREFIX):
            remember(value.strip())
    _read_keys(keys_file(env))        # each read of a changed keys.json makes all its keys known


def store(endpoint: str, key: str, environ: Mapping[str, str] | None = None) -> Path:
    """Write the key into llm's keys.json (atomic, mode 0600), keeping every other entry.
    A keys.json that does not parse is never written over (it holds the user's other keys): ConfigError names
    the file and line instead."""
    path = keys_file(environ)
    with _lock:
        data = _parsed(path)
        data.setdefault("// Note", "This file stores secret API credentials. Do not share!")
        data[endpoint] = key
        atomic_write(path, data, mode=0o600)
    remember(key)
    return path


def delete(endpoint: str, environ: Mapping[str, str] | None = None) -> bool:
    """Remove one entry; like store(), refuses (ConfigError) to rewrite a file that does not parse."""
    path = keys_file(environ)
    with _lock:
        data = _parsed(path)
        if endpoint not in data:
            return False
        del data[endpoint]
        atomic_write(path, data, mode=0o600)
    return True
