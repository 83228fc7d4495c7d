"""Model prices and the cost of debug-log calls. No Streamlit.

Prices live in a TOML file staff can edit (`core/samples/prices.toml`, or the file named by the
environment variable KATACHI_PRICES): per model, prices per 1M tokens for input, cached input and output,
and a currency. Token convention (core.llm.base.Usage): `input_tokens` counts every input token and
`cached_input_tokens` is the part of them read from the provider's prompt cache, so

    cost = (input - cached) * input + cached * cached_input + output * output   (per 1M tokens)

A model without a price is reported as such (「価格未設定」), never as 0; sums are kept per currency.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from core.debuglog.events import DebugEvent
from core.workbench.tree import CallNode, ConversationNode

PRICES_ENV = "KATACHI_PRICES"
DEFAULT_PRICES = Path(__file__).resolve().parents[1] / "samples" / "prices.toml"
NO_PRICE = "価格未設定"
PER_TOKENS = Decimal(1_000_000)


class PriceFileError(ValueError):
    """The price file cannot be read; the message is Japanese, for the page."""


@dataclass(frozen=True)
class Price:
    """Prices of one model per 1M tokens."""

    model: str
    input: Decimal
    cached_input: Decimal
    output: Decimal
    currency: str
    label: str = ""


@dataclass(frozen=True)
class Tokens:
    """Input (all, cached included), cached input and output tokens."""

    input: int = 0
    cached_input: int = 0
    output: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.input + other.input, self.cached_input + other.cached_input, self.output + other.output
        )


@dataclass
class Cost:
    """A sum of call costs: an amount per currency, the tokens counted, and the models without a price
    (their calls add tokens but no amount)."""

    amounts: dict[str, Decimal] = field(default_factory=dict)
    tokens: Tokens = field(default_factory=Tokens)
    unpriced: set[str] = field(default_factory=set)
    calls: int = 0

    def add(self, other: Cost) -> Cost:
        """Add `other` into this sum (and return it)."""
        for currency, amount in other.amounts.items():
            self.amounts[currency] = self.amounts.get(currency, Decimal(0)) + amount
        self.tokens = self.tokens + other.tokens
        self.unpriced |= other.unpriced
        self.calls += other.calls
        return self

    @property
    def complete(self) -> bool:
        """True when every call counted had a price."""
        return not self.unpriced

    def text(self) -> str:
        """For a person: 「USD 0.0012」, 「USD 0.0012 ＋ 価格未設定（model）」 or 「価格未設定（model）」."""
        parts = [f"{currency} {format_amount(amount)}" for currency, amount in sorted(self.amounts.items())]
        if self.unpriced:
            parts.append(f"{NO_PRICE}（{', '.join(sorted(self.unpriced))}）")
        return " ＋ ".join(parts) if parts else "-"


def format_amount(amount: Decimal) -> str:
    """An amount with at most 6 decimals and no trailing zeros beyond two (0 → "0")."""
    if amount == 0:
        return "0"
    text = f"{amount:,.6f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"


MAX_PRICE = Decimal(10_000)  # per 1M tokens: far above any published price; more is a typo or an attack


def _decimal(value: Any, where: str) -> Decimal:
    """A price: a finite decimal from 0 to MAX_PRICE (`nan`, `inf`, `9e999999`, negatives and text refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise PriceFileError(f"{where} が数値ではありません。")
    try:
        number = Decimal(str(value))
        valid = number.is_finite() and 0 <= number <= MAX_PRICE
    except (InvalidOperation, ValueError) as exc:
        raise PriceFileError(f"{where} が数値ではありません。") from exc
    if not valid:
        raise PriceFileError(f"{where} は 0～{MAX_PRICE:,} の数にしてください（100万トークンあたり）。")
    return number


def _price(name: str, row: Any) -> Price:
    if not isinstance(row, dict):
        raise PriceFileError("表ではありません。")
    currency = row.get("currency")
    if not isinstance(currency, str) or not currency.strip():
        raise PriceFileError("currency がありません。")
    return Price(
        name,
        _decimal(row.get("input"), "input"),
        _decimal(row.get("cached_input", row.get("input")), "cached_input"),
        _decimal(row.get("output"), "output"),
        currency.strip(),
        str(row.get("label", "")),
    )


def parse_price_table(text: str) -> tuple[dict[str, Price], list[str]]:
    """Prices from TOML text (`[models."name"]` tables with input / cached_input / output / currency), and a
    Japanese problem per model left out: a model with a bad price is ignored (its calls show 「価格未設定」),
    the others keep theirs. PriceFileError only when the file itself cannot be read."""
    try:
        data = tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError as exc:
        raise PriceFileError(f"価格ファイルをTOMLとして読めません: {exc}") from exc
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise PriceFileError('価格ファイルに [models."モデル名"] の表がありません。')
    prices: dict[str, Price] = {}
    problems: list[str] = []
    for name, row in models.items():
        try:
            prices[name] = _price(name, row)
        except PriceFileError as exc:
            problems.append(
                f"価格ファイルのモデル「{name}」: {exc} このモデルは「{NO_PRICE}」として扱います。"
            )
    return prices, problems


def parse_prices(text: str) -> dict[str, Price]:
    """The valid prices of `parse_price_table` (models with a bad price left out)."""
    return parse_price_table(text)[0]


def prices_path(env: Mapping[str, str] | None = None) -> Path:
    """The price file in use: KATACHI_PRICES when set, else the default file in the repository."""
    env = os.environ if env is None else env
    return Path(env[PRICES_ENV]) if env.get(PRICES_ENV) else DEFAULT_PRICES


def load_price_table(path: str | Path | None = None) -> tuple[dict[str, Price], list[str]]:
    """Read the price file (`path`, else prices_path()): the valid prices and a Japanese problem per model
    left out; PriceFileError with a Japanese message when the file cannot be read at all."""
    file = Path(path) if path is not None else prices_path()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"価格ファイル {file} を読めません（{type(exc).__name__}）。") from exc
    return parse_price_table(text)


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    """The valid prices of the price file (see load_price_table)."""
    return load_price_table(path)[0]


DEMO_PROVIDER = "demo"
# The offline demo model costs nothing whatever model name it carries (a re-run on 「デモモデル / gpt-4.1-mini」
# answers with the demo text; pricing it as gpt-4.1-mini would bill for nothing).
DEMO_PRICE = Price("katachi-demo", Decimal(0), Decimal(0), Decimal(0), "USD", "デモモデル（無料）")


def price_for(prices: Mapping[str, Price], provider: str, model: str) -> Price | None:
    """The price of `provider/model`, else of `model`, else None; the demo provider is always free."""
    if provider == DEMO_PROVIDER:
        return DEMO_PRICE
    return prices.get(f"{provider}/{model}") or prices.get(model)


def event_tokens(event: DebugEvent) -> Tokens:
    """Tokens of one attempt event (cached input capped at the input count)."""
    usage = event.usage or {}
    total = int(usage.get("input_tokens", 0) or 0)
    cached = min(int(usage.get("cached_input_tokens", 0) or 0), total)
    return Tokens(total, cached, int(usage.get("output_tokens", 0) or 0))


def event_cost(event: DebugEvent, prices: Mapping[str, Price]) -> Cost:
    """The cost of one attempt (call or error event); other kinds cost nothing and count no call."""
    if event.kind not in ("call", "error"):
        return Cost()
    return tokens_cost(prices, event.provider, event.model, event_tokens(event))


def tokens_cost(prices: Mapping[str, Price], provider: str, model: str, tokens: Tokens) -> Cost:
    """The cost of one call of `provider/model` with these tokens (unpriced models say so, never 0)."""
    price = price_for(prices, provider, model)
    if price is None:
        return Cost(tokens=tokens, unpriced={model or "（モデル名なし）"}, calls=1)
    amount = (
        (tokens.input - tokens.cached_input) * price.input
        + tokens.cached_input * price.cached_input
        + tokens.output * price.output
    ) / PER_TOKENS
    return Cost({price.currency: amount}, tokens, calls=1)


def cost(item: DebugEvent | CallNode, prices: Mapping[str, Price]) -> Cost:
    """The cost of one event, or of one call (all its attempts, not the calls under it)."""
    if isinstance(item, DebugEvent):
        return event_cost(item, prices)
    out = Cost()
    for attempt in item.attempts:
        out.add(event_cost(attempt, prices))
    return out


def total(items: Iterable[DebugEvent | CallNode], prices: Mapping[str, Price]) -> Cost:
    """The sum of cost() over `items`."""
    out = Cost()
    for item in items:
        out.add(cost(item, prices))
    return out


def conversation_cost(conversation: ConversationNode, prices: Mapping[str, Price]) -> Cost:
    """All calls of a conversation, children included."""
    return total(conversation.all_calls(), prices)


def costs_by(
    tree: Iterable[ConversationNode], prices: Mapping[str, Price], key: Callable[[ConversationNode], str]
) -> dict[str, Cost]:
    """Sums over conversations grouped by `key` (e.g. flow or session id), in first-seen order."""
    out: dict[str, Cost] = {}
    for conversation in tree:
        out.setdefault(key(conversation), Cost()).add(conversation_cost(conversation, prices))
    return out


def costs_by_flow(tree: Iterable[ConversationNode], prices: Mapping[str, Price]) -> dict[str, Cost]:
    """Sums per flow."""
    return costs_by(tree, prices, lambda c: c.flow or "-")


def costs_by_session(tree: Iterable[ConversationNode], prices: Mapping[str, Price]) -> dict[str, Cost]:
    """Sums per browser session (「（セッションIDなし）」 for events recorded without one)."""
    return costs_by(tree, prices, lambda c: c.session_id or "（セッションIDなし）")
