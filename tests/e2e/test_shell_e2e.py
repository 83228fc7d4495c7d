"""Browser: the app loads on the demo model, the sidebar shows it, the debug page shows a real call."""

import time
from pathlib import Path

import pytest

from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_page, open_settings, shot, wait_idle

pytestmark = pytest.mark.e2e


def test_home_loads_on_the_demo_model(page, app_url):
    page.goto(app_url)
    wait_idle(page)
    page.get_by_role("heading", name="Katachi（形）").wait_for()
    status = page.get_by_test_id("stSidebar").inner_text()
    assert "デモモデル（オフライン）: APIキー不要で動作します。" in status
    assert "LLM呼び出しの記録: オン ・ 障害注入なし" in status
    assert "デモモデル" in page.get_by_test_id("stMain").inner_text()
    provider = open_settings(page).get_by_role("combobox", name="プロバイダー")
    assert provider.input_value() == "demo: デモモデル"
    assert "Traceback" not in page.content()
    shot(page, "shell-home")


def test_debug_page_opens_and_explains_itself(page, app_url):
    open_page(page, app_url, "デバッグログ")
    page.get_by_role("heading", name="デバッグログ").wait_for()
    text = page.get_by_test_id("stMain").inner_text()
    assert "まだ記録がありません" in text or "呼び出し一覧" in text
    shot(page, "shell-debug-empty")


def test_debug_page_shows_real_calls_and_a_selected_row(page, app_url):
    page.goto(app_url)
    wait_idle(page)
    demos = page.locator("button").filter(has_text="ワンクリックデモ")
    demos.nth(1).click()  # review chat: one streamed reply
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("ホーム").click()
    wait_idle(page)
    demos.nth(0).click()  # knowledge interview: one guarded JSON turn
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("デバッグログ").click()
    wait_idle(page)
    page.get_by_test_id("stMain").get_by_role("tab", name="呼び出し一覧").click()
    wait_idle(page)
    chooser = page.get_by_role("combobox", name="詳細を見る呼び出し")
    assert "ナレッジ聞き取り / 聞き取りのターン" in chooser.input_value()  # newest first
    grid = page.get_by_test_id("stDataFrame").first.bounding_box()
    assert grid is not None
    page.mouse.click(grid["x"] + 12, grid["y"] + 52)  # the selection cell of the first data row
    wait_idle(page)
    assert "答案レビュー / 返答" in chooser.input_value()
    assert "返ってきた生の出力" in page.get_by_test_id("stMain").inner_text()
    shot(page, "shell-debug-row-selected")


def test_the_settings_popover_stays_open_while_its_settings_change(page, app_url):
    """A change inside 「設定を変更」 re-runs the app; the popover stays open (the missing-key warning that a
    provider without a key brings appears below it, not above), and the status line follows at once."""
    page.goto(app_url)
    wait_idle(page)
    settings = open_settings(page)
    slider = settings.get_by_role("slider")
    slider.focus()
    slider.press("ArrowRight")
    wait_idle(page)
    assert settings.is_visible()
    assert "LLM呼び出しの記録: オン ・ 障害注入 10%" in page.get_by_test_id("stSidebar").inner_text()
    settings.get_by_role("combobox", name="プロバイダー").click()
    page.get_by_role("option", name="openai: OpenAI・互換サーバー").click()
    wait_idle(page)
    assert settings.get_by_label("ベースURL（互換サーバー用・任意）").is_visible()
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "OpenAI・互換サーバー ・ gpt-4.1-mini" in sidebar and "APIキーが設定されていません" in sidebar
    shot(page, "shell-settings-open")


def test_launcher_imports_the_first_pages_modules_before_any_visit(tmp_path, browser):  # type: ignore[no-untyped-def]
    """`make run`'s launcher imports numpy and PIL (the icon) and the shell's modules once the server listens, before
    a browser asks for a page: numpy's and PIL's C extensions are mapped into the process with no visit at all."""
    app = AppServer(tmp_path)
    try:
        maps = Path(f"/proc/{app.proc.pid}/maps")
        deadline = time.monotonic() + 30
        while not ("_multiarray_umath" in maps.read_text() and "_imaging" in maps.read_text()):
            assert time.monotonic() < deadline, "the launcher did not import numpy and PIL"
            time.sleep(0.1)
        context = browser.new_context(locale="ja-JP")
        page = context.new_page()
        page.goto(app.url)
        wait_idle(page)
        page.get_by_role("heading", name="Katachi（形）").wait_for()
        context.close()
    finally:
        app.stop()
    log = (tmp_path / "streamlit.log").read_text(encoding="utf-8")
    assert "事前の読み込み" not in log and "Traceback" not in log
