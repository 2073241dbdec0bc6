"""What a model call cost, when the user configured the model's prices."""

from __future__ import annotations

from clawbot.config.schema import ModelPrice
from clawbot.types import Usage


def cost_usd(price: ModelPrice | None, usage: Usage) -> float | None:
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
