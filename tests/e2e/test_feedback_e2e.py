"""Browser: rate a review-chat reply 👎 with a comment, reload the page, the rating is still there."""

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e

COMMENT = "§11 ではなく §12 の講評を引用しています"
REPLY = "改善点: 絶対的構成の理由づけが薄い"
FIELD = "この返答について気づいたこと"


def test_a_thumb_and_comment_survive_a_reload(page, app_url):  # type: ignore[no-untyped-def]
    page.goto(app_url)
    wait_idle(page)
    page.locator(".st-key-home_demo_review button").click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    main.get_by_test_id("stChatMessage").get_by_text(REPLY).wait_for()
    wait_idle(page)  # the page scrolls the newest turn into view up to 600 ms after drawing it
    thread = page.url.split("review_thread=")[1]
    key = f"feedback_review_{thread}_1"
    down = main.locator(f".st-key-{key}_thumb").get_by_role("radio", name="Thumbs down")
    expect(down).to_have_attribute("aria-checked", "false")
    down.click()
    wait_idle(page)
    main.get_by_text("評価を保存しました").wait_for()
    main.locator(f".st-key-{key}_popover").get_by_role("button", name="コメント（任意）").click()
    box = page.get_by_test_id("stPopoverBody").get_by_label(FIELD)
    box.fill(COMMENT)
    box.press("Enter")  # applies the text (a rerun of this reply's fragment); the popover stays open
    wait_idle(page)
    main.get_by_text("評価を保存しました").wait_for(state="detached")  # the thumb's notice is shown once
    page.get_by_role("button", name="評価を保存").click()
    wait_idle(page)
    main.get_by_text("評価を保存しました").wait_for()

    page.reload()
    wait_idle(page)
    main.get_by_test_id("stChatMessage").get_by_text(REPLY).wait_for()
    thumbs = main.locator(f".st-key-{key}_thumb")
    expect(thumbs.get_by_role("radio", name="Thumbs down")).to_have_attribute("aria-checked", "true")
    expect(thumbs.get_by_role("radio", name="Thumbs up")).to_have_attribute("aria-checked", "false")
    main.locator(f".st-key-{key}_popover").get_by_role("button", name="コメント（任意）").click()
    expect(page.get_by_test_id("stPopoverBody").get_by_label(FIELD)).to_have_value(COMMENT)
    assert "Traceback" not in page.content()
    shot(page, "feedback")
