"""JSON config files in the data folder: read with file:line errors, written atomically under a lock."""
from __future__ import annotations

import copy
import json
import os
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import ConfigError
from .filelock import FileLock

# The top-level shape of each file, used when a file does not exist yet. Every file is seeded and checked (bench
# status reports a broken one). repos.json names the user's repositories that suite seeding reads (suite/seed.py);
# limits.json holds the rate limits the user sets (roster/limits/userset.py); apps.json the client ids of the user's own
# sign-in apps (signin/ownapps.py); signins.json when each signed-in endpoint's token expires (signin/renewal.py;
# no token in it).
DEFAULTS: dict[str, dict] = {
    "endpoints.json": {"endpoints": {}},
    "models.json": {"models": {}},
    "collections.json": {"collections": {}},
    "settings.json": {},
    "repos.json": {"repos": {}},
    "limits.json": {"limits": {"connections": {}, "models": {}}},
    "overrides.json": {"models": {}, "endpoints": {}},
    "apps.json": {"apps": {}},
    "signins.json": {"endpoints": {}},
}
T = TypeVar("T")
_WRITES = object()   # the key a steady() memo keeps the write count it was taken at under


class Config:
    """Cached by mtime, so the hot path reads memory; a broken file is reported, never overwritten.

    Every read checks the file for a hand edit (one stat), except inside `steady()`: there each file is checked
    once, at its first read, so one request (or one panel seat) makes one stat a file, not one a read."""

    def __init__(self, folder: Path):
        self.dir = Path(folder) / "config"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(self.dir / ".lock")
        self._cache: dict[str, tuple[float, int, dict]] = {}
        self._mem = threading.Lock()
        self._paths: dict[str, str] = {}
        self._defaults: dict[str, dict] = {}
        self._local = _Local()           # .seen: the memo of the steady() block this thread is in, else None
        self._writes = 0                 # this process's writes: a memo taken before one is stale
        self.version = 0             # bumped on every write seen, so callers can cache derived data

    def path(self, name: str) -> Path:
        return self.dir / name

    def read(self, name: str) -> dict:
        """A deep copy of the file's data (callers may change it freely)."""
        return copy.deepcopy(self.view(name))

    def view(self, name: str) -> dict:
        """The cached data itself: read-only use on the hot path (checked for a hand edit once a steady() block)."""
        return self.kept(name, self._check, name)

    def steady(self, memo: dict | None = None) -> "_Steady":
        """Within this block, each file is checked for a hand edit once, at its first read, and then read from
        memory: a hand edit counts from the next block (the next request). A write through this Config is seen at
        once. `memo` (what another thread's block yielded) shares that block's reads, e.g. a panel's with its
        seats. Blocks nest: an inner one is the outer one."""
        return _Steady(self._local, memo)

    def look_again(self) -> None:
        """Within a steady() block, check each file for a change again at its next read: what another process wrote
        while this block waited (the other service's onboarding worker registering a model) is then seen."""
        seen = self._local.seen
        if seen is not None:
            seen.clear()

    def memo(self) -> dict | None:
        """The memo of the steady() block this thread is in (None outside one), emptied when this Config wrote
        since. What is derived from the config may be kept there too, under a key of its own (not a file name)."""
        seen = self._local.seen
        if seen is not None:
            try:   # (one look: another thread may empty it; [] rather than .get(), a call less at each look)
                fresh = seen[_WRITES] == self._writes
            except KeyError:
                fresh = False
            if not fresh:
                seen.clear()
                seen[_WRITES] = self._writes
        return seen

    def kept(self, key: object, make: Callable[..., T], *args) -> T:
        """make(*args)'s answer, kept in the memo of the steady() block this thread is in under `key` (a file's name
        for view(), else a key of its own): made once a block (a request asks dozens of times), at every call outside
        one."""
        memo = self._local.seen   # memo()'s look, written out (the hottest lookup): a hit is one call
        if memo is None:
            return make(*args)
        try:
            if memo[_WRITES] == self._writes:
                return memo[key]
        except KeyError:   # (not `in`, then []: another thread may empty the memo in between)
            pass
        memo = self.memo()   # emptied if this Config wrote since
        assert memo is not None   # (this thread's block: still the same one)
        value = memo[key] = make(*args)
        return value

    def _check(self, name: str) -> dict:
        try:   # ([] rather than .get(): a call less at each file of each request)
            path = self._paths[name]
        except KeyError:
            path = self._paths[name] = str(self.path(name))
        try:
            st = os.stat(path)
        except FileNotFoundError:
            try:
                return self._defaults[name]
            except KeyError:   # read-only like every view: one copy of the default per file
                default = self._defaults[name] = copy.deepcopy(DEFAULTS.get(name, {}))
            return default
        key = (st.st_mtime_ns, st.st_size)
        try:   # no lock to read: an entry is replaced whole (or popped), never changed in place
            hit = self._cache[name]
        except KeyError:
            hit = None
        if hit and hit[:2] == key:
            return hit[2]
        data = parse(Path(path))
        with self._mem:
            self._cache[name] = (*key, data)
            self.version += 1
        return data

    def _wrote(self, name: str) -> None:
        with self._mem:
            self._cache.pop(name, None)
            self._defaults.pop(name, None)
            self._writes += 1
            self.version += 1

    def write(self, name: str, data: dict) -> None:
        with self._lock:
            atomic_write(self.path(name), data)
        self._wrote(name)

    def update(self, name: str, change: Callable[[dict], object]):
        """Read, change and write one file under the lock; returns what `change` returned."""
        with self._lock:
            data = copy.deepcopy(self._check(name))
            result = change(data)
            atomic_write(self.path(name), data)
        self._wrote(name)
        return result

    def check_all(self) -> list[str]:
        """Every config file that cannot be read, as 'file:line:col: message'."""
        problems = []
        for name in DEFAULTS:
            try:
                self.view(name)
            except ConfigError as e:
                problems.append(e.message)
        return problems


class _Local(threading.local):
    seen: dict | None = None   # every thread starts outside a steady() block


class _Steady:
    """Config.steady()'s block: a class rather than a @contextmanager, as it is entered several times a panel."""
    __slots__ = ("_local", "_memo", "_outer")

    def __init__(self, local: _Local, memo: dict | None):
        self._local, self._memo, self._outer = local, memo, False

    def __enter__(self) -> dict:
        local = self._local
        outer = local.seen
        if outer is not None:   # nested: the outer block's memo, left in place when this one ends
            self._outer = True
            return outer
        seen = local.seen = self._memo if self._memo is not None else {}
        return seen

    def __exit__(self, *exc) -> None:
        if not self._outer:
            self._local.seen = None


def parse(path: Path) -> dict:
    """The file's JSON object; ConfigError naming the file and line otherwise. An empty file is an error too (a
    truncated write, or an edit gone wrong): read as {} it would then be written over, and its contents lost."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason}).", "Save the file as UTF-8.") from None
    if not text.strip():
        raise ConfigError(f"{path}:1:1: the file is empty.",
                          "Restore it from a backup, write {} into it to start afresh, or delete it.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}:{e.lineno}:{e.colno}: {e.msg}.",
                          "Fix the file by hand; Benchwarmers will not overwrite it while it is broken.") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read.", "Fix the file by hand.") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1:1: the file must hold a JSON object, not {type(data).__name__}.",
                          "Fix the file by hand.")
    for key, default in DEFAULTS.get(path.name, {}).items():
        if key in data and not isinstance(data[key], type(default)):
            raise ConfigError(f"{path}: \"{key}\" must be a JSON object, not {type(data[key]).__name__}.",
                              "Fix the file by hand; Benchwarmers will not overwrite it while it is broken.")
    return data


def atomic_write(path: Path, data: dict, mode: int = 0o666, keep_broken: bool = True) -> None:
    """Temp file in the same folder, fsync, then os.replace: a crash leaves the old file or the new, never half.
    `mode` is the new file's permission bits from its creation on (0o600 for secrets), less the umask.
    keep_broken=False is for files only Benchwarmers writes (catalog copies), where a broken one is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if keep_broken and path.exists():
        parse(path)   # refuse to replace a file the user broke by hand: their edit is not ours to lose
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)     # a failed write leaves no temp file behind (after a success it is gone)


REPLACE_WAITS = (0.02, 0.05, 0.1, 0.2, 0.4, 0.8)   # seconds between tries: about 1.5 s in all


def replace(tmp: Path, path: Path) -> None:
    """os.replace, tried again for a moment on PermissionError: on Windows a file another process holds open (an
    editor reading it, a virus scanner, a second service reading its config) cannot be replaced until it lets go."""
    for wait in REPLACE_WAITS:
        try:
            os.replace(tmp, path)
            return
        except PermissionError:
            time.sleep(wait)
    os.replace(tmp, path)
