"""Browser: click a § control in the answer, send, see the streamed reply and the per-turn context info."""

import pytest

from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def open_review_page(page, app_url) -> None:  # type: ignore[no-untyped-def]
    open_page(page, app_url, "答案レビュー・チャット")
    page.get_by_role("heading", name="答案レビュー・チャット").wait_for()


def test_click_paragraph_control_and_send(page, app_url):  # type: ignore[no-untyped-def]
    open_review_page(page, app_url)
    main = page.get_by_test_id("stMain")
    main.get_by_role("button", name="§7", exact=True).first.click()
    wait_idle(page)
    draft = main.get_by_label("質問")
    assert draft.input_value() == "§7 "
    draft.click()
    draft.press("End")
    draft.type("の「第三者」の書き方はどう直せばよいですか？")
    shot(page, "review-draft-with-mention")
    main.get_by_role("button", name="送信").click()
    wait_idle(page)
    reply = main.get_by_test_id("stChatMessage").filter(has_text="§7 の記述")
    reply.get_by_text("改善点: 「第三者」の定義がない").wait_for()
    text = main.inner_text()
    assert "§7 の「第三者」の書き方はどう直せばよいですか？" in text
    assert "（デモモデルの応答）" in text and "Traceback" not in page.content()
    assert "?review_thread=" in page.url
    main.get_by_text("このターンでLLMに渡した情報（ターン1）").click()
    main.get_by_text("入力に §7 が含まれる").first.wait_for()
    main.get_by_text("使用中の要約").first.scroll_into_view_if_needed()
    shot(page, "review-reply-and-context-info")
    # typed text that was not sent yet is kept when a § control is clicked afterwards
    draft.fill("では")
    main.get_by_role("button", name="§9", exact=True).first.click()
    wait_idle(page)
    assert draft.input_value() == "では §9 "
    # the keyboard path: Enter is a newline (IME-safe), Ctrl+Enter sends what was typed
    draft.press("End")
    draft.type("はどうですか？")
    draft.press("Enter")
    draft.type("理由も教えてください。")
    assert main.get_by_test_id(
        "InputInstructions"
    ).first.is_hidden()  # no English "Press Ctrl+Enter to apply"
    draft.press("Control+Enter")
    wait_idle(page)
    main.get_by_test_id("stChatMessage").filter(has_text="§9 の記述").first.wait_for()
    assert "では §9 はどうですか？\n理由も教えてください。" in main.inner_text()
    assert draft.input_value() == ""
    shot(page, "review-sent-with-ctrl-enter")


def test_one_click_demo_from_home(page, app_url):  # type: ignore[no-untyped-def]
    page.goto(app_url)
    wait_idle(page)
    page.locator(".st-key-home_demo_review button").click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    main.get_by_test_id("stChatMessage").get_by_text("改善点: 絶対的構成の理由づけが薄い").wait_for()
    assert "§11 の論述について、講評ではどう評価されていますか？" in main.inner_text()
    shot(page, "review-one-click-demo")
    page.get_by_role("tab", name="講評").click()
    main.get_by_text("該当段落").first.wait_for()
    main.get_by_text("「第三者」の定義がない").first.scroll_into_view_if_needed()
    shot(page, "review-items-with-paragraph-tags")
