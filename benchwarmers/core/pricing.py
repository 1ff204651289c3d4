"""What a call costs in dollars: at most, before it is sent (its prompt and output cap at the model's price: what a
budget holds), and once its usage is known (what the ledger books); and the budgets a call counts against."""
from __future__ import annotations

from typing import Callable

from ..askparts import Asker
from ..canonical import DIRECT, Answer, Ask
from ..roster.limits.budgets import Charge
from ..roster.registry import Model
from ..store.ledger import cost_of
from .callsizes import token_fact

UNCAPPED = 4096    # the output tokens an estimate counts when neither the ask nor the model's facts cap them


class Pricing:
    """Prices from the catalog (or the user's own), caps from the Dialer (`tokens(model, ask)`: the output tokens it
    asks a member for)."""

    def __init__(self, price: Callable[[Model], tuple], facts: Callable[[Model], dict],
                 tokens: Callable[[Model, Ask], int | None]):
        self.price, self.facts, self.tokens = price, facts, tokens

    def cap(self, model: Model, ask: Ask) -> int:
        """The most output tokens this call can be billed for."""
        return self.tokens(model, ask) or token_fact(self.facts(model), "max_output") or UNCAPPED

    def estimate(self, model: Model, ask: Ask, prompt: int | None = None, cap: int | None = None) -> float | None:
        """The most this call can cost: its prompt tokens (as the ledger counts a call whose upstream tells none;
        `prompt`: another count, for a referee's or a merge's prompt) and its output cap, at the model's price; None
        when no price is known."""
        price_in, price_out, _ = self.price(model)
        return cost_of(price_in, price_out, ask.prompt_tokens() if prompt is None else prompt,
                       self.cap(model, ask) if cap is None else cap)

    def cost(self, model: Model, answer: Answer | None) -> float | None:
        """What an answer cost, from its usage (as the ledger prices it); None when unpriced."""
        if answer is None:
            return None
        price_in, price_out, _ = self.price(model)
        u = answer.usage
        return cost_of(price_in, price_out, u.input_tokens, u.output_tokens)


def charge(model: Model, ask: Ask, asker: Asker, call: str = "") -> Charge:
    """What a call counts against: its model, connection, collection (none for a model asked directly) and key."""
    target = ask.target
    collection = target.name if target is not None and target.mode != DIRECT else None
    return Charge(call, model.alias, model.endpoint, collection, asker.caller)
