"""Browser: import a prepared debug log, open a conversation's tree, open the repaired call and its
attempt diff; and from a flow page's last-turn expander, follow the link to the turn's tree."""

from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core.debuglog.events import events_to_jsonl
from tests.debug_logs import sample_log
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def choose(page, label: str, option: str) -> None:  # type: ignore[no-untyped-def]
    """Pick `option` in the Streamlit selectbox labelled `label`."""
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text(label, exact=True))
    options = page.get_by_role("option")
    for _ in range(3):  # a rerun that is just finishing can close a list that opened at once
        box.get_by_role("combobox").click()
        try:
            options.first.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            shot(page, "debug-choose-retry")
            wait_idle(page)
    assert option in options.all_inner_texts()
    options.filter(has_text=option).first.click()
    wait_idle(page)


def test_import_a_log_open_the_tree_and_the_repaired_calls_diff(page, app_url, tmp_path: Path):  # type: ignore[no-untyped-def]
    log = tmp_path / "katachi-debug.jsonl"
    log.write_text(events_to_jsonl(sample_log()), encoding="utf-8")
    open_page(page, app_url, "デバッグログ")
    main = page.get_by_test_id("stMain")
    main.get_by_text("エクスポートしたログを読み込む（JSONL）").click()
    main.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(log))
    wait_idle(page)
    main.get_by_text("読み込んだログ「katachi-debug.jsonl」（12 件）を表示しています。").wait_for()
    choose(
        page,
        "会話",
        "ナレッジ聞き取り ・ 09/21 23:13 ・ 「秘密保持契約の審査で迷った事例です。」 — 2 ターン・2 呼び出し",
    )
    tree = main.locator(".st-key-debug_tree_view")
    assert (
        "ターン 1 ・ 1 呼び出し ・ 経過 3,600 ms ・ モデル時間 3,500 ms ・ USD 0.00152" in tree.inner_text()
    )
    assert "ターン 2 ・ 1 呼び出し ・ 経過 800 ms ・ モデル時間 800 ms ・ USD 0.00048" in tree.inner_text()
    choose(page, "詳しく見る呼び出し", "ターン 1 ▸ 聞き取りのターン ・ 試行 2 ・ 成功")
    main.get_by_text("ターン 1 のレイテンシ（ウォーターフォール）").wait_for()
    main.get_by_test_id("stVegaLiteChart").first.wait_for()
    shot(page, "debug-trace")
    diff = main.locator(".st-key-debug_trace_diff")
    diff.scroll_into_view_if_needed()
    text = diff.inner_text()
    assert "失敗した出力（試行 1）" in text and "採用された出力（試行 2）" in text
    assert "ローカル修復: コードブロックの囲みを除去" in text and "変わったJSONパス（5 件）" in text
    assert main.get_by_text("試行 2（修復の返答）: 成功").is_visible()
    diff.screenshot(path=str(shot(page, "debug-diff")))  # the diff alone, readable at full size
    main.get_by_role("tab", name="コストと傾向").click()
    wait_idle(page)
    main.get_by_text("USD 0.0275 ＋ 価格未設定（local-llm）").wait_for()
    main.get_by_text("モデルごとのレイテンシの分布").wait_for()
    shot(page, "debug-costs")
    main.get_by_text("フローごとの費用").evaluate("e => e.scrollIntoView()")
    page.wait_for_timeout(300)
    shot(page, "debug-cost-charts")
    main.get_by_role("tab", name="呼び出し一覧").click()
    wait_idle(page)
    main.get_by_text("メモのある呼び出し").click()
    wait_idle(page)
    shot(page, "debug-calls-with-notes")
    assert "Traceback" not in page.content()


def test_last_turn_link_opens_the_tree_of_that_turn(page, app_url):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "答案レビュー・チャット")
    main = page.get_by_test_id("stMain")
    main.get_by_label("質問").fill("§7 の書き方を教えてください。")
    main.get_by_role("button", name="送信").click()
    wait_idle(page)
    main.get_by_text("（デモモデルの応答）").first.wait_for()
    main.get_by_text("直近のターンでLLMに渡した内容と返答").click()
    shot(page, "debug-last-turn-expander")
    main.get_by_role("link", name="このターンをデバッグログで開く").first.click()
    wait_idle(page)
    page.get_by_role("heading", name="デバッグログ").wait_for()
    assert "flow=review" in page.url
    tree = main.locator(".st-key-debug_tree_view")
    tree.wait_for()
    assert "ターン" in tree.inner_text() and "返答" in tree.inner_text()
    chosen = main.get_by_role("combobox", name="会話").input_value()
    assert chosen.startswith("答案レビュー ・ ")  # the linked flow's conversation is chosen
    shot(page, "debug-deep-link")
