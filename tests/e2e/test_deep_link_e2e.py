"""Browser: a deep link that is a fresh server's very first request still gets the shell and the page."""

import pytest

from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_settings, shot, wait_idle

pytestmark = pytest.mark.e2e


def test_deep_link_as_first_request_goes_through_the_shell(browser, tmp_path):
    server = AppServer(tmp_path)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{server.url}/debug_log?from=link")
        wait_idle(page)
        page.get_by_role("heading", name="デバッグログ").wait_for()
        assert open_settings(page).get_by_role("combobox", name="プロバイダー").is_visible()
        assert "from=link" in page.url and "KeyError" not in page.content()
        shot(page, "shell-deep-link")
        page.close()
    finally:
        server.stop()
