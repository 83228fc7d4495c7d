"""Browser: the app loads on the demo model, the sidebar shows it, the debug page shows a real call."""

import pytest

from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e


def test_home_loads_on_the_demo_model(page, app_url):
    page.goto(app_url)
    wait_idle(page)
    page.get_by_role("heading", name="Katachi（形）").wait_for()
    sidebar = page.get_by_test_id("stSidebar")
    provider = sidebar.get_by_role("combobox", name="プロバイダー")
    assert provider.input_value() == "demo: デモモデル"
    assert "デモモデル" in page.get_by_test_id("stMain").inner_text()
    assert "Traceback" not in page.content()
    shot(page, "shell-home")


def test_debug_page_opens_and_explains_itself(page, app_url):
    page.goto(app_url)
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("デバッグログ").click()
    wait_idle(page)
    page.get_by_role("heading", name="デバッグログ").wait_for()
    text = page.get_by_test_id("stMain").inner_text()
    assert "まだ記録がありません" in text or "呼び出し一覧" in text
    shot(page, "shell-debug-empty")
