"""Browser: re-run a recorded call on two models of the wire server and see both answers side by side
(the playground at the end of the call detail in the トレース tab); replay a review chat on the demo model
(the リプレイ tab) and see that nothing changed."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.wire_server import Scripted, WireServer
from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e
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
        main = page.get_by_test_id("stMain")
        main.get_by_role("tab", name="トレース", selected=True).wait_for()  # the newest call is chosen
        main.locator(".st-key-debug_tree_view").get_by_text("聞き取りのターン").first.wait_for()
        main.get_by_text("この呼び出しを再実行・比較（プレイグラウンド）").click()
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
        page.get_by_text("再実行の結果（2 件）").wait_for()  # the expander stays open
        headers = main.get_by_test_id("stColumn").locator("strong").filter(has_text="OpenAI")
        assert headers.all_inner_texts() == [
            "現在のクライアント（OpenAI・互換サーバー / wire-a）",
            "OpenAI・互換サーバー / wire-b",
        ]
        assert main.get_by_text("有効（検証を通過）").count() == 2
        costs = main.get_by_test_id("stColumn").get_by_text("コスト 価格未設定", exact=False)
        assert [t.split(" ・ コスト ")[1] for t in costs.all_inner_texts()] == [
            "価格未設定（wire-a）",
            "価格未設定（wire-b）",
        ]
        assert main.get_by_text("（wire-b）リスクを整理しましょう。", exact=False).count() >= 1
        main.get_by_text("再実行の結果（2 件）").evaluate("e => e.scrollIntoView()")  # both columns in view
        page.wait_for_timeout(300)
        shot(page, "debug-rerun-two-models")
    finally:
        context.close()
        app.stop()


def test_replay_a_review_chat_on_the_demo_model_changes_nothing(page, app_url) -> None:  # type: ignore[no-untyped-def]
    open_page(page, app_url, "答案レビュー・チャット")
    main = page.get_by_test_id("stMain")
    for question in ["§11 はどう評価されていますか？", "理由は？"]:
        main.get_by_label("質問").fill(question)
        main.get_by_role("button", name="送信").click()
        wait_idle(page)
    assert main.get_by_text("（デモモデルの応答）").count() >= 2  # one per reply (and its context box)
    page.get_by_test_id("stSidebarNav").get_by_text("デバッグログ").click()
    wait_idle(page)
    main.get_by_role("tab", name="リプレイ").click()
    wait_idle(page)
    conversation = main.get_by_test_id("stSelectbox").filter(has=page.get_by_text("会話", exact=True))
    conversation.get_by_role("combobox").click()
    options = page.get_by_role("option")
    labels = options.all_inner_texts()
    assert (
        len(labels) == 1 and labels[0].startswith("答案レビュー ・ ") and labels[0].endswith("（2 ターン）")
    )
    options.first.click()
    wait_idle(page)
    main.get_by_role("button", name="リプレイ", exact=True).click()
    wait_idle(page)
    summary = "2ターン: 有効 2、修復 0、記録との違い 0ターン"
    main.get_by_text(summary, exact=True).wait_for()
    assert main.get_by_text(f"会話: {labels[0]} ・ 再生したモデル: デモモデル / katachi-demo").is_visible()
    main.get_by_test_id("stDataFrame").last.wait_for()
    shot(page, "debug-replay")
    with page.expect_download() as download:
        main.get_by_role("button", name="表をCSVで保存").click()
    raw = Path(download.value.path()).read_bytes()
    assert raw.startswith("\ufeff".encode())  # UTF-8 with BOM: Excel in Japan reads it as it is
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [(r["ターン"], r["入力"], r["有効（記録→再生）"], r["違い"]) for r in rows] == [
        ("1", "§11 はどう評価されていますか？", "有効→有効", "なし"),
        ("2", "理由は？", "有効→有効", "なし"),
    ]
    assert [r["コスト"] for r in rows] == ["USD 0→USD 0"] * 2  # the demo model's listed price
    main.get_by_role("tab", name="トレース").click()  # a look at another tab keeps the report
    wait_idle(page)
    main.get_by_role("tab", name="リプレイ").click()
    wait_idle(page)
    main.get_by_text(summary, exact=True).wait_for()
    assert "Traceback" not in page.content()
