"""AppTest: 「答案・講評を登録」 (12 pasted paragraphs, split adjusted, 5 items) and a chat about §3 with the demo
model (exact Specified / Related blocks); edit, rename, delete the review; rename, export, delete a thread;
the same file imported twice (issue #13)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.flows.review_chat import build_record, load_sample_review
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.review.repository import ReviewRepository
from tests.core.review_material_fixtures import ITEMS, OVERALL, PARAGRAPHS, PASTED, QUESTION, draft
from tests.pages.conftest import make_app
from tests.pages.test_review_page import run, send

PAGE = "pages/review_chat.py"
CONTEXT_3 = (
    f"【問題文】\n{QUESTION}\n\n【講評（全体）】\n{OVERALL}\n\n"
    "【指定段落付き答案（Specified）】\n"
    "§1 第1　請求の根拠\n"
    "§2 甲の請求は、売買契約に基づく代金支払請求である。\n"
    "§3 乙は、同時履行の抗弁権を主張すると考えられる。\n目的物の引渡しがまだだからである。\n"
    "§4 同時履行の抗弁権の要件は、双務契約であること、相手方の債務が弁済期にあることである。\n"
    "§5 本件売買は双務契約であり、引渡債務の弁済期も到来している。\n"
    "§6 したがって、乙の抗弁は認められる。\n"
    "§7 第2　反論の検討\n"
    "§8 甲は、乙が先に受領を拒んだと再反論しうる。\n\n"
    "【指定段落に関連する講評（Related）】\n"
    "{\n"
    '  "strengths": [\n'
    '    {"title": "抗弁の発見", "description": "同時履行の抗弁に気付いている。", "paragraph_numbers": [3, 4]}\n'
    "  ]\n"
    "}"
)


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click()
    return run(at)


def successes(at: AppTest) -> list[str]:
    return [s.value for s in at.success]


def register(at: AppTest) -> None:
    """The form filled in as a person would: paste, adjust the split, five items, 保存."""
    click(at, "review_register")
    assert at.subheader[0].value == "答案・講評を登録"
    at.text_input(key="review_form_title").input("売買代金請求（自作答案）")
    at.text_area(key="review_form_question").input(QUESTION)
    at.text_area(key="review_form_answer").input(PASTED)
    run(at)
    assert at.session_state["review_form_paragraphs"] == PARAGRAPHS
    assert "**段落のプレビュー（§1～§12）**" in [m.value for m in at.markdown]
    click(at, "review_form_merge_3")  # §3 + §4 by mistake ...
    assert len(at.session_state["review_form_paragraphs"]) == 11
    at.selectbox(key="review_form_split_line_3").set_value(3)  # ... split again before its third line
    click(at, "review_form_split_3")
    assert at.session_state["review_form_paragraphs"] == PARAGRAPHS
    at.text_area(key="review_form_overall").input(OVERALL)
    for item in ITEMS:
        click(at, f"review_form_add_{item.category}")
    for uid, item in enumerate(ITEMS, start=1):
        at.text_input(key=f"review_form_item_{uid}_title").input(item.title)
        at.text_area(key=f"review_form_item_{uid}_desc").input(item.description)
        at.multiselect(key=f"review_form_item_{uid}_paras").set_value(item.paragraph_numbers)
    click(at, "review_form_save")


def test_register_twelve_paragraphs_and_five_items_then_ask_about_section_3(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    register(at)
    assert "「売買代金請求（自作答案）」を登録しました。" in successes(at)
    review_id = at.session_state["review_review_id"]
    assert at.selectbox(key="review_picker").value == review_id
    stored = ReviewRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id).get_review(review_id)
    assert stored is not None and stored.to_json_dict() == build_record(draft()).to_json_dict()
    assert at.button(key="review_para_12") is not None  # the answer tab shows §1..§12

    send(at, "§3 について")
    (call,) = at.session_state["review_last_call"]
    assert [m["role"] for m in call["messages"]] == ["system", "user", "user"]
    assert call["messages"][1]["content"] == CONTEXT_3
    assert call["messages"][2]["content"] == "ユーザーの質問: §3 について"
    reply = at.session_state["chat"]["review"][-1]["content"]
    assert reply.startswith("（デモモデルの応答）") and "良い点: 抗弁の発見" in reply


def test_a_form_with_problems_says_what_to_fix_and_keeps_what_was_typed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    click(at, "review_register")
    at.text_area(key="review_form_answer").input("一\n二")
    run(at)
    click(at, "review_form_add_weaknesses")
    at.multiselect(key="review_form_item_1_paras").set_value([2])
    at.text_area(key="review_form_answer").input("一二")  # pasted again: one paragraph, §2 is gone
    run(at)
    assert "答案の段落が 1 個になったため、講評項目から §2 を外しました。" in [w.value for w in at.warning]
    click(at, "review_form_save")
    assert at.error[0].value == (
        "保存できませんでした。次の点を直してください。\n\n"
        "- 問題文を入力してください。\n- 全体講評を入力してください。\n- 改善点 1件目: 見出しか内容を入力してください。"
    )
    assert (
        at.text_area(key="review_form_answer").value == "一二"
        and at.session_state["review_form_mode"] == "new"
    )
    click(at, "review_form_cancel")
    assert at.button(key="review_register") is not None and not at.session_state["review_form_mode"]


def test_edit_rename_and_delete_an_own_review(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    assert not [b for b in at.button if b.key == "review_edit"]  # the sample cannot be changed
    register(at)
    review_id = at.session_state["review_review_id"]
    click(at, "review_edit")
    assert at.subheader[0].value == "答案・講評を編集"
    assert at.text_area(key="review_form_overall").value == OVERALL
    assert at.multiselect(key="review_form_item_2_paras").value == [3, 4]
    at.text_area(key="review_form_overall").input("書き直した講評")
    click(at, "review_form_save")
    assert "「売買代金請求（自作答案）」を更新しました。" in successes(at)
    assert at.session_state["review_review_id"] == review_id
    at.text_input(key="review_rename_title").input("民法 答案1")
    click(at, "review_rename")
    assert "レビューの名前を変更しました。" in successes(at)
    assert at.selectbox(key="review_picker").options[1] == "民法 答案1"
    send(at, "§3 について")
    click(at, "review_delete")
    assert [w.value for w in at.warning] == [
        "このレビュー（問題文・答案・講評）を削除します。このレビューのスレッド 1 件と、その会話もすべて削除されます。"
        "元に戻せません。"
    ]
    click(at, "review_delete_confirm")
    assert "レビューを削除しました（スレッド 1 件も削除）。" in successes(at)
    assert len(at.selectbox(key="review_picker").options) == 1  # only the sample is left


def test_rename_export_and_delete_a_thread(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    assert not [b for b in at.button if b.key == "review_thread_rename"]  # nothing stored yet
    send(at, "§11 はどう評価されていますか？")
    thread_id = at.session_state["review_thread_id"]
    assert at.text_input(key="review_thread_title").value == "§11 はどう評価されていますか？"
    at.text_input(key="review_thread_title").input("§11 の相談")
    click(at, "review_thread_rename")
    assert "スレッドの名前を変更しました。" in successes(at)
    assert at.selectbox(key="review_thread_picker").options[1].startswith("§11 の相談（1ターン・")
    labels = [e.proto.label for e in at.get("download_button")]
    assert labels == ["サンプルのJSONをダウンロード", "Markdown で書き出す", "Word（DOCX）で書き出す"]
    assert any(c.value.startswith("「§11 の相談」を書き出します") for c in at.caption)
    click(at, "review_thread_delete")
    assert "このスレッドと、その会話をすべて削除します。元に戻せません。" in [w.value for w in at.warning]
    click(at, "review_thread_delete_cancel")
    assert at.session_state["review_thread_id"] == thread_id
    click(at, "review_thread_delete")
    click(at, "review_thread_delete_confirm")
    assert "スレッドを削除しました。" in successes(at)
    assert at.session_state["review_thread_id"] is None and at.session_state["chat"]["review"] == []
    assert at.selectbox(key="review_thread_picker").options == ["新しいスレッド"]


def test_the_same_file_imported_twice_opens_the_stored_review(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    raw = json.dumps(load_sample_review().to_json_dict(), ensure_ascii=False).encode()
    for _ in range(2):
        at.file_uploader(key="review_upload").upload("sample.json", raw, "application/json")
        run(at)
        click(at, "review_import")
    assert [w.value for w in at.warning] == [
        f"同じ内容の講評がすでに登録されています（「{load_sample_review().title}」）。登録済みの講評を開きました。"
    ]
    assert len(at.selectbox(key="review_picker").options) == 2  # the sample and one own copy


def test_typed_and_saved_at_once_splits_what_was_typed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    click(at, "review_register")
    at.text_area(key="review_form_question").input("Q")
    at.text_area(key="review_form_overall").input("OV")
    at.text_area(key="review_form_answer").input("一\n二\n三")
    click(at, "review_form_save")  # one run: the answer's change and 保存 together
    assert "「Q」を登録しました。" in successes(at)
    review = ReviewRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id).get_review(
        at.session_state["review_review_id"]
    )
    assert review is not None and review.answer_text == "$$[1] 一\n$$[2] 二\n$$[3] 三"
