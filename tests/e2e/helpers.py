"""Browser-test helpers: wait for Streamlit to finish a run, save screenshots."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
SCROLL_PENDING = 'html[data-chat-scroll="pending"]'  # a chat page still scrolling its newest turn into view


def wait_idle(page, timeout: float = 30_000) -> None:  # type: ignore[no-untyped-def]
    """Wait until the app has finished its current script run (after every interaction) and a chat page has
    finished scrolling its newest turn into view (a scroll closes a list box opened meanwhile)."""
    page.wait_for_timeout(150)
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_timeout(100)
    page.wait_for_selector(IDLE, timeout=timeout)
    page.wait_for_selector(SCROLL_PENDING, state="detached", timeout=timeout)


def shot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    """Save a full-page screenshot under artifacts/screenshots/ (git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def open_page(page, app_url: str, title: str) -> None:  # type: ignore[no-untyped-def]
    """Load the app through the shell, then open a page by its sidebar title."""
    page.goto(app_url)
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text(title).click()
    wait_idle(page)


def open_settings(page):  # type: ignore[no-untyped-def]
    """Open the sidebar's 「設定を変更」 popover; its body (rendered outside the sidebar) holds the provider, model,
    DEBUG and fault-injection widgets. Press Escape to close it again."""
    page.get_by_test_id("stSidebar").get_by_role("button", name="設定を変更").click()
    body = page.get_by_test_id("stPopoverBody")
    body.get_by_role("combobox", name="プロバイダー").wait_for()
    return body
