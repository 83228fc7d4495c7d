"""Browser: load sample memories, chat once, filter a table, follow a provenance link; screenshots."""

import re

import pytest

from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def test_samples_filter_and_provenance(page, app_url):  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1400, "height": 1000})
    open_page(page, app_url, "コンパニオン記憶")
    main = page.get_by_test_id("stMain")
    main.get_by_role("heading", name="コンパニオン記憶").wait_for()
    main.get_by_role("button", name="サンプル記憶を読み込む").click()
    wait_idle(page, timeout=120_000)
    main.get_by_text(re.compile(r"サンプル記憶を \d+ 件読み込みました")).first.wait_for()
    assert "Traceback" not in page.content()
    # one chat turn
    page.get_by_test_id("stChatInputTextArea").fill(
        "同僚の田中さんとまたラーメンを食べたよ。来週は締切で不安。"
    )
    page.keyboard.press("Enter")
    wait_idle(page, timeout=60_000)
    main.get_by_text("このターンの記憶").first.wait_for()
    main.get_by_text("このターンの記憶").first.click()
    wait_idle(page)
    shot(page, "memory-chat")
    # browser tab: facts filtered by tag-free entity filter and a text tag on episodes
    main.get_by_role("tab", name="記憶ブラウザ").click()
    wait_idle(page)
    main.get_by_label("タグを含む").fill("ラーメン")
    main.get_by_label("タグを含む").press("Enter")
    wait_idle(page)
    shot(page, "memory-browser-tag-typed")
    caption = main.get_by_text(re.compile(r"\d+ 件中 \d+ 件を表示")).first
    total = int(re.match(r"(\d+)", caption.inner_text()).group(1))
    assert 0 < total < 201
    shot(page, "memory-browser-filtered")
    main.get_by_label("タグを含む").fill("")
    main.get_by_label("タグを含む").press("Enter")
    wait_idle(page)
    main.get_by_role("radio", name="事実", exact=True).click()
    wait_idle(page)
    # choose the first fact in "詳細を見る記憶"
    main.get_by_test_id("stSelectbox").filter(has_text="詳細を見る記憶").click()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    wait_idle(page)
    main.get_by_text("出どころ（根拠のエピソード）").wait_for()
    link = main.get_by_role("button", name=re.compile(r"→ エピソード #\d+")).first
    target = re.search(r"#(\d+)", link.inner_text()).group(1)
    link.click()
    wait_idle(page)
    main.get_by_text(re.compile(rf"#{target} エピソード")).first.wait_for()
    main.get_by_text("灯の感情の推移").scroll_into_view_if_needed()
    shot(page, "memory-provenance")
    # search test tab
    main.get_by_role("tab", name="検索テスト").click()
    wait_idle(page)
    main.get_by_label("検索したい発話").fill("締切の話、覚えてる？")
    main.get_by_role("button", name="検索する").click()
    wait_idle(page)
    main.get_by_text("スコア表").first.wait_for()
    shot(page, "memory-search-test")
    assert "Traceback" not in page.content()
