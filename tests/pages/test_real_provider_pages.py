"""AppTest with the real SDK clients against a local wire-format server: pages work beyond the demo model."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.flows.chat_item import meta
from core.settings import Settings
from tests.core.wire_server import Scripted, WireServer
from tests.pages.conftest import APP

TURN = json.dumps(
    {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": ["契約書の種類"]},
        "assistant_message": "契約書の種類を教えてください。",
        "knowledge_json": None,
    },
    ensure_ascii=False,
)


def app_on(settings: Settings, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = settings
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception
    return at


def test_knowledge_turn_through_openai_sdk_with_strict_schema(tmp_path):
    with WireServer(default=Scripted.text_reply(TURN)) as server:
        settings = Settings(
            "openai", "gpt-test", server.openai_base_url, "sk-test-PAGE-000000", None, tmp_path
        )
        at = app_on(settings, "pages/knowledge.py")
        assert at.session_state["llm_client"].provider == "openai"
        at.chat_input(key="knowledge_input").set_value("秘密保持期間を3年に限定されました").run()
        assert not at.exception
        body = server.last.body
        assert body["model"] == "gpt-test"
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["name"] == "ContractReviewKnowledgeTurn"
        assert body["messages"][-1] == {
            "role": "user",
            "content": "ユーザー指示:\n秘密保持期間を3年に限定されました",
        }
        assert any("契約書の種類を教えてください。" in m.value for m in at.markdown)
        assert all("sk-test-PAGE" not in str(e.to_dict()) for e in at.session_state["debug_logs"])


def test_provider_rate_limit_is_a_japanese_message_and_keeps_the_input(tmp_path):
    with WireServer() as server:
        server.enqueue(Scripted.error(429, "Rate limit reached", retry_after=1))
        settings = Settings(
            "openai", "gpt-test", server.openai_base_url, "sk-test-PAGE-000000", None, tmp_path
        )
        at = app_on(settings, "pages/knowledge.py")
        at.chat_input(key="knowledge_input").set_value("相談です").run()
        assert not at.exception
        chat = at.session_state["chat"]["knowledge"]
        assert chat[0]["role"] == "user" and meta(chat[0])["text"] == "相談です"
        shown = "\n".join(e.value for e in [*at.error, *at.markdown, *at.caption])
        assert "429" in shown and "レート制限" in shown


def test_review_reply_streams_through_anthropic_sdk(tmp_path):
    with WireServer(default=Scripted.text_reply("§7 では「第三者」の定義が不足しています。")) as server:
        settings = Settings(
            "anthropic",
            "claude-test",
            None,
            None,
            "sk-ant-test-PAGE-0000",
            tmp_path,
            anthropic_base_url=server.anthropic_base_url,
        )
        at = app_on(settings, "pages/review_chat.py")
        assert at.session_state["llm_client"].provider == "anthropic"
        at.text_area(key="review_draft").input("§7 の問題点は？")
        at.button(key="review_send").click().run()
        assert not at.exception
        body = server.last.body
        assert body["stream"] is True and body["model"] == "claude-test"
        assert isinstance(body["system"], str) and body["messages"][-1]["role"] == "user"
        assert any("第三者" in m.value for m in at.markdown)
