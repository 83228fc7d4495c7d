"""Cost of a model call for the debug workbench (issue #9): one hook the re-run and replay tables share.

Until the price table (core.pricing) is merged this knows no prices and returns None, so the tables show
tokens and an empty cost column. The coordinator points `call_cost` at core.pricing when merging.
"""

from __future__ import annotations


def call_cost(provider: str, model: str, input_tokens: int, output_tokens: int) -> float | None:
    """USD cost of a call with these token counts, or None when the model's price is not known."""
    del provider, model, input_tokens, output_tokens  # hook: core.pricing answers after the merge
    return None
