"""The copies of each source: the last good one in the data folder's catalog/, else the one shipped here.

A copy is {"source", "url", "fetched" (ISO date), "note"?, "data": the source's own shape, trimmed}. The
newer of the two copies is used (a package upgrade may ship a newer one than an old fetched copy). A copy
that cannot be read is passed over with a warning in the log, never deleted.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..store.config import atomic_write
from .parse import PARSERS

log = logging.getLogger("benchwarmers.catalog")
SHIPPED = Path(__file__).resolve().parent / "data"
SOURCES = ("models.dev", "openrouter", "freellmapi")
STATUS = "status.json"


def folder(home: Path) -> Path:
    return Path(home) / "catalog"


def copy_path(home: Path, source: str) -> Path:
    return folder(home) / f"{source}.json"


@dataclass
class Copy:
    source: str
    where: str            # "fetched" (data folder) or "shipped" (the package)
    fetched: str          # the date the data was taken, ISO
    url: str
    note: str
    parsed: dict          # the parser's trimmed entries

    def count(self) -> int:
        return count(self.parsed)

    def describe(self) -> dict:
        return {"source": self.source, "from": self.where, "date": self.fetched, "url": self.url,
                "models": self.count(), "note": self.note or None}


def count(parsed: dict) -> int:
    """How many models a parsed copy lists."""
    if "providers" in parsed:
        return sum(len(p["models"]) for p in parsed["providers"].values())
    return len(parsed["models"])


def read_copy(path: Path, source: str, where: str) -> Copy | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        parsed = PARSERS[source](raw["data"])
        return Copy(source, where, str(raw.get("fetched") or ""), str(raw.get("url") or ""),
                    str(raw.get("note") or ""), parsed)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as e:
        log.warning("catalog copy %s cannot be read (%s); using the other copy", path, e)
        return None


def write_copy(home: Path, source: str, url: str, data) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    atomic_write(copy_path(home, source), {"source": source, "url": url, "fetched": stamp, "data": data},
                 keep_broken=False)


class Copies:
    """The copy in use for each source, re-read only when one of the files changed."""

    RESTAT = 1.0          # seconds between looks at the files: seating asks on every seat

    def __init__(self, home: Path):
        self.home = Path(home)
        self.version = 0
        self._lock = threading.Lock()
        self._seen: tuple | None = None
        self._looked = 0.0
        self._copies: dict[str, Copy] = {}

    def _signature(self) -> tuple:
        sig: list[tuple[int, int] | None] = []
        for source in SOURCES:
            for path in (copy_path(self.home, source), SHIPPED / f"{source}.json"):
                try:
                    st = path.stat()
                    sig.append((st.st_mtime_ns, st.st_size))
                except OSError:
                    sig.append(None)
        return tuple(sig)

    def get(self, force: bool = False) -> dict[str, Copy]:
        now = time.monotonic()
        if not force and now - self._looked < self.RESTAT and self._seen is not None:
            return self._copies          # looked lately: no lock (every seat's facts come through here)
        with self._lock:
            if not force and now - self._looked < self.RESTAT and self._seen is not None:
                return self._copies
            self._looked = now
            sig = self._signature()
            if sig != self._seen:
                self._copies = {s: c for s in SOURCES if (c := self._newest(s))}
                self._seen = sig
                self.version += 1
            return self._copies

    def _newest(self, source: str) -> Copy | None:
        found = [c for c in (read_copy(copy_path(self.home, source), source, "fetched"),
                             read_copy(SHIPPED / f"{source}.json", source, "shipped")) if c]
        return max(found, key=lambda c: c.fetched) if found else None


def read_status(home: Path) -> dict:
    try:
        data = json.loads((folder(home) / STATUS).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write_status(home: Path, status: dict) -> None:
    atomic_write(folder(home) / STATUS, status, keep_broken=False)
