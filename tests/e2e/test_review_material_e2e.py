"""Browser: register one's own answer (12 pasted paragraphs) and a review of 5 items, ask about §3, rename the
thread, download it as DOCX (opened with python-docx), delete it (issue #13)."""

import docx
import pytest

from tests.core.review_material_fixtures import ITEMS, OVERALL, PASTED, QUESTION
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def key(page, name: str):  # type: ignore[no-untyped-def]
    return page.locator(f".st-key-{name}")


def pick_paragraphs(page, uid: int, numbers: list[int]) -> None:  # type: ignore[no-untyped-def]
    box = key(page, f"review_form_item_{uid}_paras")
    for number in numbers:
        box.locator("input").click()
        box.locator("input").fill(f"§{number}")  # the list shows the first options only: filter it
        page.get_by_role("option", name=f"§{number}", exact=True).click()
        wait_idle(page)
    page.keyboard.press("Escape")


def test_register_ask_about_3_rename_export_and_delete(page, app_url, tmp_path):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "答案レビュー・チャット")
    main = page.get_by_test_id("stMain")
    main.get_by_role("button", name="答案・講評を登録").click()
    wait_idle(page)
    key(page, "review_form_title").locator("input").fill("売買代金請求（自作答案）")
    key(page, "review_form_question").locator("textarea").fill(QUESTION)
    key(page, "review_form_answer").locator("textarea").fill(PASTED)
    main.get_by_text("答案・講評を登録", exact=True).first.click()  # leave the box: the preview follows
    wait_idle(page)
    main.get_by_text("段落のプレビュー（§1～§12）").wait_for()
    key(page, "review_form_merge_3").scroll_into_view_if_needed()
    shot(page, "review-material-preview")
    key(page, "review_form_overall").locator("textarea").fill(OVERALL)
    for item in ITEMS:
        key(page, f"review_form_add_{item.category}").locator("button").click()
        wait_idle(page)
    for uid, item in enumerate(ITEMS, start=1):
        key(page, f"review_form_item_{uid}_title").locator("input").fill(item.title)
        key(page, f"review_form_item_{uid}_desc").locator("textarea").fill(item.description)
        pick_paragraphs(page, uid, item.paragraph_numbers)
    key(page, "review_form_item_2_paras").scroll_into_view_if_needed()
    shot(page, "review-material-form")
    main.get_by_role("button", name="保存").click()
    wait_idle(page)
    main.get_by_text("「売買代金請求（自作答案）」を登録しました。").wait_for()
    assert main.get_by_role("button", name="§12", exact=True).count() == 1

    draft = main.get_by_label("質問")
    draft.fill("§3 について")
    main.get_by_role("button", name="送信").click()
    wait_idle(page)
    reply = main.get_by_test_id("stChatMessage").filter(has_text="（デモモデルの応答）")
    reply.get_by_text("良い点: 抗弁の発見").wait_for()
    main.get_by_text("このターンでLLMに渡した情報（ターン1）").click()
    main.get_by_text("入力に §3 が含まれる").first.wait_for()
    shot(page, "review-material-chat-section-3")

    main.get_by_text("このスレッドの名前変更・書き出し・削除").click()
    key(page, "review_thread_title").locator("input").fill("§3 の相談")
    key(page, "review_thread_rename").locator("button").click()
    wait_idle(page)
    main.get_by_text("スレッドの名前を変更しました。").wait_for()
    with page.expect_download() as download:
        main.get_by_role("button", name="Word（DOCX）で書き出す").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.name == "§3_の相談.docx"
    texts = "\n".join(p.text for p in docx.Document(str(path)).paragraphs)
    assert "§3 について" in texts and "（デモモデルの応答）" in texts and "§3 の相談" in texts
    assert "§3　乙は、同時履行の抗弁権を主張すると考えられる。" in texts
    shot(page, "review-material-thread-actions")

    main.get_by_role("button", name="このスレッドを削除").click()
    wait_idle(page)
    main.get_by_text("このスレッドと、その会話をすべて削除します。元に戻せません。").wait_for()
    shot(page, "review-material-delete-confirmation")
    main.get_by_role("button", name="削除する").click()
    wait_idle(page)
    main.get_by_text("スレッドを削除しました。").wait_for()
    assert main.get_by_test_id("stChatMessage").count() == 0
    assert "Traceback" not in page.content()
    shot(page, "review-material-thread-deleted")
