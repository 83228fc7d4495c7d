"""core.workbench.prices: the price file, per-call cost with cached tokens, sums per turn / conversation / flow /
session, mixed currencies and a model without a price (never 0)."""

from decimal import Decimal

import pytest

from core.debuglog.events import DebugEvent
from core.workbench.prices import (
    DEFAULT_PRICES,
    PRICES_ENV,
    Cost,
    PriceFileError,
    Tokens,
    conversation_cost,
    cost,
    costs_by_flow,
    costs_by_session,
    event_cost,
    format_amount,
    load_prices,
    parse_price_table,
    parse_prices,
    price_for,
    prices_path,
    total,
)
from core.workbench.tree import build_tree

PRICES = """
[models."gpt-4.1-mini"]
input = 0.40
cached_input = 0.10
output = 1.60
currency = "USD"

[models."claude-sonnet-4-5"]
input = 3
cached_input = 0.30
output = 15
currency = "USD"

[models."local/qwen"]
input = 10
output = 20
currency = "JPY"
label = "社内サーバー"

[models."katachi-demo"]
input = 0
cached_input = 0
output = 0
currency = "USD"
label = "デモモデル（無料）"
"""


def call(call_id, model, inp, out, cached=0, provider="openai", kind="call", conv="c1", turn=1, **kw):
    usage = {"input_tokens": inp, "output_tokens": out}
    if cached:
        usage["cached_input_tokens"] = cached
    return DebugEvent(
        flow=kw.pop("flow", "review"),
        step="reply",
        kind=kind,
        call_id=call_id,
        provider=provider,
        model=model,
        usage=usage,
        conversation_id=conv,
        turn=turn,
        **kw,
    )


@pytest.fixture
def prices():
    return parse_prices(PRICES)


def test_one_call_with_cached_tokens_costs_the_hand_computed_amount(prices):
    # (1200 - 200) * 0.40 + 200 * 0.10 + 300 * 1.60 = 400 + 20 + 480 = 900 per 1M tokens
    c = cost(call("a", "gpt-4.1-mini", 1200, 300, cached=200), prices)
    assert c.amounts == {"USD": Decimal("0.0009")}
    assert c.tokens == Tokens(1200, 200, 300) and c.calls == 1 and c.complete
    assert c.text() == "USD 0.0009"


def test_a_model_without_a_price_says_so_instead_of_zero(prices):
    c = cost(call("a", "mystery-7b", 100, 50), prices)
    assert c.amounts == {} and c.unpriced == {"mystery-7b"} and not c.complete
    assert c.text() == "価格未設定（mystery-7b）"
    assert c.tokens == Tokens(100, 0, 50)


def test_provider_qualified_price_wins_and_currencies_are_summed_apart(prices):
    assert price_for(prices, "local", "qwen").label == "社内サーバー"
    assert price_for(prices, "openai", "qwen") is None
    events = [
        call("a", "gpt-4.1-mini", 1200, 300, cached=200),  # USD 0.0009
        call("b", "qwen", 1000, 500, provider="local"),  # JPY (1000*10 + 500*20)/1M = 0.02
        call("c", "mystery-7b", 10, 10),
    ]
    c = total(events, prices)
    assert c.amounts == {"USD": Decimal("0.0009"), "JPY": Decimal("0.02")}
    assert c.text() == "JPY 0.02 ＋ USD 0.0009 ＋ 価格未設定（mystery-7b）"
    assert c.tokens == Tokens(2210, 200, 810) and c.calls == 3


def test_sums_per_call_turn_conversation_flow_and_session(prices):
    events = [
        # review c1 turn 1: a failed attempt and its repair (same call), then a summary child
        call("r1", "gpt-4.1-mini", 1000, 100, session_id="s1", ok=False, attempt=1),
        DebugEvent(flow="review", step="reply", kind="repair", call_id="r1", conversation_id="c1", turn=1),
        call("r1", "gpt-4.1-mini", 1500, 200, cached=1000, session_id="s1", attempt=2),
        DebugEvent(flow="review", step="reply", kind="result", call_id="r1", conversation_id="c1", turn=1),
        call("sum", "claude-sonnet-4-5", 2000, 500, provider="anthropic", parent_id="r1", session_id="s1"),
        # review c1 turn 2
        call("r2", "katachi-demo", 700, 70, provider="demo", turn=2, session_id="s1"),
        # memory c9 in another session
        call("m1", "gpt-4.1-mini", 10_000, 1_000, cached=4_000, flow="memory", conv="c9", session_id="s2"),
        # a provider error: no tokens, still one call
        call("m2", "gpt-4.1-mini", 0, 0, kind="error", flow="memory", conv="c9", session_id="s2"),
    ]
    tree = build_tree(events)
    review, memory = tree
    r1 = review.turns[0].calls[0]
    # attempt 1: 1000*0.40 + 100*1.60 = 560; attempt 2: 500*0.40 + 1000*0.10 + 200*1.60 = 620 → 1180 / 1M
    assert cost(r1, prices).amounts == {"USD": Decimal("0.00118")}
    assert cost(r1, prices).calls == 2  # attempts are model calls
    # summary: 2000*3 + 500*15 = 13500 / 1M
    turn1 = total(review.turns[0].all_calls(), prices)
    assert turn1.amounts == {"USD": Decimal("0.00118") + Decimal("0.0135")}
    assert turn1.tokens == Tokens(4500, 1000, 800)
    turn2 = total(review.turns[1].all_calls(), prices)
    assert turn2.amounts == {"USD": Decimal(0)} and turn2.complete and turn2.text() == "USD 0"
    assert conversation_cost(review, prices).amounts == {"USD": Decimal("0.01468")}
    # memory: 6000*0.40 + 4000*0.10 + 1000*1.60 = 2400 + 400 + 1600 = 4400 / 1M
    assert conversation_cost(memory, prices).amounts == {"USD": Decimal("0.0044")}
    by_flow = costs_by_flow(tree, prices)
    assert {k: v.amounts for k, v in by_flow.items()} == {
        "review": {"USD": Decimal("0.01468")},
        "memory": {"USD": Decimal("0.0044")},
    }
    assert by_flow["memory"].calls == 2
    by_session = costs_by_session(tree, prices)
    assert {k: v.amounts["USD"] for k, v in by_session.items()} == {
        "s1": Decimal("0.01468"),
        "s2": Decimal("0.0044"),
    }


def test_cached_tokens_above_the_input_count_are_capped(prices):
    c = cost(call("a", "gpt-4.1-mini", 100, 0, cached=500), prices)
    assert c.tokens == Tokens(100, 100, 0) and c.amounts == {"USD": Decimal("0.00001")}


def test_cost_add_and_format():
    c = Cost().add(Cost({"USD": Decimal("1.5")}, Tokens(1, 0, 1), calls=1))
    assert c.text() == "USD 1.50"
    assert format_amount(Decimal("1234.5678912")) == "1,234.567891"
    assert format_amount(Decimal(0)) == "0"
    assert Cost().text() == "-"


def test_the_default_file_prices_the_demo_model_at_zero_with_a_label(monkeypatch):
    monkeypatch.delenv(PRICES_ENV, raising=False)
    assert prices_path() == DEFAULT_PRICES
    prices = load_prices()
    demo = prices["katachi-demo"]
    assert (demo.input, demo.cached_input, demo.output, demo.label) == (0, 0, 0, "デモモデル（無料）")
    assert {"gpt-4.1-mini", "claude-sonnet-4-5"} <= set(prices)


def test_the_env_variable_points_at_another_file(tmp_path, monkeypatch):
    path = tmp_path / "prices.toml"
    path.write_text('[models.m]\ninput = 1\noutput = 2\ncurrency = "JPY"\n', encoding="utf-8")
    monkeypatch.setenv(PRICES_ENV, str(path))
    prices = load_prices()
    assert list(prices) == ["m"] and prices["m"].cached_input == 1  # cached defaults to the input price


def test_an_unreadable_price_file_is_a_japanese_error():
    with pytest.raises(PriceFileError, match="価格ファイルをTOMLとして読めません"):
        parse_prices("[models.m\n")


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ('input = "x"\noutput = 1\ncurrency = "USD"', "input が数値ではありません。"),
        ('input = "hot"\noutput = 1\ncurrency = "USD"', "input が数値ではありません。"),
        (
            'input = -1\noutput = 1\ncurrency = "USD"',
            "input は 0～10,000 の数にしてください（100万トークンあたり）。",
        ),
        (
            'input = nan\noutput = 1\ncurrency = "USD"',
            "input は 0～10,000 の数にしてください（100万トークンあたり）。",
        ),
        (
            'input = 1\noutput = inf\ncurrency = "USD"',
            "output は 0～10,000 の数にしてください（100万トークンあたり）。",
        ),
        (
            'input = 9e999999\noutput = 1\ncurrency = "USD"',
            "input は 0～10,000 の数にしてください（100万トークンあたり）。",
        ),
        (
            'input = 1\noutput = 10001\ncurrency = "USD"',
            "output は 0～10,000 の数にしてください（100万トークンあたり）。",
        ),
        ("input = 1\noutput = 1", "currency がありません。"),
    ],
)
def test_a_bad_price_names_the_model_and_is_treated_as_unpriced(row, problem):
    prices, problems = parse_price_table(
        f'[models.bad]\n{row}\n\n[models.ok]\ninput = 1\noutput = 2\ncurrency = "USD"\n'
    )
    assert list(prices) == ["ok"]
    assert problems == [f"価格ファイルのモデル「bad」: {problem} このモデルは「価格未設定」として扱います。"]
    event = DebugEvent("f", "s", "call", model="bad", usage={"input_tokens": 10, "output_tokens": 10})
    assert event_cost(event, prices).text() == "価格未設定（bad）"


def test_a_missing_file_is_a_japanese_error(tmp_path):
    with pytest.raises(PriceFileError, match="を読めません（FileNotFoundError）"):
        load_prices(tmp_path / "nope.toml")


def test_the_demo_model_is_free_under_any_model_name(prices):
    """A re-run on 「デモモデル / gpt-4.1-mini」 answers with the demo text: nothing to bill."""
    for model in ("gpt-4.1-mini", "katachi-demo", "unknown-model"):
        cost = event_cost(call("a", model, 1_000_000, 1_000_000, provider="demo"), prices)
        assert cost.text() == "USD 0" and not cost.unpriced
    assert event_cost(call("b", "gpt-4.1-mini", 1_000_000, 0), prices).text() != "USD 0"
