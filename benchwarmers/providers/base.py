"""What every upstream adapter shares: one streaming path, error mapping, SSE/NDJSON framing."""
from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, ClassVar, Iterator
from urllib.parse import urlsplit

from ..askparts import PassThrough
from ..canonical import Answer, Ask
from ..errors import FaultKind, UpstreamFailed, advice
from ..redaction import names_a_key, redact
from .collecting import Heard, collect, scrubbed
from .framing import MESSAGE_LIMIT, clip, load_json
from .ratelimits import limit_scope, parse_rate_limit_headers, reset_time
from .response import UpstreamResponse
from .transport import Sent, Timeouts, Transport, default_transport

__all__ = ["Provider", "Timeouts", "collect", "scrubbed", "Heard", "NATIVE", "STREAMED", "WHOLE"]

STREAMED, NATIVE, WHOLE = "streamed", "native", "whole"   # the request's shape: see Provider.request
_NOT_FOUND = re.compile(r"not[ _]found|does ?n[o']t exist|no such model|(unknown|invalid|unsupported) model|"
                        r"no endpoints found", re.I)
# What asking or reading an answer may raise that becomes an UpstreamFailed naming the endpoint (Provider._fault).
_UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, IndexError, UnicodeError)
_MAPPED = (UpstreamFailed, *_UNREADABLE, OSError)
# json.dumps(body, ensure_ascii=False, separators=(",", ":")), without an encoder made for each request
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_BAD_KEY = re.compile(r"(invalid|incorrect) api[ _-]?key|api[ _-]?key\b.{0,40}\b(invalid|not valid|incorrect|"
                      r"expired)|API_KEY_INVALID|unauthori[sz]ed|invalid x-api-key", re.I | re.S)


class Provider:
    """One upstream protocol. A subclass meets ProviderContract (providers/contract.py); everything else is here."""
    api = ""
    supports: dict = {}
    default_base = ""
    base = ""          # this endpoint's own, set by __init__
    # each subclass sets these (ProviderContract says what they are); declared here for the type checker only
    title: ClassVar[str]
    passthrough_fields: ClassVar[frozenset]
    if TYPE_CHECKING:
        @staticmethod
        def client_tool(tool: object) -> bool: ...

    def __init__(self, base_url: str | None, key: str | None, *, name: str = "",
                 transport: Transport | None = None):
        self.base = self.normalise_base((base_url or self.default_base).strip().rstrip("/"))
        self.key = key or None
        self.name = name
        self.transport = transport or default_transport()
        self.supports = dict(type(self).supports)

    # ---- what a subclass provides (ProviderContract: each left to it raises NotImplementedError) --------
    @staticmethod
    def normalise_base(base: str) -> str:
        return base

    def headers(self) -> dict:
        """The auth (and version) headers of every request: each protocol says how its key goes."""
        raise NotImplementedError

    def chat_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        """(url, JSON body) for a streamed chat call."""
        raise NotImplementedError

    def stream_head(self, model: str) -> tuple[str, dict]:
        """(url, the body's fields that make a call our served model, streamed) of a streamed chat call: all a
        client's own body needs from us (see native_request)."""
        raise NotImplementedError

    def whole_request(self, ask: Ask, model: str) -> tuple[str, dict]:
        """(url, JSON body) asking for the answer in one piece: the streamed call with streaming off."""
        url, body = self.chat_request(ask, model)
        body = {**body, "stream": False}       # a copy, "stream" where it was (else last), without a comprehension
        if "stream_options" in body:
            del body["stream_options"]
        return url, body

    def events(self, response: UpstreamResponse, meta: dict) -> Iterator:
        """Canonical Events from a 2xx response, streamed or whole (told apart by its Content-Type); sets
        meta["model"] when the upstream names it."""
        raise NotImplementedError

    def parse_models(self, body) -> tuple[list[dict], str | None]:
        """(models, url of the next page or None) from one page of the models list."""
        raise NotImplementedError

    def models_url(self) -> str:
        raise NotImplementedError

    def error_message(self, body) -> str:
        """The upstream's own words from an error body (JSON already parsed, or text)."""
        if isinstance(body, list) and body:
            body = body[0]
        if isinstance(body, dict):
            err = body.get("error", body)
            if isinstance(err, dict):
                return str(err.get("message") or err.get("status") or json.dumps(err)[:MESSAGE_LIMIT])
            return str(err)
        return str(body or "")

    # ---- the one streaming path ---------------------------------------------------------------
    def stream(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None,
               native: PassThrough | None = None) -> Iterator:
        """The member's events: our own request, or, given `native` (the dispatcher's choice: client and upstream
        speak this same API), the client's own body (with our served name, streamed), so what the canonical form
        cannot hold (thinking signatures, cache_control, ...) reaches the upstream."""
        return self._stream(ask, model, timeouts, {}, STREAMED if native is None else NATIVE, native=native)

    def native_request(self, ask: Ask, model: str, native: PassThrough) -> tuple[str, dict]:
        """The client's body as the pass-through holds it (only what passthrough_fields let through: cut when the
        request was parsed, route mode records the rest), with our served name and the member's budget."""
        url, head = self.stream_head(model)
        body = {**(native.body or {}), **head}   # a copy: the pass-through's body serves every failover
        if ask.max_tokens is not None:   # the member's budget: the client's, cut to its window, or the default
            self.limit_native(body, ask.max_tokens)
        return url, body

    def limit_native(self, body: dict, max_tokens: int) -> None:
        """Set the output budget in a client's own body, in the field this API uses (nested dicts are copied:
        the body's parts are the client's)."""
        raise NotImplementedError

    def request(self, ask: Ask, model: str, how: str,
                native: PassThrough | None = None) -> tuple[str, dict, dict | None]:
        """(url, JSON body, the client's headers to pass on) of the request `how` asks for."""
        if how == NATIVE and native is not None:
            return (*self.native_request(ask, model, native), native.headers)
        return (*(self.whole_request(ask, model) if how == WHOLE else self.chat_request(ask, model)), None)

    def _stream(self, ask: Ask, model: str, timeouts: Timeouts | None, meta: dict, how: str,
                sent: Sent | None = None, native: PassThrough | None = None) -> Iterator:
        try:
            response = self._post(ask, model, timeouts, how, sent, native)
        except _MAPPED as exc:
            raise self._fault(exc) from None
        yield from self._read(response, self.events(response, meta))

    def _post(self, ask: Ask, model: str, timeouts: Timeouts | None, how: str, sent: Sent | None,
              native: PassThrough | None = None) -> UpstreamResponse:
        """The response to the request `how` asks for, or to the one send_whole() wrote already (`sent`)."""
        if sent is not None:
            assert sent.asked is not None            # send_whole keeps what it wrote
            (url, body), headers = sent.asked, None
        else:
            url, body, headers = self.request(ask, model, how, native)
        return self.send("POST", url, body, timeouts, headers, model, sent)

    def _fault(self, exc: Exception) -> UpstreamFailed:
        """The error a fault while asking or reading an answer becomes (one of _MAPPED)."""
        if isinstance(exc, UpstreamFailed):
            return self.clean(exc)
        if isinstance(exc, _UNREADABLE):
            return self.clean(UpstreamFailed(FaultKind.BAD_RESPONSE, f"unreadable {self.api} stream "
                                             f"({type(exc).__name__}: {clip(str(exc), 200)})"))
        return self.clean(UpstreamFailed(FaultKind.CONNECTION, f"{type(exc).__name__}: {exc}"))   # OSError

    def complete(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None, whole: bool = False,
                 sent: Sent | None = None, heard: Heard | None = None) -> Answer:
        """The answer, read to its end. `whole`: asked for in one piece rather than streamed (one JSON body to
        read, not an event stream), so there is no time to the first token (`ttft` None). `sent`: the request
        send_whole() wrote; its answer is read here (timed from its writing, when it asked for a stream). `heard`: told
        each piece of text as it comes (a live column)."""
        streamed = not whole and (sent is None or sent.streamed)
        if not streamed and heard is None:
            return self._whole(ask, model, timeouts, sent)
        meta: dict = {}
        return collect(self._stream(ask, model, timeouts, meta, STREAMED if streamed else WHOLE, sent), meta, model,
                       timed=streamed, heard=heard, since=sent.at if sent is not None and streamed else None)

    def _whole(self, ask: Ask, model: str, timeouts: Timeouts | None, sent: Sent | None) -> Answer:
        """complete() of an answer asked for whole: built straight from its body where the adapter can (answer_of),
        without an event and a scrubbing generator and a Collector for one JSON body; else folded from its events as
        collect() folds them. The same Answer either way, `ttft` None."""
        start, meta = time.monotonic(), {}    # type: float, dict
        try:
            response = self._post(ask, model, timeouts, WHOLE, sent)
            try:
                got = self.answer_of(response, meta)
            except BaseException:
                response.close()
                raise
        except _MAPPED as exc:
            raise self._fault(exc) from None
        if not isinstance(got, Answer):                  # events, read as _stream reads them
            return collect(self._read(response, got), meta, model, timed=False, since=start)
        response.close()
        try:   # answer_of() names the model it read (or None) in `meta`: [] rather than get(), a call less a seat
            got.model = meta["model"] or model
        except KeyError:
            got.model = model
        got.seconds = time.monotonic() - start
        return got

    def _read(self, response: UpstreamResponse, events: Iterator) -> Iterator:
        """A response's events read to their end, every known key taken out (_stream's, and those of a response
        answer_of did not build an Answer from)."""
        try:
            with response:
                yield from scrubbed(events, self.key)
        except _MAPPED as exc:
            raise self._fault(exc) from None

    def answer_of(self, response: UpstreamResponse, meta: dict) -> Answer | Iterator:
        """A 2xx response to a request for a whole answer: its Answer (keys scrubbed, all but `seconds` and `model`,
        which complete() sets from `meta` as collect() does) where the adapter builds it straight from the body; by
        default, and for a body it does not build from, its events (not yet begun), which complete() folds."""
        return self.events(response, meta)

    def send_whole(self, ask: Ask, model: str, *, timeouts: Timeouts | None = None,
                   streamed: bool = False) -> Sent | None:
        """Write the request for a whole answer (`streamed`: for a stream) on a kept-alive connection and return
        without waiting for it (complete(sent=...) reads the answer); None when no such connection is free, and
        nothing was sent."""
        try:
            url, body = self.chat_request(ask, model) if streamed else self.whole_request(ask, model)
            headers, data = self.encode(body, None)
            sent = self.transport.send("POST", url, headers=headers, body=data, timeouts=timeouts,
                                       name=self.limit_name, model=model, pooled=True)
        except UpstreamFailed as exc:
            raise self.clean(exc) from None
        if sent is not None:
            sent.asked, sent.streamed, sent.at = (url, body), streamed, time.monotonic()
        return sent

    def list_models(self, *, timeouts: Timeouts | None = None) -> list[dict]:
        url: str | None
        models, url, pages = [], self.models_url(), 0
        try:
            while url and pages < 20:
                with self.send("GET", url, None, timeouts) as response:
                    page, url = self.parse_models(load_json(response.read(), "models list"))
                models.extend(page)
                pages += 1
        except UpstreamFailed as exc:
            raise self.clean(exc) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise self.clean(UpstreamFailed(FaultKind.BAD_RESPONSE, f"unreadable models list "
                                            f"({type(exc).__name__}: {clip(str(exc), 200)})")) from None
        # a "model" listed under a name that holds a key is no model to show, pick or store
        return [m for m in models if not names_a_key(str(m.get("id", "")), self.key)]

    # ---- HTTP ---------------------------------------------------------------------------------
    def send(self, method: str, url: str, body: dict | None, timeouts: Timeouts | None,
             extra_headers: dict | None = None, model: str | None = None, sent: Sent | None = None) -> UpstreamResponse:
        """The response to this request, once its headers are in; UpstreamFailed for anything but a 2xx. `sent`:
        the request was written already (send_whole), only its response is read. A refusal adapt() finds a change
        of the body for (a server that cannot take a parameter we chose) sends it again changed."""
        while True:                                    # ends: each adaptation removes what it complains of
            try:
                if sent is not None:
                    response = self.transport.receive(sent)
                else:
                    headers, data = self.encode(body, extra_headers)
                    response = self.transport.request(method, url, headers=headers, body=data, timeouts=timeouts,
                                                      name=self.limit_name, model=model)
                if 200 <= response.status < 300:
                    return response
                raise self.failure(response, model)
            except UpstreamFailed as exc:
                sent = None
                body = self.adapt(body, exc)
                if body is None:
                    raise

    def adapt(self, body: dict | None, exc: UpstreamFailed) -> dict | None:
        """The body to send again after `exc`, without what it says this server cannot take; None (here, always):
        nothing is to be done."""
        return None

    def encode(self, body: dict | None, extra_headers: dict | None) -> tuple[dict, bytes | None]:
        """The request's headers and body bytes."""
        headers = {"Accept": "application/json, text/event-stream, application/x-ndjson", **(extra_headers or {}),
                   **self.headers()}
        if body is None:
            return headers, None
        headers["Content-Type"] = "application/json"
        return headers, _encode(body).encode("utf-8")

    def failure(self, response: UpstreamResponse, model: str | None = None) -> UpstreamFailed:
        """An UpstreamFailed for a non-2xx response, keeping the upstream's own message."""
        try:
            raw = response.read(65536)
        except UpstreamFailed:
            raw = b""
        finally:
            response.close()
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = text
        message = clip(self.error_message(body) or response.reason or "")
        kind = self.classify(response.status, message, body)
        now = time.time()
        facts = parse_rate_limit_headers(response.headers, now)
        extra = self.retry_after_from_body(body) if kind is FaultKind.RATE_LIMITED else None
        scope = limit_scope(response.headers, body)
        if extra is not None and facts.get("retry_after") is None:
            facts["retry_after"] = extra
            self.transport.limits.record(self.limit_name, {"retry_after": extra}, model, scope)
        reset_at = reset_time(facts, now) if kind is FaultKind.RATE_LIMITED else None
        wait = max(reset_at - now, 0) if reset_at else facts.get("retry_after")
        return UpstreamFailed(kind, f"HTTP {response.status}: {message}", self._hint(kind, wait),
                              upstream_status=response.status, retry_after=facts.get("retry_after"),
                              reset_at=reset_at, scope=scope if kind is FaultKind.RATE_LIMITED else None)

    def retry_after_from_body(self, body) -> float | None:
        return None

    @staticmethod
    def classify(status: int, message: str, body) -> FaultKind:
        if status in (401, 402, 403):
            return FaultKind.AUTH
        if status == 404:
            return FaultKind.NOT_FOUND
        if status == 429:
            return FaultKind.RATE_LIMITED
        if status == 408:
            return FaultKind.TIMEOUT
        if status == 407:
            return FaultKind.CONNECTION                        # our proxy wants credentials, not the provider
        if status >= 500:
            return FaultKind.SERVER
        if _BAD_KEY.search(message) or "API_KEY_INVALID" in json.dumps(body):
            return FaultKind.AUTH
        if _NOT_FOUND.search(message) and "model" in message.lower():   # a 400 that means "no such model"
            return FaultKind.NOT_FOUND
        return FaultKind.BAD_REQUEST

    def stream_failure(self, kind: FaultKind, message: str, status: int | None = None) -> UpstreamFailed:
        """An error the upstream reported inside an already-started stream."""
        return UpstreamFailed(kind, clip(message), self._hint(kind), upstream_status=status)

    def dropped(self, what: str) -> UpstreamFailed:
        return UpstreamFailed(FaultKind.DROPPED, f"the stream ended without {what}", self._hint(FaultKind.DROPPED))

    def clean(self, exc: UpstreamFailed) -> UpstreamFailed:
        """Every error names the endpoint and says what to do next; keys never leave in one."""
        message = exc.message if exc.message.startswith(self.label) else f"{self.label}: {exc.message}"
        exc.message = redact(message, self.key)
        exc.hint = redact(exc.hint or self._hint(exc.kind) or "", self.key) or None
        exc.args = (exc.message,)
        return exc

    @property
    def label(self) -> str:
        return f"{self.api} endpoint {self.name!r}" if self.name else f"{self.api} endpoint {self.host}"

    @property
    def host(self) -> str:
        return urlsplit(self.base).netloc or self.base

    @property
    def limit_name(self) -> str:
        """The key rate-limit facts are kept under: the endpoint name, else its host."""
        return self.name or self.host

    def _hint(self, kind: FaultKind, retry_after: float | None = None) -> str:
        return advice(kind, name=self.name or self.host, base=self.base, api=self.api, retry_after=retry_after)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name or ''} {self.base}>"
