"""Browser: after 送信 the newest turn is in view — inside the chat box and inside the window."""

import contextlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from pages.ui.shell import chat_scroll
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e

MAIN = '[data-testid="stMainBlockContainer"]'
HEADER_PX = 60  # Streamlit's fixed header covers the top of the window

# Where the newest reply's first line is: in the window, and (review) in the scrolled chat box.
NEWEST_REPLY = """(selector) => {
  const scope = document.querySelector(selector);
  const messages = [...scope.querySelectorAll('[data-testid="stChatMessage"]')].filter((m) => m.offsetParent);
  const last = messages[messages.length - 1];
  let box = last.parentElement;
  while (box && !(/(auto|scroll)/.test(getComputedStyle(box).overflowY) && box.scrollHeight > box.clientHeight + 1)) {
    box = box.parentElement;
  }
  const r = last.getBoundingClientRect(), b = box.getBoundingClientRect();
  return {count: messages.length, top: r.top, boxTop: b.top, boxBottom: b.bottom,
          scrollTop: box.scrollTop, scrollHeight: box.scrollHeight, windowHeight: window.innerHeight,
          text: last.innerText};
}"""


def newest_reply_visible(page, selector: str, count: int) -> dict:  # type: ignore[no-untyped-def]
    """Wait (up to 3 s, the page settles its scroll after drawing) until the newest of `count` messages starts
    inside both the box that scrolls it and the window; return where it is."""
    check = f"""() => {{ const p = ({NEWEST_REPLY})({selector!r});
      return p.count === {count} && p.top >= Math.max(p.boxTop, {HEADER_PX}) - 1
        && p.top < Math.min(p.boxBottom, p.windowHeight) - 40; }}"""
    with contextlib.suppress(PlaywrightTimeout):  # the assertions below say where it was
        page.wait_for_function(check, timeout=3_000)
    return page.evaluate(f"() => ({NEWEST_REPLY})({selector!r})")


@pytest.mark.parametrize("viewport", [(1400, 900), (1280, 720)])
def test_review_newest_answer_is_in_view_after_send(browser, app_url, viewport):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="ja-JP")
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(app_url)
    wait_idle(page)
    page.locator(".st-key-home_demo_review button").click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    for turn, (question, heading) in enumerate(
        [
            ("§7 はどう評価されていますか？", "§7 の記述"),
            ("§11 の書き方はどう直せばよいですか？", "§11 の記述"),
        ],
        start=2,
    ):
        main.get_by_label("質問").fill(question)
        main.get_by_role("button", name="送信").click()
        wait_idle(page)
        where = newest_reply_visible(page, ".st-key-review_chat_box", 2 * turn)
        assert heading in where["text"], where
        assert where["scrollHeight"] > where["boxBottom"] - where["boxTop"], where  # the box does scroll
        assert where["scrollTop"] > 0, where
        assert max(where["boxTop"], HEADER_PX) - 1 <= where["top"] < where["boxBottom"] - 40, where
        assert where["top"] < where["windowHeight"] - 40, where
    shot(page, f"review-newest-answer-in-view-{viewport[0]}")
    context.close()


def test_knowledge_newest_reply_is_in_view_after_a_demo_answer(page, app_url):  # type: ignore[no-untyped-def]
    page.goto(app_url)
    wait_idle(page)
    page.locator(".st-key-home_demo_knowledge button").click()
    wait_idle(page)
    for sent in (2, 3):
        page.locator(".st-key-knowledge_demo_next button").click()
        wait_idle(page)
        where = newest_reply_visible(page, MAIN, 2 * sent)
        assert where["count"] == 2 * sent, where
        assert HEADER_PX - 1 <= where["top"] < where["windowHeight"] - 40, where
    shot(page, "knowledge-newest-reply-in-view")


def test_diagnosis_newest_question_is_in_view_after_a_choice(browser, app_url):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="ja-JP")
    page = context.new_page()
    page.set_default_timeout(30_000)
    open_page(page, app_url, "車両診断")
    page.locator("button").filter(has_text="デモを読み込む（警告灯の問診）").first.click()
    wait_idle(page)
    before = page.evaluate(f"() => ({NEWEST_REPLY})({MAIN!r}).count")
    page.locator("button").filter(has_text="エンジン警告灯").first.click()
    wait_idle(page)
    where = newest_reply_visible(page, MAIN, before + 2)
    assert where["count"] == before + 2, where
    assert HEADER_PX - 1 <= where["top"] < where["windowHeight"] - 40, where
    shot(page, "diagnosis-newest-question-in-view")
    context.close()


# The scroll script alone, on a page of our own: a run that goes on after the first passes (a busy server)
# and Streamlit's own late scroll to the bottom must not leave the newest turn out of view.
TURN_PAGE = """<!doctype html><html><body style="margin:0">
<div data-testid="stApp" %(state)s><div data-testid="stMainBlockContainer">
  <div data-testid="stChatMessage" style="height:700px"><span data-testid="stChatMessageAvatarUser"></span>q1</div>
  <div data-testid="stChatMessage" style="height:700px">a1</div>
  <div data-testid="stChatMessage" style="height:100px"><span data-testid="stChatMessageAvatarUser"></span>q2</div>
  <div data-testid="stChatMessage" style="height:900px">a2</div>
  <div style="height:600px">below the chat</div>
</div></div>%(script)s</body></html>"""
NEWEST_QUESTION_TOP = (
    "() => document.querySelectorAll('[data-testid=\"stChatMessage\"]')[2].getBoundingClientRect().top"
)


def turn_page(browser, state: str):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_content(TURN_PAGE % {"state": state, "script": chat_scroll.script(MAIN, 4)})
    return page


def test_the_scroll_script_makes_its_last_passes_after_the_app_has_finished_its_run(browser):  # type: ignore[no-untyped-def]
    page = turn_page(browser, 'data-test-script-state="running"')
    page.wait_for_timeout(
        900
    )  # the first passes, while the app still runs: the newest question under the header
    assert page.evaluate(NEWEST_QUESTION_TOP) == chat_scroll.HEADER_PX + chat_scroll.MARGIN_PX
    page.evaluate(
        "() => window.scrollTo(0, document.documentElement.scrollHeight)"
    )  # Streamlit's late scroll
    page.wait_for_timeout(600)
    assert (
        page.evaluate("() => document.documentElement.dataset.chatScroll") == "pending"
    )  # still waiting for the run
    assert page.evaluate(NEWEST_QUESTION_TOP) < 0
    page.evaluate(
        """() => document.querySelector('[data-testid="stApp"]').dataset.testScriptState = 'notRunning'"""
    )
    page.wait_for_selector('html[data-chat-scroll="settled"]', timeout=5_000)
    assert page.evaluate(NEWEST_QUESTION_TOP) == chat_scroll.HEADER_PX + chat_scroll.MARGIN_PX
    page.close()


def test_the_scroll_script_settles_on_a_page_that_is_not_running(browser):  # type: ignore[no-untyped-def]
    page = turn_page(browser, 'data-test-script-state="notRunning"')
    page.wait_for_selector('html[data-chat-scroll="settled"]', timeout=5_000)
    assert page.evaluate(NEWEST_QUESTION_TOP) == chat_scroll.HEADER_PX + chat_scroll.MARGIN_PX
    page.close()
