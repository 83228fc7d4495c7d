"""Browser: a companion conversation survives a restart of the app server (its id is in the URL, its turns in
the store): reloading the URL shows the same turns, not the intro."""

import pytest

from tests.e2e.conftest import AppServer, free_port
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e

MESSAGE = "こんばんは、灯。今日は同僚の田中さんとカレーを食べたよ。"


def chat_texts(page) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.inner_text().strip() for m in page.get_by_test_id("stChatMessage").all()]


def test_the_conversation_is_there_after_the_server_restarts(browser, tmp_path):  # type: ignore[no-untyped-def]
    port = free_port()
    server = AppServer(tmp_path, port=port)
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    page.set_default_timeout(60_000)
    try:
        open_page(page, server.url, "コンパニオン記憶")
        page.get_by_test_id("stChatInputTextArea").fill(MESSAGE)
        page.keyboard.press("Enter")
        wait_idle(page, timeout=60_000)
        page.get_by_text("このターンの記憶").first.wait_for()
        before = chat_texts(page)
        assert len(before) == 2 and MESSAGE in before[0] and before[1]
        url = page.url
        assert "companion=" in url
    finally:
        server.stop()
    server = AppServer(tmp_path, port=port)  # a new process on the same store
    try:
        page.goto(url)
        wait_idle(page, timeout=60_000)
        page.get_by_test_id("stChatMessage").first.wait_for()
        after = chat_texts(page)
        assert [t.split("\n")[0] for t in after] == [t.split("\n")[0] for t in before]
        assert MESSAGE in after[0]
        assert page.get_by_text("灯に話しかけてみてください").count() == 0
        assert "Traceback" not in page.content()
        shot(page, "memory-after-restart")
    finally:
        page.close()
        server.stop()
