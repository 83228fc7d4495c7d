"""Edit requests after the draft (spec 00 review_knowledge): read from the message, honoured by the demo
interviewer — the item changes and the reply says what changed, never 「確定しました」 with nothing done."""

from __future__ import annotations

import pytest

from core.flows.knowledge.demo import DEMO_OPENING, DEMO_SCRIPT, reply_for
from core.flows.knowledge.edit_request import EditRequest, read_edit_request

DRAFTED = [DEMO_OPENING, DEMO_SCRIPT[0], DEMO_SCRIPT[1]]  # the one-click demo up to its draft


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "対応方針を「最低5年を求め、3年は受け入れない」に変更してください。",
            EditRequest("action_plan", "最低5年を求め、3年は受け入れない"),
        ),
        (
            "対応方針は、7年を目標に交渉する方針に変更してください",
            EditRequest("action_plan", "7年を目標に交渉する方針"),
        ),
        ("ナレッジ名を「秘密保持の存続期間」にして", EditRequest("knowledge_title", "秘密保持の存続期間")),
        (
            "審査ポイントに「更新時の扱い」を追記してください",
            EditRequest("review_points", "更新時の扱い", append=True),
        ),
        ("対応方針をもう少し具体的に直してください", EditRequest("action_plan", None)),
        ("対応方針を変えたいです", EditRequest("action_plan", None)),
        ("問題ありません。確定してください。", None),
        ("存続期間を5年とするよう修正を求め、合意しました。", None),  # a case answer, not a draft item
    ],
)
def test_an_edit_request_is_read_from_the_message(text: str, expected: EditRequest | None) -> None:
    assert read_edit_request(text) == expected


def test_the_demo_changes_the_item_it_was_asked_to_and_says_so() -> None:
    before = reply_for(DRAFTED)
    assert before["control"]["mode"] == "finalize"
    asked = "対応方針を「最低5年を求め、3年は受け入れない」に変更してください。ほかは問題ありません。"
    after = reply_for([*DRAFTED, asked])
    assert after["control"]["mode"] == "clarify"  # not finalized: the person confirms the change first
    assert after["knowledge_json"]["action_plan"] == "最低5年を求め、3年は受け入れない"
    assert after["assistant_message"].startswith("対応方針を次のとおり変更しました。")
    assert "確定しました" not in after["assistant_message"]
    unchanged = {k: v for k, v in after["knowledge_json"].items() if k != "action_plan"}
    assert unchanged == {k: v for k, v in before["knowledge_json"].items() if k != "action_plan"}
    confirmed = reply_for([*DRAFTED, asked, "問題ありません。確定してください。"])
    assert confirmed["assistant_message"].startswith("ナレッジを確定しました。")
    assert confirmed["knowledge_json"]["action_plan"] == "最低5年を求め、3年は受け入れない"


def test_a_change_without_the_new_text_is_asked_for_then_applied() -> None:
    asking = reply_for([*DRAFTED, "対応方針を変えたいです"])
    assert (
        asking["assistant_message"]
        == "対応方針をどのように変更しますか？新しい対応方針をそのままお送りください。"
    )
    applied = reply_for([*DRAFTED, "対応方針を変えたいです", "7年を目標に交渉し、5年までは譲歩できる"])
    assert applied["knowledge_json"]["action_plan"] == "7年を目標に交渉し、5年までは譲歩できる"


def test_an_addition_keeps_what_was_there() -> None:
    before = reply_for(DRAFTED)["knowledge_json"]["review_points"]
    after = reply_for([*DRAFTED, "審査ポイントに「更新時の扱い」を追記してください"])
    assert after["knowledge_json"]["review_points"] == before + "\n更新時の扱い"
    assert after["assistant_message"].startswith("審査ポイントに次の内容を追記しました。")


def test_the_demo_title_is_short_and_never_cut() -> None:
    entry = reply_for(DRAFTED)["knowledge_json"]
    assert entry["knowledge_title"] == "秘密保持条項：存続期間を「契約終了後3年」に限定する提示への対応"
    assert "…" not in entry["knowledge_title"]
