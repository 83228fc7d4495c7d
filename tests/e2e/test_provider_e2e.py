"""The configured provider is the one a person gets (first session, after a restart), and a model reply
made of raw HTML stays inert text (issue #16). The wire server logs every request it receives."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.core.wire_server import Scripted, WireServer
from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_settings, shot, wait_idle

TURN = json.dumps(
    {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": ["契約書の種類"]},
        "assistant_message": "契約書の種類を教えてください。",
        "knowledge_json": None,
    },
    ensure_ascii=False,
)
KEY = "sk-test-E2E-PROVIDER-000000"


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer(default=Scripted.text_reply(TURN)) as server:
        yield server


def _env(server: WireServer) -> dict[str, str]:
    return {
        "KATACHI_PROVIDER": "openai",
        "KATACHI_MODEL": "wire-model",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": server.openai_base_url,
    }


def _send_knowledge_turn(page, text: str) -> None:  # type: ignore[no-untyped-def]
    box = page.get_by_test_id("stChatInputTextArea")
    box.fill(text)
    box.press("Enter")
    wait_idle(page)


def _chat_posts(server: WireServer) -> list:  # type: ignore[type-arg]
    return [r for r in server.requests if r.method == "POST" and r.path.endswith("/chat/completions")]


def test_the_configured_provider_answers_the_first_session_and_after_a_restart(  # type: ignore[no-untyped-def]
    browser, wire, tmp_path
):
    app = AppServer(tmp_path, env=_env(wire))
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{app.url}/knowledge")  # a deep link is the very first thing this server sees
        wait_idle(page)
        sidebar = page.get_by_test_id("stSidebar").inner_text()
        assert "デモモデル（オフライン）" not in sidebar and "OpenAI・互換サーバー ・ wire-model" in sidebar
        settings = open_settings(page)
        assert "認証情報: 設定済み（値は表示しません）" in settings.inner_text()
        assert (
            settings.get_by_role("combobox", name="プロバイダー").input_value()
            == "openai: OpenAI・互換サーバー"
        )
        page.keyboard.press("Escape")
        _send_knowledge_turn(page, "秘密保持期間を3年に限定されました")
        posts = _chat_posts(wire)
        assert len(posts) == 1 and posts[0].body["model"] == "wire-model"
        assert posts[0].headers["authorization"] == f"Bearer {KEY}"
        assert KEY not in page.content()
        shot(page, "provider-first-session")

        app.stop()  # the same tab stays open and reconnects to the restarted server
        app = AppServer(tmp_path, env=_env(wire), port=app.port)
        page.reload()  # the same tab, its URL (?interview=...) and browser state, on the restarted server
        wait_idle(page)
        page.get_by_text("LLMに渡した内容と返答（0回の呼び出し）").wait_for()  # a new server session
        assert "デモモデル（オフライン）" not in page.get_by_test_id("stSidebar").inner_text()
        assert open_settings(page).get_by_role("combobox", name="プロバイダー").input_value() == (
            "openai: OpenAI・互換サーバー"
        )
        page.keyboard.press("Escape")
        _send_knowledge_turn(page, "損害賠償の上限も気になります")
        shot(page, "provider-after-restart")
        assert len(_chat_posts(wire)) == 2

        fresh = context.browser.new_context(locale="ja-JP").new_page()  # type: ignore[union-attr]
        fresh.set_default_timeout(30_000)
        fresh.goto(f"{app.url}/knowledge")
        wait_idle(fresh)
        _send_knowledge_turn(fresh, "別の担当者からの相談です")
        assert len(_chat_posts(wire)) == 3
        fresh.context.close()
    finally:
        context.close()
        app.stop()


HOSTILE = (
    '<img src="http://127.0.0.1:{port}/pixel?raw_html=1">'
    "<script>fetch('http://127.0.0.1:{port}/pixel?script=1')</script>"
    "![x](http://127.0.0.1:{port}/pixel?md_image=1) 本文です。"
)


def test_a_raw_html_reply_is_shown_as_text_and_fetches_nothing(browser, wire, tmp_path):  # type: ignore[no-untyped-def]
    hostile = HOSTILE.format(port=wire.port)
    wire.default = Scripted.text_reply(hostile)
    app = AppServer(tmp_path, env=_env(wire))
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{app.url}/review_chat")
        wait_idle(page)
        box = page.get_by_test_id("stTextArea").locator("textarea")
        box.fill("§3 の評価は？")
        page.get_by_role("button", name="送信").click()
        wait_idle(page)
        page.wait_for_timeout(1000)
        shot(page, "provider-raw-html-reply")
        assert not [r for r in wire.requests if r.method == "GET"], "the browser fetched what the model wrote"
        assert page.locator("img[src*='pixel']").count() == 0
        assert page.locator("script", has_text="pixel").count() == 0
        assert "<img src=" in page.get_by_test_id("stChatMessage").last.inner_text()
    finally:
        context.close()
        app.stop()
