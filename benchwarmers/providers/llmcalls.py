"""The alternative client: member calls made by the `llm` package and its plugins (for providers Benchwarmers does
not speak). Never a runtime need: llm is imported only when chosen, and a call without it fails saying so."""
from __future__ import annotations

import importlib.util
import queue
import re
import threading
import time
from typing import Callable, Iterator

from ..canonical import STOP, TOOL_CALLS, Answer, Ask, Finish, ToolCallDelta, Usage
from ..errors import FaultKind, UpstreamFailed
from ..redaction import redact
from . import llmparts
from .base import Provider
from .collecting import collect, scrubbed
from .framing import clip
from .ratelimits import limit_scope, parse_rate_limit_headers, reset_time
from .transport import Timeouts

MINIMUM = (0, 32)            # messages= and stream events arrived in llm 0.32
# llm loads its plugins and registers their models on the first lookup, and that is not safe from two threads at
# once (a panel's seats start together): one lookup at a time; the calls themselves run side by side.
_lookup = threading.Lock()
# What calls through llm do without, compared with the built-in client (the Settings page and GATEWAY.md say it).
NOT_COVERED = (
    "Keys and URLs: llm calls each member by its served name with llm's own keys and model settings "
    "(llm keys set, extra-openai-models.yaml); the endpoint's base URL and key are not used for the call.",
    "Model lists: adding an endpoint, onboarding and the health checks' lists still ask each endpoint with the "
    "built-in client.",
    "Rate limits: only a 429's own error is read, never an answer's rate-limit headers, so a model rests only on "
    "a 429 whose error carries a Retry-After (its whole endpoint when that error says the limit is the key's); "
    "the scheduler's pacing cannot see your own asks in flight through llm, so it does not wait for them.",
    "Timeouts: seat_timeout still bounds each wait, but the plugin keeps its own timeouts and retries, and a call "
    "given up on runs to its end in the background.",
    "Same-API pass-through: the client's own body never reaches the upstream; tool_choice, more than one stop "
    "sequence and earlier turns' reasoning are dropped, and a cut-off answer finishes as a normal stop.",
    "Usage: token counts are the plugin's; where it reports none they are estimated.",
)


def installed() -> str | None:
    """llm's version when this Python can import it (without importing it), else None."""
    import importlib.metadata   # here: it costs start-up time, and only the llm client path asks
    try:
        if importlib.util.find_spec("llm") is None:
            return None
        return importlib.metadata.version("llm")
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return None


MISSING = ("the llm package is not installed in the Python that runs Benchwarmers",
           "Install it there (pip install llm, plus the plugins you use), or set the client setting back to builtin "
           "(BENCH_CLIENT wins over it).")


def too_old(version: str | None) -> str | None:
    if version and tuple(int(n) for n in re.findall(r"\d+", version)[:2]) >= MINIMUM:
        return None
    return f"llm {version or '(version unknown)'} is too old: Benchwarmers needs llm 0.32 or newer (its messages API)"


def problem() -> str | None:
    """Why calls through llm would fail here, in one sentence; None when llm looks usable."""
    version = installed()
    if version is None:
        return "llm is not installed in the Python that runs Benchwarmers: every member call fails until it is. " \
               f"{MISSING[1]}"
    old = too_old(version)
    return f"{old}: pip install -U llm." if old else None


def load():
    """The llm module, or a CLIENT fault saying how to get a usable one."""
    try:
        import llm
    except ImportError:
        raise UpstreamFailed(FaultKind.CLIENT, *MISSING) from None
    old = too_old(installed()) or (None if hasattr(llm, "user") else too_old(None))
    if old:
        raise UpstreamFailed(FaultKind.CLIENT, old, "Upgrade it: pip install -U llm.")
    return llm


class LlmCalls:
    """Calls one member through llm: `llm.get_model(served name)` (llm's aliases count), its plugin, its keys."""

    def __init__(self, endpoint: str = ""):
        self.endpoint = endpoint

    def complete(self, ask: Ask, served: str, *, timeouts: Timeouts | None = None,
                 heard: Callable[[str], None] | None = None) -> Answer:
        return collect(self.stream(ask, served, timeouts=timeouts), {}, served, heard=heard)

    def stream(self, ask: Ask, served: str, *, timeouts: Timeouts | None = None) -> Iterator:
        llm = None
        try:
            llm = load()
            model = self._model(llm, served)
            response = model.prompt(messages=llmparts.messages(llm, ask), tools=llmparts.tools(llm, ask) or None,
                                    stream=True, options=llmparts.options(model, ask))
            yield from scrubbed(pump(response, timeouts or Timeouts()), None)   # no known key reaches an answer
        except UpstreamFailed as exc:
            raise self.clean(exc, served) from None
        except Exception as exc:     # a plugin's own errors: mapped by what they carry
            raise self.clean(fault(exc, llm, served), served) from None

    @staticmethod
    def _model(llm, served: str):
        try:
            with _lookup:
                return llm.get_model(served)
        except llm.UnknownModelError:
            raise UpstreamFailed(FaultKind.CLIENT, f"llm knows no model {served!r}",
                                 "`llm models` lists what it has. Add an OpenAI-compatible one to "
                                 "extra-openai-models.yaml in llm's folder, install the plugin that serves it, or "
                                 f"name one with `llm aliases set {served} MODEL_ID`.") from None

    def clean(self, exc: UpstreamFailed, served: str) -> UpstreamFailed:
        label = f"llm model {served!r}" + (f" (endpoint {self.endpoint!r})" if self.endpoint else "")
        message = exc.message if exc.message.startswith(label) else f"{label}: {exc.message}"
        exc.message = redact(message if message.endswith((".", "?", "!")) else message + ".")
        exc.hint = redact(exc.hint or f"`llm -m {served} hi` makes the same call outside Benchwarmers.")
        exc.args = (exc.message,)
        return exc


def pump(response, timeouts: Timeouts) -> Iterator:
    """llm's blocking stream, read in a thread of its own so the seat's timeouts hold (the first event within
    first_byte, then each within idle); a stream given up on stops at its next event."""
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=_read, args=(response, events, stop), name="bench-llm", daemon=True).start()
    convert, wait, calls = llmparts.Events(), timeouts.connect + timeouts.first_byte, False
    try:
        while True:
            try:
                kind, value = events.get(timeout=wait)
            except queue.Empty:
                raise UpstreamFailed(FaultKind.TIMEOUT, f"no answer from llm within {wait:g} s",
                                     "Slow models need a larger seat_timeout.") from None
            if kind == "error":
                raise value
            if kind == "done":
                yield finish(value, calls)
                return
            wait = timeouts.idle
            event = convert.convert(value)
            if event is not None:
                calls = calls or isinstance(event, ToolCallDelta)
                yield event
    finally:
        stop.set()


def _read(response, events: queue.Queue, stop: threading.Event) -> None:
    try:
        for ev in response.stream_events():
            if stop.is_set():
                return
            events.put(("event", ev))
        events.put(("done", response))
    except BaseException as exc:   # handed to the reading side, which raises it in the caller's thread
        events.put(("error", exc))


def finish(response, calls: bool) -> Finish:
    usage = response.usage()
    return Finish(TOOL_CALLS if calls else STOP, Usage(usage.input or 0, usage.output or 0))


def fault(exc: BaseException, llm, served: str) -> UpstreamFailed:
    """A plugin's exception as a fault: an HTTP status when it carries one, else its kind guessed from its type."""
    name, message = type(exc).__name__, clip(f"{type(exc).__name__}: {exc}")
    if llm is not None and isinstance(exc, llm.NeedsKeyException):
        return UpstreamFailed(FaultKind.AUTH, message, f"Give llm the key: `llm keys set NAME` (see `llm -m {served}`'s "
                                                       "error for the name), or the plugin's environment variable.")
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    if isinstance(status, int):
        kind = Provider.classify(status, str(exc), None)
        now = time.time()
        headers = getattr(response, "headers", None) or {}
        facts = parse_rate_limit_headers(headers, now)
        limited = kind is FaultKind.RATE_LIMITED     # a rate limit rests what it names: the model, or the whole key
        return UpstreamFailed(kind, f"HTTP {status}: {message}", upstream_status=status,
                              retry_after=facts.get("retry_after"),
                              reset_at=reset_time(facts, now) if limited else None,
                              scope=limit_scope(headers, str(exc)) if limited else None)
    if isinstance(exc, TimeoutError) or "timeout" in name.lower():
        return UpstreamFailed(FaultKind.TIMEOUT, message)
    if isinstance(exc, (ConnectionError, OSError)) or "connection" in name.lower():
        return UpstreamFailed(FaultKind.CONNECTION, message)
    if isinstance(exc, (ValueError, TypeError, NotImplementedError)):   # the plugin refused what it was given
        return UpstreamFailed(FaultKind.BAD_REQUEST, message)
    return UpstreamFailed(FaultKind.SERVER, message)
