"""Browser, issue #13: save an entry from the demo interview, start a second interview on the same clause, see
「類似ナレッジ」, and saving its draft asks first (よく似たナレッジがあります) before updating the existing entry."""

import pytest

from tests.e2e.conftest import AppServer
from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e


def demo_to_draft(page, url: str) -> None:  # type: ignore[no-untyped-def]
    """The one-click demo from home, then the scripted answers until the draft card appears."""
    page.goto(url)
    wait_idle(page)
    page.get_by_test_id("stMain").get_by_role("button", name="ワンクリックデモ").first.click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    main.get_by_text("全12か条を確認しました").first.wait_for()
    for _ in range(2):
        main.get_by_role("button", name="デモの回答例を送る").click()
        wait_idle(page)
    main.get_by_text("ナレッジの草案を作成しました").first.wait_for()


def test_a_second_interview_on_a_saved_clause_shows_similar_knowledge_and_asks_before_saving(
    browser, tmp_path
):
    server = AppServer(tmp_path)  # its own data dir: the knowledge base starts empty
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1100}, locale="ja-JP")
        page.set_default_timeout(30_000)
        main = page.get_by_test_id("stMain")
        demo_to_draft(page, server.url)
        assert "類似ナレッジ（" not in main.inner_text()  # nothing saved yet
        main.get_by_role("button", name="ナレッジベースに保存").click()
        wait_idle(page)
        main.get_by_text("ナレッジベースに保存しました（ID 1・第1版）").first.wait_for()

        demo_to_draft(page, server.url)  # a second interview about the same clause
        similar = main.get_by_text("類似ナレッジ（1 件）")
        similar.wait_for()
        assert "（ID 1・第1版）" in main.inner_text()
        assert "Traceback" not in page.content()
        shot(page, "knowledge-reuse-similar")

        plan = main.get_by_label("対応方針")
        plan.fill("存続期間を5年とし、個人情報は期間の定めなく存続させた（2件目の事例でも同じ結論）。")
        plan.press("Control+Enter")
        wait_idle(page)
        main.get_by_role("button", name="ナレッジベースに保存").click()
        wait_idle(page)
        main.get_by_text("よく似たナレッジがあります").first.wait_for()
        assert "既存: " in main.inner_text()
        update = main.get_by_role("button", name="既存を更新する（ID 1 の第2版として保存）")
        for button in (update, main.get_by_role("button", name="新規として保存")):
            assert button.is_visible()
        main.get_by_role("button", name="キャンセル（保存しない）").scroll_into_view_if_needed()
        shot(page, "knowledge-reuse-near-duplicate")

        update.click()
        wait_idle(page)
        main.get_by_text("既存のナレッジ（ID 1）を更新しました（第2版）").first.wait_for()
        page.get_by_role("tab", name="ナレッジベース").click()
        wait_idle(page)
        main.get_by_text("並び順").first.wait_for()
        assert "アーカイブを表示" in main.inner_text()
        shot(page, "knowledge-reuse-base-tab")
        page.close()
    finally:
        server.stop()


def test_a_reloaded_interview_shows_similar_knowledge_at_once_and_an_archived_one_is_read_only(
    browser, tmp_path
):
    server = AppServer(tmp_path)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1100}, locale="ja-JP")
        page.set_default_timeout(30_000)
        main = page.get_by_test_id("stMain")
        demo_to_draft(page, server.url)
        main.get_by_role("button", name="ナレッジベースに保存").click()
        wait_idle(page)
        main.get_by_text("ナレッジベースに保存しました（ID 1・第1版）").first.wait_for()
        demo_to_draft(page, server.url)  # a second interview about the same clause
        assert "interview=" in page.url
        interview_url = page.url

        page.goto(interview_url)  # a browser reload: the 類似ナレッジ panel is there before any new turn
        wait_idle(page)
        main.get_by_text("類似ナレッジ（1 件）").wait_for()
        assert "（ID 1・第1版）" in main.inner_text()
        shot(page, "knowledge-resume-similar")

        page.get_by_role("tab", name="聞き取り一覧・分析").click()
        wait_idle(page)
        main.get_by_role(
            "button", name="再開"
        ).click()  # the interview chosen in the list: its id goes to the URL
        wait_idle(page)
        archived_url = page.url
        assert "interview=" in archived_url
        main.get_by_role("button", name="アーカイブ").click()  # the same interview
        wait_idle(page)
        main.get_by_text("聞き取りをアーカイブしました").first.wait_for()

        page.goto(archived_url)  # opened by its URL
        wait_idle(page)
        main.get_by_text("このヒアリングはアーカイブされています（閲覧のみ）。").wait_for()
        assert page.get_by_test_id("stChatInputTextArea").count() == 0
        assert main.get_by_role("button", name="ナレッジベースに保存").count() == 0
        assert "ナレッジの草案を作成しました" in main.inner_text()  # its turns are shown
        assert "Traceback" not in page.content()
        shot(page, "knowledge-resume-archived")

        main.get_by_role("button", name="復元する").click()
        wait_idle(page)
        main.get_by_text("聞き取りを復元しました。続けて入力できます。").first.wait_for()
        page.get_by_test_id("stChatInputTextArea").wait_for()
        assert "アーカイブされています" not in main.inner_text()
        page.close()
    finally:
        server.stop()
