"""Cost of a model call for the re-run and replay tables: the price table of core.workbench.prices.

A price file that cannot be read counts as an empty table (every model 「価格未設定」); the debug page
already warns about the file itself.
"""

from __future__ import annotations

from core.workbench.prices import Cost, PriceFileError, Tokens, load_prices, tokens_cost


def call_cost(provider: str, model: str, input_tokens: int, output_tokens: int, cached: int = 0) -> Cost:
    """The cost of a call with these token counts under the current price file (unpriced models say so)."""
    try:
        prices = load_prices()
    except PriceFileError:
        prices = {}
    return tokens_cost(
        prices, provider, model, Tokens(input_tokens, min(cached, input_tokens), output_tokens)
    )


def cost_text(value: Cost | None) -> str:
    """「USD 0.0012」 / 「価格未設定（model）」 / 「-」."""
    return "-" if value is None else value.text()
