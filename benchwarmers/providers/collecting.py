"""The events of an answer read to its end: every known key taken out of what a model wrote, then folded into one
Answer, timed. The adapters' shared tail (base.py's Provider, and llm's calls)."""
from __future__ import annotations

import time
from typing import Callable, Iterator

from ..canonical import Answer, Collector, ReasoningDelta, TextDelta, ToolCallDelta
from ..redaction import Scrubber, answer_secrets

Heard = Callable[[str], None]   # told each piece of an answer's text as it is read (a live column)


def scrubbed(events: Iterator, key: str | None) -> Iterator:
    """The events with every known key taken out of the text, thinking and tool-call arguments a model wrote (an
    upstream that echoes a key must not hand it to clients or the record); pieces held back while they might be
    the start of a key go out before the next other event. With no key to take out, the events themselves (no
    generator for each event to pass through)."""
    return _scrubbed(events, key) if answer_secrets(key) else events


def _scrubbed(events: Iterator, key: str | None) -> Iterator:
    text, reasoning = Scrubber(key), Scrubber(key)
    calls: dict[int, Scrubber] = {}

    def held() -> Iterator:
        if text.held:
            yield TextDelta(text.flush())
        if reasoning.held:
            yield ReasoningDelta(reasoning.flush())
        for index, scrub in calls.items():
            if scrub.held:
                yield ToolCallDelta(index, arguments=scrub.flush())

    for ev in events:
        if isinstance(ev, TextDelta):
            out = text.feed(ev.text)
            if out:
                yield TextDelta(out)
        elif isinstance(ev, ReasoningDelta) and not ev.signature:
            out = reasoning.feed(ev.text)
            if out:
                yield ReasoningDelta(out)
        elif isinstance(ev, ToolCallDelta) and ev.arguments:
            ev.arguments = calls.setdefault(ev.index, Scrubber(key)).feed(ev.arguments)
            if ev.arguments or ev.id or ev.name:
                yield ev
        else:
            yield from held()
            yield ev
    yield from held()


def collect(events: Iterator, meta: dict, model: str, timed: bool = True, heard: Heard | None = None,
            since: float | None = None) -> Answer:
    """A stream read to its end, timed: the one way a whole answer is made (`meta["model"]`, when the stream set it,
    is the served name the upstream reported). `timed` False: the events came from one whole body, so the time to
    the first of them says nothing of the first token and `ttft` stays None. `heard`: told each TextDelta's text.
    `since`: when its request was written (time.monotonic()), when that was before this began reading."""
    start = time.monotonic() if since is None else since
    collector, first = Collector(), None
    for event in events:
        if event.__class__ is TextDelta:   # most events: told and timed with no isinstance() calls
            if first is None and timed:
                first = time.monotonic() - start
            if heard is not None and event.text:
                heard(event.text)
        elif first is None and timed and isinstance(event, (ToolCallDelta, ReasoningDelta)):
            first = time.monotonic() - start
        collector.add(event)
    answer = collector.result()
    answer.ttft, answer.seconds = first, time.monotonic() - start
    answer.model = meta.get("model") or model
    return answer


