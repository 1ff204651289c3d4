"""Fake upstreams that speak each provider protocol on 127.0.0.1 (port 0), scripted per model, recording requests.

    from tests.fakes import FakeOpenAI, Reply        # the suite is a package; pytest puts the checkout on sys.path
    with FakeOpenAI() as fake:                        # also FakeAnthropic, FakeGemini, FakeOllama (FAKES[api])
        fake.expect_key("sk-test")                    # wrong/missing key -> that protocol's own auth error
        fake.script("m1", "hello")                    # every call to m1 answers "hello" (default: "m1 says: <last user text>")
        fake.script("m2", [Reply.error(429, style="openrouter"), Reply.tool("get", {"q": 1})])  # in order, then echo
        fake.script("*", Reply(chunk_delay=0.05, drop_after=3))    # "*": any model without its own script
        make_provider("openai", fake.url, "sk-test").complete(ask, "m1")   # fake.url fits the provider's base form
        fake.requests[-1].body, fake.last.headers["authorization"], fake.connections   # what arrived, TCP count
Reply fields: text, tool_calls, reasoning, signature, finish, usage, status/message/style/retry_after (HTTP errors and
429 signals), headers, delay (before headers), hold (a threading.Event the test sets; waited for before headers),
chunk_delay, stall/stall_after, drop_after, end_after, stream_error, garbage, ignore_stream, always_stream, compute
(the text worked out from the last user message). `fake.set_models([...])`; `start_all()` starts one of each;
FakeProxy is a CONNECT/forward proxy; fakes.raw.RawServer answers byte for byte; SlowModel is a local model on a CPU
(one request at a time, slow; a streamed answer until its client hangs up, a whole one to its end, as llama.cpp); fakes.samples has canonical sample Asks;
fakes.referee.FakeReferee plays a panel's referee (and lies on request) through any of them. The
official SDKs accept these fakes (tests/test_providers_fakes_sdk.py).
"""
from __future__ import annotations

from .anthropic import FakeAnthropic
from .gemini import FakeGemini
from .ollama import FakeOllama
from .openai import FakeOpenAI
from .proxy import FakeProxy
from .server import FakeUpstream, Recorded, Reply
from .slow import SlowModel

FAKES: dict[str, type[FakeUpstream]] = {"openai": FakeOpenAI, "anthropic": FakeAnthropic, "gemini": FakeGemini,
                                        "ollama": FakeOllama}

__all__ = ["FAKES", "FakeAnthropic", "FakeGemini", "FakeOllama", "FakeOpenAI", "FakeProxy", "FakeUpstream",
           "Recorded", "Reply", "SlowModel", "start_all"]


class FakeSet(dict):
    """{api: started fake}; a context manager that stops them all."""

    def stop(self) -> None:
        for fake in self.values():
            fake.stop()

    def __enter__(self) -> "FakeSet":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_all() -> FakeSet:
    """One started fake per protocol: `with start_all() as fakes: fakes["gemini"].url`."""
    return FakeSet({api: cls().start() for api, cls in FAKES.items()})
