"""Local token estimates: CJK and ASCII rates, per-model calibration, labelling."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.llm.base import Usage
from core.llm.token_estimate import (
    ASCII_TOKENS_PER_CHAR,
    CJK_TOKENS_PER_CHAR,
    MESSAGE_OVERHEAD_TOKENS,
    RATIO_BOUNDS,
    TokenEstimator,
    base_estimate,
    is_cjk,
    usage_or_estimate,
)

PROMPT = [{"role": "user", "content": "abcd"}]


@pytest.mark.parametrize(
    ("char", "cjk"),
    [
        ("あ", True),
        ("ア", True),
        ("漢", True),
        ("。", True),
        ("Ａ", True),
        ("a", False),
        (" ", False),
        ("é", False),
    ],
)
def test_is_cjk(char: str, cjk: bool) -> None:
    assert is_cjk(char) is cjk


def test_base_estimate_uses_separate_rates() -> None:
    assert base_estimate("") == 0
    assert base_estimate("日本語") == pytest.approx(3 * CJK_TOKENS_PER_CHAR)
    assert base_estimate("abcdefgh") == pytest.approx(8 * ASCII_TOKENS_PER_CHAR)
    assert base_estimate("契約abcd") == pytest.approx(2 * CJK_TOKENS_PER_CHAR + 4 * ASCII_TOKENS_PER_CHAR)


def test_estimate_is_labelled_and_counts_the_prompt() -> None:
    usage = TokenEstimator().estimate("m", PROMPT, "abcdefgh")
    assert usage.estimated
    assert usage.input_tokens == round(4 * ASCII_TOKENS_PER_CHAR + MESSAGE_OVERHEAD_TOKENS)
    assert usage.output_tokens == 2
    assert TokenEstimator().estimate("m", PROMPT, "").output_tokens == 0
    assert TokenEstimator().estimate("m", PROMPT, "a").output_tokens == 1  # never 0 for some output


def test_calibration_is_per_model_and_per_part() -> None:
    est = TokenEstimator()
    est.observe("a", PROMPT, "x" * 40, Usage(input_tokens=10, output_tokens=20))  # output: 20 / 10 = 2.0
    assert est.ratio("a", "output") == pytest.approx(2.0)
    assert est.ratio("a", "input") == pytest.approx(10 / (1 + MESSAGE_OVERHEAD_TOKENS))
    assert est.ratio("b", "output") == 1.0
    assert est.estimate("a", PROMPT, "y" * 40).output_tokens == 20
    assert est.estimate("b", PROMPT, "y" * 40).output_tokens == 10


def test_running_ratio_averages_over_replies_and_is_bounded() -> None:
    est = TokenEstimator()
    est.observe("m", PROMPT, "x" * 40, Usage(0, 10))  # 10 / 10
    est.observe("m", PROMPT, "x" * 40, Usage(0, 30))  # 30 / 10
    assert est.ratio("m", "output") == pytest.approx(2.0)
    est.observe("wild", PROMPT, "x" * 4, Usage(0, 1000))
    assert est.ratio("wild", "output") == RATIO_BOUNDS[1]


def test_estimated_usage_teaches_nothing() -> None:
    est = TokenEstimator()
    est.observe("m", PROMPT, "x" * 40, Usage(5, 99, estimated=True))
    assert est.ratio("m", "output") == 1.0


def test_usage_or_estimate_prefers_counted_usage_and_learns_from_it() -> None:
    est = TokenEstimator()
    counted = Usage(7, 20)
    assert usage_or_estimate("m", PROMPT, "x" * 40, counted, est) is counted
    assert est.ratio("m", "output") == pytest.approx(2.0)
    zeros = usage_or_estimate("m", PROMPT, "x" * 40, Usage(0, 0), est)  # some servers send zeros
    assert zeros.estimated and zeros.output_tokens == 20
    assert usage_or_estimate("m", PROMPT, "x" * 40, None, est).estimated


def test_estimator_is_thread_safe() -> None:
    est = TokenEstimator()

    def work() -> None:
        for _ in range(200):
            est.observe("m", PROMPT, "x" * 4, Usage(1, 1))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert est.ratio("m", "output") == pytest.approx(1.0)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_base_estimate_counts_like_is_cjk_character_by_character(text: str) -> None:
    cjk = sum(1 for char in text if is_cjk(char))
    assert base_estimate(text) == cjk * CJK_TOKENS_PER_CHAR + (len(text) - cjk) * ASCII_TOKENS_PER_CHAR
