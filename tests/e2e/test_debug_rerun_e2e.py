"""Browser: re-run a recorded call on two models of the wire server and see both answers side by side."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.core.wire_server import Scripted, WireServer
from tests.e2e.conftest import AppServer
from tests.e2e.helpers import shot, wait_idle

KEY = "sk-test-E2E-RERUN-000000"


def turn(phase: str, message: str) -> str:
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": "interview"},
            "state": {"phase": phase, "missing_info": ["契約書の種類"]},
            "assistant_message": message,
            "knowledge_json": None,
        },
        ensure_ascii=False,
    )


def reply_for(body: dict) -> str:  # type: ignore[type-arg]
    if body["model"] == "wire-b":
        return turn("organize_risks", "（wire-b）リスクを整理しましょう。")
    return turn("collect_case", "（wire-a）契約書の種類を教えてください。")


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer(default=Scripted(make_text=reply_for)) as server:
        yield server


def test_rerun_a_call_on_two_models_shows_both_columns(browser, wire, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {
        "KATACHI_PROVIDER": "openai",
        "KATACHI_MODEL": "wire-a",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": wire.openai_base_url,
    }
    app = AppServer(tmp_path, env=env)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{app.url}/knowledge")
        wait_idle(page)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill("秘密保持期間を3年に限定されました")
        box.press("Enter")
        wait_idle(page)
        original = [r.body for r in wire.requests if r.method == "POST"]
        assert [b["model"] for b in original] == ["wire-a"]

        page.get_by_test_id("stSidebarNav").get_by_text("デバッグログ").click()
        wait_idle(page)
        page.get_by_text("再実行と比較（プレイグラウンド）").wait_for()
        system = page.get_by_label("システムプロンプト")
        assert system.input_value() == original[0]["messages"][0]["content"]
        models = page.get_by_role("textbox", name="ほかのモデル名", exact=False)
        models.fill("wire-b")
        models.press("Enter")
        wait_idle(page)
        chooser = page.get_by_test_id("stMultiSelect").filter(has_text="再実行する相手")
        chooser.locator("input").click()
        page.keyboard.type("wire-b")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        wait_idle(page)
        page.get_by_role("button", name="再実行").click()
        wait_idle(page)

        posts = [r.body for r in wire.requests if r.method == "POST"][1:]
        assert sorted(b["model"] for b in posts) == ["wire-a", "wire-b"]
        for body in posts:
            assert {k: v for k, v in body.items() if k != "model"} == {
                k: v for k, v in original[0].items() if k != "model"
            }
        page.get_by_text("再実行の結果（2 件）").wait_for()
        main = page.get_by_test_id("stMain")
        headers = main.get_by_test_id("stColumn").locator("strong").filter(has_text="OpenAI")
        assert headers.all_inner_texts() == [
            "現在のクライアント（OpenAI・互換サーバー / wire-a）",
            "OpenAI・互換サーバー / wire-b",
        ]
        assert main.get_by_text("有効（検証を通過）").count() == 2
        assert main.get_by_text("（wire-b）リスクを整理しましょう。", exact=False).count() >= 1
        page.get_by_text("再実行の結果（2 件）").scroll_into_view_if_needed()
        shot(page, "debug-rerun-two-models")
    finally:
        context.close()
        app.stop()
