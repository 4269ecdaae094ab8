"""What a call cost, in US dollars.

cost_usd = ((input - cached - cache_write) * input_price + cached * cached_input_price
            + cache_write * cache_write_price + output * output_price) / 1e6
            (prices per million tokens, at the call's price tier)

Thinking tokens are part of output and not added again; cache reads (`cached`) and cache
writes are both part of input. A call's price tier is 'sync', 'batch' (a provider's batch API)
or 'flex' (OpenAI's flex tier): a price without its own batch or flex figures charges half of
every figure there, which is what OpenAI and Anthropic charge. Prices come from the
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


TIERS = ("sync", "batch", "flex")
"""The price tiers a call is recorded at (calls.price_tier)."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens, at the synchronous tier unless `batch` / `flex` say."""

    input: float
    cached_input: float
    output: float
    cache_write: float | None = None
    """A cache write's price; None: 1.25x input for Anthropic models (their 5-minute write),
    input elsewhere (OpenAI and most others write their cache for free)."""
    batch: Price | None = None
    """The price through the provider's batch API; None: half of every figure."""
    flex: Price | None = None
    """The price at OpenAI's flex tier; None: half of every figure."""

    def at(self, tier: str) -> Price:
        """The price at `tier` ('sync' | 'batch' | 'flex')."""
        if tier == "sync":
            return self
        own = self.batch if tier == "batch" else self.flex
        if own is not None:
            return own
        half = None if self.cache_write is None else self.cache_write / 2
        return Price(self.input / 2, self.cached_input / 2, self.output / 2, half)


def is_anthropic(model: str) -> bool:
    """Anthropic models charge more than input for a cache write (and need cache_control)."""
    return model.startswith(("anthropic/", "claude")) or "/claude" in model


# Overrides and models litellm does not know.
PRICES: dict[str, Price] = {
    # Checked against seq_k's published summary: 1,375,958 in / 1,218,604 cached /
    # 41,715 out cost $1.463368.
    "anthropic/claude-sonnet-4-6": Price(3.0, 0.30, 15.0),
}

_warned: set[str] = set()


def call_cost(price: Price, input_tokens: float, cached_tokens: float, output_tokens: float,
              cache_write_tokens: float = 0.0, write_price: float | None = None) -> float:
    """Dollar cost of the given token counts at `price` (already at the call's tier)."""
    write = price.cache_write if price.cache_write is not None else (
        write_price if write_price is not None else price.input)
    return ((input_tokens - cached_tokens - cache_write_tokens) * price.input
            + cached_tokens * price.cached_input + cache_write_tokens * write
            + output_tokens * price.output) / 1_000_000


def cost_at(model: str, price: Price | None, input_tokens: int | None, cached_tokens: int | None,
            output_tokens: int | None, cache_write_tokens: int | None = None,
            tier: str = "sync") -> float | None:
    """Dollar cost of one call at `price` and `tier`; None (plus one warning per model) when the
    price is unknown."""
    if price is None:
        if model not in _warned:
            _warned.add(model)
            log.warning("no price known for %s: its cost_usd is null (set the role's price: in the "
                        "variant, or add it to seqk/models/pricing.py)", model)
        return None
    if input_tokens is None or output_tokens is None:
        return None
    at = price.at(tier)
    return call_cost(at, input_tokens, cached_tokens or 0, output_tokens, cache_write_tokens or 0,
                     at.input * 1.25 if is_anthropic(model) else None)
