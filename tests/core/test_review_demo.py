"""The review chat's demo persona: grounded in the blocks it was given, spec 02's closing sentence, summaries."""

from __future__ import annotations

import pytest

from core.flows.registry import demo_client
from core.flows.review_chat import NOT_FOUND_SENTENCE, ThreadState, load_sample_review, run_review_turn

SAMPLE = load_sample_review()


def ask(question: str, state: ThreadState | None = None, history: list | None = None) -> str:
    outcome = run_review_turn(demo_client(), SAMPLE, state or ThreadState(), history or [], question)
    assert outcome.reply.ok
    return outcome.reply.text


def test_quotes_paragraph_and_related_items() -> None:
    text = ask("§11の論述について、講評ではどう評価されていますか？")
    assert text.startswith("（デモモデルの応答）")
    assert "> しかし、善意の第三者 C が現れた時点で" in text  # quotes §11
    assert "**改善点: 絶対的構成の理由づけが薄い**" in text and "**今後の課題: 転得者の論点の復習**" in text
    assert NOT_FOUND_SENTENCE not in text


@pytest.mark.parametrize(
    "question",
    [
        "この段落の書き方はどうですか？",
        "答案のこの部分は何が悪いの？",
        "第三者の定義を書いた箇所はここで合っていますか",
    ],
)
def test_location_question_without_specified_ends_with_the_sentence(question: str) -> None:
    assert ask(question).endswith("\n\n" + NOT_FOUND_SENTENCE)


def test_general_question_has_no_closing_sentence() -> None:
    text = ask("全体としてどう評価されましたか？")
    assert "全体講評では、「設問1・設問2ともに" in text and NOT_FOUND_SENTENCE not in text


def test_purpose_and_grading_are_quoted_only_when_sent() -> None:
    both = ask("出題趣旨と採点実感ではどう書かれていますか？")
    assert (
        "**出題趣旨**では、「本問は、通謀虚偽表示" in both and "**採点実感**では、「〔設問1〕について" in both
    )
    assert "**出題趣旨**" not in ask("§4 はどうですか？")


def test_carried_paragraphs_are_used_and_deterministic() -> None:
    first = ask("§20 の問題点は？")
    history = [{"role": "user", "content": "§20 の問題点は？"}, {"role": "assistant", "content": first}]
    state = ThreadState(last_section_mention_turn=1, last_section_paragraph_numbers="[20]")
    follow = ask("この段落はどう直せばいいですか？", state, history)
    assert "直前のご質問で指定された段落" in follow and "110条の法意の併用場面の混同" in follow
    assert NOT_FOUND_SENTENCE not in follow  # Specified was given (carried)
    assert follow == ask("この段落はどう直せばいいですか？", state, history)


def test_demo_summary_lists_questions_and_cited_items() -> None:
    state, history = ThreadState(), []
    for question in [
        "§11 はどう評価されていますか？",
        "理由は？",
        "採点実感では？",
        "全体では？",
        "出題趣旨は？",
    ]:
        outcome = run_review_turn(demo_client(), SAMPLE, state, history, question)
        history += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": outcome.reply.text},
        ]
        state = outcome.state
    summary = state.conversation_summary
    assert summary.startswith(
        "【1～5ターンの要約】\n- 疑問・観点: 「§11 はどう評価されていますか？」、「理由は？」"
    )
    assert "講評「絶対的構成の理由づけが薄い」" in summary and "（デモモデルによる要約）" in summary
    assert state.summary_up_to_turn == 5


def test_a_paragraph_no_item_cites_gets_the_overall_review_and_the_neighbours() -> None:
    text = ask("§13 はどう評価されていますか？")
    assert "**§13 の記述**\n> 5 以上より、A の D に対する請求は認められない。" in text
    assert "§13 を直接挙げた講評項目はありません。\n全体講評では、「設問1・設問2ともに" in text
    assert "前後の段落（§11、§15）とその講評を示します。" in text
    assert (
        "**§11 の記述**\n> しかし、善意の第三者 C が現れた時点で" in text
        and "**§15 の記述**\n> 1 C が" in text
    )
    assert "- **改善点: 絶対的構成の理由づけが薄い**（§10、§11） — " in text
    assert "- **良い点: 設問2の問題提起**（§15、§16） — " in text
    assert "照らして読んでください" not in text and "この段落について次のように述べています" not in text


def test_a_paragraph_cited_by_items_is_answered_with_those_items_only() -> None:
    text = ask("§11 はどうですか？")
    assert (
        "講評では、この段落について次のように述べています。\n- **改善点: 絶対的構成の理由づけが薄い** — "
        in text
    )
    assert "直接挙げた講評項目はありません" not in text and "前後の段落" not in text
