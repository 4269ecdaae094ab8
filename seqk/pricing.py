"""What a call cost, in US dollars.

cost_usd = ((input - cached) * input_price + cached * cached_input_price
            + output * output_price) / 1e6     (prices per million tokens)

Thinking tokens are part of output and not added again. Prices come from the
project table below first, then litellm's price map. An unknown model costs
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


# Overrides and models litellm does not know. Free local and mock models are
# priced at 0 on purpose: their cost is known, and it is nothing.
PRICES: dict[str, Price] = {
    # Checked against seq_k's published summary: 1,375,958 in / 1,218,604 cached /
    # 41,715 out cost $1.463368.
    "anthropic/claude-sonnet-4-6": Price(3.0, 0.30, 15.0),
}
FREE_PREFIXES = ("mock/", "local/")

_warned: set[str] = set()


def price_of(model: str, own: Price | None = None) -> Price | None:
    """The model's price, or None when nobody knows it. `own` (a role's `price:` in the variant)
    wins over every table: a self-hosted model is priced by whoever pays for its server."""
    if own is not None:
        return own
    if model in PRICES:
        return PRICES[model]
    if model.startswith(FREE_PREFIXES):
        return Price(0.0, 0.0, 0.0)
    import sys

    litellm = sys.modules.get("litellm")
    if litellm is None:
        # Only models called through litellm need its map, and by then it is imported.
        return None
    entry = None
    for key in (model, model.split("/", 1)[-1]):
        entry = litellm.model_cost.get(key)
        if entry:
            break
    if not entry or entry.get("input_cost_per_token") is None:
        return None
    per_m = 1_000_000
    inp = float(entry["input_cost_per_token"]) * per_m
    out = float(entry.get("output_cost_per_token") or 0.0) * per_m
    cached = entry.get("cache_read_input_token_cost")
    return Price(inp, float(cached) * per_m if cached is not None else inp, out)


def known_price(model: str, own: Price | None = None) -> Price | None:
    """price_of, after loading litellm's price map when the model can only be priced by it
    (a budget needs to know before the first call, when litellm is not imported yet)."""
    price = price_of(model, own)
    if price is None:
        from seqk.models import import_litellm

        import_litellm()
        price = price_of(model, own)
    return price


def call_cost(price: Price, input_tokens: float, cached_tokens: float, output_tokens: float) -> float:
    """Dollar cost of the given token counts at `price`."""
    return ((input_tokens - cached_tokens) * price.input + cached_tokens * price.cached_input
            + output_tokens * price.output) / 1_000_000


def cost_usd(model: str, input_tokens: int | None, cached_tokens: int | None,
             output_tokens: int | None, own: Price | None = None) -> float | None:
    """Dollar cost of one call; None (plus one warning per model) when the price is unknown."""
    price = price_of(model, own)
    if price is None:
        if model not in _warned:
            _warned.add(model)
            log.warning("no price known for %s: its cost_usd is null (set the role's price: in the "
                        "variant, or add it to seqk/pricing.py)", model)
        return None
    if input_tokens is None or output_tokens is None:
        return None
    return call_cost(price, input_tokens, cached_tokens or 0, output_tokens)
