"""Fetching the public catalogs: fixed HTTPS addresses, no key, a timeout and a size cap; only a good copy is kept.

Nothing from config or user input becomes a URL here. A fetch that fails, times out, answers anything but
200, sends more than the cap, is not JSON, is not the source's documented shape, or lists far fewer models
than the last good copy changes nothing: the last good copy stays. FreeLLMAPI publishes no JSON catalog,
so it is never fetched: its dated hint ships with the package.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import UpstreamFailed
from ..providers.transport import Timeouts, Transport
from ..words import plural
from . import store
from .parse import KEEP, PARSERS, trim


@dataclass(frozen=True)
class CatalogSource:
    name: str
    url: str
    cap: int            # bytes; a bigger body is refused


FETCHED = (
    CatalogSource("models.dev", "https://models.dev/api.json", 32 << 20),
    CatalogSource("openrouter", "https://openrouter.ai/api/v1/models", 16 << 20),
)
TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)
SHRINK = 0.5            # a new copy with fewer than this share of the last fetched copy's models is refused

_test_root: str | None = None
_test_timeouts: Timeouts | None = None


class FetchFailed(Exception):
    pass


def use_fake_for_tests(root: str | None, timeouts: Timeouts | None = None) -> None:
    """Tests only: send every fetch to a fake source server on this machine (None undoes it).

    Only plain-HTTP loopback addresses are accepted, so this can never point the catalog at another host;
    nothing in config, the API or the command line reaches it."""
    global _test_root, _test_timeouts
    if root is not None:
        split = urlsplit(root)
        if split.scheme != "http" or split.hostname not in ("127.0.0.1", "::1", "localhost") or split.path.strip("/"):
            raise ValueError(f"the catalog test hook takes http://127.0.0.1:PORT only, not {root!r}")
        root = root.rstrip("/")
    _test_root, _test_timeouts = root, timeouts


def address(source: CatalogSource) -> str:
    if _test_root:
        split = urlsplit(source.url)
        return _test_root + split.path + (f"?{split.query}" if split.query else "")
    return source.url


def download(source: CatalogSource) -> bytes:
    """The body, or FetchFailed saying what went wrong; never more than source.cap bytes are kept."""
    url = address(source)
    transport = Transport()
    try:
        with transport.request("GET", url, headers={"Accept": "application/json"},
                               timeouts=_test_timeouts or TIMEOUTS, name="catalog") as response:
            if response.status != 200:
                raise FetchFailed(f"{source.name} answered HTTP {response.status}")
            length = response.headers.get("content-length", "")
            if length.isdigit() and (len(length) > 15 or int(length) > source.cap):
                raise FetchFailed(f"{source.name} sent {int(length) >> 20} MB, over the {source.cap >> 20} MB cap")
            body = response.read(source.cap + 1)
    except UpstreamFailed as e:
        raise FetchFailed(f"{source.name}: {e.message}") from None
    finally:
        transport.close()
    if len(body) > source.cap:
        raise FetchFailed(f"{source.name} sent more than the {source.cap >> 20} MB cap")
    return body


def accept(source: CatalogSource, body: bytes, last: store.Copy | None):
    """The trimmed data to keep, or FetchFailed when the body is not a catalog worth keeping."""
    try:
        raw = json.loads(body)
        fresh = PARSERS[source.name](raw)
    except (ValueError, RecursionError) as e:
        raise FetchFailed(f"{source.name} sent something that is not its catalog ({str(e)[:120]})") from None
    data = trim(raw, KEEP[source.name])
    if last is not None and last.where == "fetched":
        new, old = store.count(fresh), last.count()
        if new < old * SHRINK:
            raise FetchFailed(f"{source.name} listed {plural(new, 'model')} where the last copy had {old}; "
                              "kept the last copy")
    return data


def refresh(home: Path, copies: dict) -> dict:
    """Fetch every source; returns {source: {ok, models | error, kept}} and records it in catalog/status.json."""
    status = store.read_status(home)
    results: dict[str, dict] = {}
    for source in FETCHED:
        last = copies.get(source.name)
        now = time.time()
        entry = dict(status.get(source.name) or {}, last_attempt=now)
        try:
            data = accept(source, download(source), last)
            store.write_copy(home, source.name, source.url, data)
            count = store.count(PARSERS[source.name](data))
            entry.update(ok=True, error=None, last_success=now, models=count)
            results[source.name] = {"ok": True, "models": count}
        except (FetchFailed, OSError) as e:
            kept = f"the {last.where} copy of {last.fetched[:10]}" if last else "no copy (none yet)"
            entry.update(ok=False, error=str(e))
            results[source.name] = {"ok": False, "error": str(e), "kept": kept}
        status[source.name] = entry
    store.write_status(home, status)
    return results
