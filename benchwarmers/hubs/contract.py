"""What one hub adapter gives: the class facts and methods of a `Hub` subclass.

`Hub` (hubs/base.py) does the rest: calling the admin API with the admin key, the hub's refusals made errors that
say what to do, answers too large or nested too deep refused; each method it leaves to a subclass raises
NotImplementedError there. A new kind of hub is a class meeting this contract, one line in KINDS
(hubs/__init__.py) and a fake in tests/fakes/hubs.py; tests/test_plugins.py checks each kind against it and finds it
in the dashboard's endpoint form, the CLI's --hub, the hints that name every kind, the fakes and GATEWAY.md."""
from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from .base import Source


@runtime_checkable
class HubContract(Protocol):
    """One kind of hub, as its class declares it."""
    kind: ClassVar[str]     # its name in endpoints.json's `hub`, KINDS and `bench endpoint add --hub`
    title: ClassVar[str]    # what the dashboard's endpoint form calls it ("LiteLLM proxy")
    name: ClassVar[str]     # what its messages call it ("the LiteLLM proxy")
    doc: ClassVar[str]      # its base URL's form and which key is its admin key, for the advice on a refusal

    def sources(self) -> list[Source]:
        """The upstreams the hub reaches already (a connection, a provider, an entry): where a new model can come
        from, each with its base URL when the hub says it."""

    def add(self, model: str, source: Source) -> str:
        """Make the hub serve `model` from `source` through its admin API (nothing when it serves it already);
        the name the hub lists it under."""

    def remove(self, served: str) -> bool:
        """Take the model the hub lists as `served` off it; whether the hub had any of it."""
