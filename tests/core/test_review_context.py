"""spec 02 コンテキストの構成: each block and its condition; §N persistence at T, T+1, T+2, expiry, update."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.flows.review_chat import (
    ThreadState,
    assemble_review_context,
    build_review_chat_context_text,
    current_turn,
    load_sample_review,
    resolve_paragraph_numbers,
)

ANSWER = "\n".join(f"$$[{i}] 本文{i}" for i in range(1, 21))
REVIEW = {
    "overall_review": "全体講評です。",
    "strengths": [{"title": "良", "paragraph_numbers": [3]}],
    "weaknesses": [{"title": "悪", "paragraph_number": 15}],
}
ALL_HEADERS = [
    "【問題文】",
    "【講評（全体）】",
    "【出題趣旨／参考文章】",
    "【採点実感】",
    "【指定段落付き答案（Specified）】",
    "【指定段落に関連する講評（Related）】",
]


def headers(user_input: str, override: list[int] | None = None) -> list[str]:
    return assemble_review_context("問題", REVIEW, user_input, "趣旨", "実感", ANSWER, override).headers


@pytest.mark.parametrize(
    ("user_input", "override", "expected"),
    [
        ("こんにちは", None, [0, 1]),
        ("出題趣旨は？", None, [0, 1, 2]),
        ("採点実感は？", None, [0, 1, 3]),
        ("出題趣旨と採点実感", None, [0, 1, 2, 3]),
        ("§3は？", None, [0, 1, 4, 5]),
        ("第15段落と出題趣旨", None, [0, 1, 2, 4, 5]),
        ("続きを", [3], [0, 1, 4, 5]),  # the override applies without numbers in the input
        ("続きを", [], [0, 1]),
        ("§ 3 は？", None, [0, 1]),  # not a mention
        ("趣旨", None, [0, 1]),  # the keyword must be whole
    ],
)
def test_conditional_blocks(user_input: str, override: list[int] | None, expected: list[int]) -> None:
    assert headers(user_input, override) == [ALL_HEADERS[i] for i in expected]


def test_context_text_exact() -> None:
    text = build_review_chat_context_text("問題", REVIEW, "§3 と出題趣旨と採点実感", "趣旨", "実感", ANSWER)
    specified = "\n".join(f"§{i} 本文{i}" for i in range(1, 9))
    assert text == (
        "【問題文】\n問題\n\n【講評（全体）】\n全体講評です。\n\n【出題趣旨／参考文章】\n趣旨\n\n"
        f"【採点実感】\n実感\n\n【指定段落付き答案（Specified）】\n{specified}\n\n"
        '【指定段落に関連する講評（Related）】\n{\n  "strengths": [\n    {"title": "良", "paragraph_numbers": [3]}\n  ]\n}'
    )


def test_overall_review_only() -> None:
    review = {**REVIEW, "secret_detail": "全文に含めない"}
    text = build_review_chat_context_text("問題", review, "質問", "", "", ANSWER)
    assert "全文に含めない" not in text and "良" not in text


def test_input_numbers_win_over_override() -> None:
    context = assemble_review_context("問題", REVIEW, "§15", "", "", ANSWER, [3])
    assert context.paragraph_numbers == [15] and context.paragraph_source == "input"
    assert "§15 本文15" in context.text and "§3 本文3" not in context.text


def test_empty_parts_are_explicit() -> None:
    context = assemble_review_context("", {}, "§50 出題趣旨 採点実感", "", "", ANSWER)
    bodies = {b.header: b.body for b in context.blocks}
    assert bodies["【問題文】"] == "（問題文は登録されていません）"
    assert bodies["【講評（全体）】"] == "（全体講評は登録されていません）"
    assert bodies["【出題趣旨／参考文章】"] == "（出題趣旨は登録されていません）"
    assert bodies["【採点実感】"] == "（採点実感は登録されていません）"
    assert bodies["【指定段落付き答案（Specified）】"] == "（指定された段落は答案にありません）"
    assert (
        bodies["【指定段落に関連する講評（Related）】"] == "（指定された段落に関連する講評項目はありません）"
    )


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(), st.one_of(st.none(), st.lists(st.integers(-(10**6), 10**6), max_size=5)))
def test_context_builder_never_raises(user_input: str, answer: str, override: list[int] | None) -> None:
    text = build_review_chat_context_text("問題", REVIEW, user_input, "趣旨", "実感", answer, override)
    assert text.startswith("【問題文】\n問題\n\n【講評（全体）】\n")


# --- persistence (spec 02 §N の持続) ----------------------------------------------------------------


def history(turns_done: int) -> list[dict[str, str]]:
    return [
        m
        for i in range(turns_done)
        for m in ({"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"})
    ]


@pytest.mark.parametrize(("done", "turn"), [(0, 1), (1, 2), (4, 5), (11, 12)])
def test_current_turn(done: int, turn: int) -> None:
    assert current_turn(history(done)) == turn
    assert (
        current_turn([*history(done), {"role": "user", "content": "now"}]) == turn
    )  # history incl. this input


def test_persistence_t_t1_t2_then_expiry() -> None:
    state = ThreadState()
    t = resolve_paragraph_numbers("§5 と第3段落", state, 4)
    assert (t.numbers, t.source, t.from_turn) == ([3, 5], "input", 4)
    assert t.state.last_section_mention_turn == 4 and t.state.last_section_paragraph_numbers == "[3,5]"
    assert state == ThreadState()  # the given state is not modified
    stored = t.state
    for turn in (5, 6):  # T+1, T+2
        d = resolve_paragraph_numbers("続けて", stored, turn)
        assert (d.numbers, d.source, d.from_turn, d.override) == ([3, 5], "carried", 4, [3, 5])
        assert d.state == stored
    expired = resolve_paragraph_numbers("続けて", stored, 7)  # T+3
    assert (expired.numbers, expired.source, expired.override) == ([], "none", None)
    assert expired.state == stored  # columns are kept; they just no longer apply


def test_persistence_update_at_t_plus_1() -> None:
    first = resolve_paragraph_numbers("§5", ThreadState(), 1).state
    update = resolve_paragraph_numbers("では §9 は？", first, 2)
    assert (update.numbers, update.source) == ([9], "input")
    assert (update.state.last_section_mention_turn, update.state.last_section_paragraph_numbers) == (2, "[9]")
    # the window now runs from the new T: turns 3 and 4 carry §9, turn 5 does not
    assert resolve_paragraph_numbers("続き", update.state, 4).numbers == [9]
    assert resolve_paragraph_numbers("続き", update.state, 5).numbers == []


@pytest.mark.parametrize("stored", [None, "", "not json", "{}", "[true]"])
def test_persistence_with_unusable_column(stored: str | None) -> None:
    state = ThreadState(last_section_mention_turn=1, last_section_paragraph_numbers=stored)
    assert resolve_paragraph_numbers("続き", state, 2).source == "none"


def test_decision_descriptions() -> None:
    d = resolve_paragraph_numbers("§2", ThreadState(), 3)
    assert d.describe() == "ターン3の入力で §2 を指定"
    assert (
        resolve_paragraph_numbers("x", d.state, 4).describe()
        == "ターン3で指定された §2 を持続（ターン5まで）"
    )
    assert (
        resolve_paragraph_numbers("x", d.state, 6).describe()
        == "ターン3の §2 の指定はターン5で終了（Specified／Related は含めない）"
    )
    assert (
        resolve_paragraph_numbers("x", ThreadState(), 1).describe()
        == "§N・第N段落の指定なし（Specified／Related は含めない）"
    )


def test_an_uncited_paragraph_gets_the_items_of_the_nearest_cited_paragraphs_around_it() -> None:
    sample = load_sample_review()
    context = assemble_review_context(
        sample.question_text, sample.review_json, "§13 は？", "", "", sample.answer_text
    )
    related = context.blocks[-1]
    assert related.header == "【指定段落に関連する講評（Related）】"
    assert related.reason == "§13 を挙げた講評がないため、前後の段落（§11、§15）の講評を含める"
    titles = [item["title"] for items in json.loads(related.body).values() for item in items]
    assert titles == ["設問2の問題提起", "絶対的構成の理由づけが薄い", "転得者の論点の復習"]
    cited = assemble_review_context(
        sample.question_text, sample.review_json, "§11 は？", "", "", sample.answer_text
    )
    assert cited.blocks[-1].reason == "入力に §11 が含まれる"
    assert [b.reason for b in cited.blocks[:2]] == ["常に含める", "常に含める（全体講評のみ）"]
