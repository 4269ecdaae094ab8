"""What a call cost, in US dollars.

cost_usd = ((input - cached) * input_price + cached * cached_input_price
            + output * output_price) / 1e6     (prices per million tokens)

Thinking tokens are part of output and not added again. Prices come from the
role's own `price:`, then the project table below, then the provider that serves
the model (that lookup is seqk.models.registry.price_of: this module holds only the
data and the arithmetic, so every provider can import it). An unknown model costs
None (never 0) and is warned about once per process.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger("seqk")

PRICING_LAST_UPDATED = "2026-11-01"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    cached_input: float
    output: float


# Overrides and models litellm does not know.
PRICES: dict[str, Price] = {
    # Checked against seq_k's published summary: 1,375,958 in / 1,218,604 cached /
    # 41,715 out cost $1.463368.
    "anthropic/claude-sonnet-4-6": Price(3.0, 0.30, 15.0),
}

_warned: set[str] = set()


def call_cost(price: Price, input_tokens: float, cached_tokens: float, output_tokens: float) -> float:
    """Dollar cost of the given token counts at `price`."""
    return ((input_tokens - cached_tokens) * price.input + cached_tokens * price.cached_input
            + output_tokens * price.output) / 1_000_000


def cost_at(model: str, price: Price | None, input_tokens: int | None, cached_tokens: int | None,
            output_tokens: int | None) -> float | None:
    """Dollar cost of one call at `price`; None (plus one warning per model) when the price is unknown."""
    if price is None:
        if model not in _warned:
            _warned.add(model)
            log.warning("no price known for %s: its cost_usd is null (set the role's price: in the "
                        "variant, or add it to seqk/models/pricing.py)", model)
        return None
    if input_tokens is None or output_tokens is None:
        return None
    return call_cost(price, input_tokens, cached_tokens or 0, output_tokens)
