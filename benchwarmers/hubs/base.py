"""What every hub adapter shares: its admin API called with the admin key, the hub's refusals made errors that
say what to do, and the shape of a source (an upstream the hub already reaches, which a new model can come from)."""
from __future__ import annotations

import json
from dataclasses import dataclass

from .. import strictjson
from ..errors import FaultKind, UpstreamFailed
from ..providers.framing import clip
from ..providers.transport import Timeouts, default_transport
from ..redaction import note_listed, redact

TIMEOUTS = Timeouts(connect=10, first_byte=30, idle=30)
MAX_BODY = 4 << 20        # a hub's admin answer (its whole config, its model list) is read up to this
MAX_DEPTH = 32            # levels of nesting in a hub's admin answer (its own nest 5 or 6 deep)


@dataclass
class Source:
    id: str                      # how the hub names it (a connection's index, a provider prefix, an entry's name)
    label: str                   # what a person reads
    base_url: str | None = None  # the upstream's base URL, when the hub says it
    provider: str | None = None  # the catalog's provider id for it, when known

    def to_dict(self) -> dict:
        return {"id": self.id, "label": self.label, "base_url": self.base_url, "provider": self.provider}


class Hub:
    """One hub endpoint's admin API. A subclass meets HubContract (hubs/contract.py), and gives its own `root_of`
    when its admin API is not at the base URL less /v1."""
    kind = ""
    title = ""
    name = ""
    doc = ""

    def __init__(self, endpoint: str, base_url: str, admin_key: str | None):
        self.endpoint, self.base_url, self.admin_key = endpoint, base_url.rstrip("/"), admin_key
        self.root = self.root_of(self.base_url)

    @staticmethod
    def root_of(base_url: str) -> str:
        """The hub's own address, from the OpenAI-compatible base URL the endpoint uses."""
        return base_url.removesuffix("/v1")

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.admin_key}"} if self.admin_key else {}

    def call(self, method: str, path: str, body=None) -> tuple[int, object]:
        """(status, parsed body or text) of one admin API call; nothing answering is the hub being down, and an
        answer too large or nested too deep to be the hub's is refused with a message, never read further."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", **self.headers(),
                   **({"Content-Type": "application/json"} if data is not None else {})}
        try:
            with default_transport().request(method, self.root + path, headers=headers, body=data,
                                             timeouts=TIMEOUTS) as response:
                raw = response.read(MAX_BODY + 1)
        except UpstreamFailed as err:
            raise UpstreamFailed(err.kind, f"{self.name} at {self.root} did not answer its admin API "
                                 f"({redact(err.message)})", f"Check that {self.name} is running and the endpoint's "
                                 "base URL points at it.") from None
        if len(raw) > MAX_BODY:
            raise self.bad(f"an answer of at most {MAX_BODY >> 20} MiB to {method} {path}")
        text = raw.decode("utf-8", "replace")
        try:
            data = strictjson.lenient(text)
        except RecursionError:
            raise self.bad(f"JSON nested at most {MAX_DEPTH} deep") from None
        except ValueError:
            return response.status, text
        if strictjson.deeper_than(data, MAX_DEPTH):
            raise self.bad(f"JSON nested at most {MAX_DEPTH} deep")
        return response.status, data

    def ok(self, status: int, data, doing: str) -> object:
        """The body of a call that worked; a refusal raised as an error saying what to do."""
        if status < 300:
            return data
        words = self.words(data)
        if status in (401, 403):
            raise UpstreamFailed(FaultKind.AUTH, f"{self.name} refused the admin key while {doing} (HTTP {status}: "
                                 f"{words})", f"Give endpoint {self.endpoint!r} the hub's admin key again: "
                                 f"bench endpoint add {self.endpoint} --base {self.base_url} --hub {self.kind} "
                                 "--replace", upstream_status=status)
        if status == 404:
            raise UpstreamFailed(FaultKind.NOT_FOUND, f"{self.name} has no such admin route while {doing} (HTTP 404: "
                                 f"{words})", f"Check the endpoint's base URL and that it is {self.name} ({self.doc}).",
                                 upstream_status=status)
        raise UpstreamFailed(FaultKind.BAD_REQUEST if status < 500 else FaultKind.SERVER,
                             f"{self.name} refused {doing} (HTTP {status}: {words})", self.advice(words),
                             upstream_status=status)

    def secrets(self, values) -> None:
        """Upstream keys a hub's admin answer holds: from here on no message, error or log says one. Redaction
        keeps only the key-shaped ones, a bounded number by hub, and never cuts them from answers or the record:
        the list is the hub's, and may hold ordinary words (redaction.note_listed)."""
        note_listed(self.endpoint, values)

    def bad(self, what: str) -> UpstreamFailed:
        return UpstreamFailed(FaultKind.BAD_RESPONSE, f"{self.name} answered with something other than {what}",
                              f"Check that the endpoint's base URL points at {self.name} ({self.doc}).")

    def advice(self, words: str) -> str:
        return f"See what {self.name} says above; its admin page shows the same setting."

    @staticmethod
    def words(data) -> str:
        """The hub's own words about a refusal (FastAPI's detail, an OpenAI-style error, a Go handler's error)."""
        if isinstance(data, dict):
            found = data.get("detail") or data.get("error") or data.get("message") or data
            if isinstance(found, dict):
                found = found.get("message") or found.get("error") or found
            data = found
        return redact(clip(str(data or "no details"), 300))

    # ---- what each adapter gives (HubContract) ------------------------------------------------------------
    def sources(self) -> list[Source]:
        raise NotImplementedError

    def add(self, model: str, source: Source) -> str:
        raise NotImplementedError

    def remove(self, served: str) -> bool:
        raise NotImplementedError
