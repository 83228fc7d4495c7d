"""Browser (issue 12): a review reply cut by the token limit shows 「途中で途切れました」 and 「続きを生成」
completes it (the real openai SDK against the local wire server, finish "length"); a diagnosis survives a
page reload (its id in the URL, its state in the store)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.wire_server import Scripted, WireServer
from tests.e2e.conftest import AppServer
from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e

CUT = "講評では、§3 の論述について次のように述"
REST = "べています。結論は妥当ですが、理由づけが薄いと評価されています。"
KEY = "sk-test-E2E-CUT-000000"


@pytest.fixture
def wire() -> Iterator[WireServer]:
    with WireServer(default=Scripted.text_reply(REST)) as server:
        yield server


def see(page, text: str) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text)


def test_a_cut_reply_shows_the_banner_and_continues(browser, wire, tmp_path):  # type: ignore[no-untyped-def]
    wire.enqueue(Scripted.text_reply(CUT, finish="length"))
    env = {
        "KATACHI_PROVIDER": "openai",
        "KATACHI_MODEL": "wire-model",
        "OPENAI_API_KEY": KEY,
        "OPENAI_BASE_URL": wire.openai_base_url,
    }
    app = AppServer(tmp_path, env=env)
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="ja-JP")
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(f"{app.url}/review_chat")
        wait_idle(page)
        page.get_by_test_id("stTextArea").locator("textarea").fill("§3 の評価は？")
        page.get_by_role("button", name="送信").click()
        wait_idle(page)
        see(page, "途中で途切れました")
        shot(page, "review-cut-reply")
        page.get_by_role("button", name="続きを生成").click()
        wait_idle(page)
        see(page, "理由づけが薄いと評価されています")
        assert "途中で途切れました" not in page.get_by_test_id("stMain").inner_text()
        posts = [r for r in wire.requests if r.method == "POST"]
        assert len(posts) == 2
        sent = posts[1].body["messages"]
        assert sent[-2] == {"role": "assistant", "content": CUT} and "続き" in sent[-1]["content"]
        page.reload()  # stored as continued: the thread in the URL comes back whole
        wait_idle(page)
        see(page, "理由づけが薄いと評価されています")
        assert KEY not in page.content() and "Traceback" not in page.content()
        shot(page, "review-continued")
    finally:
        context.close()
        app.stop()


def test_a_diagnosis_survives_a_page_reload(page, app_url):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "車両診断")
    page.locator("button").filter(has_text="デモを読み込む（警告灯の問診）").first.click()
    wait_idle(page)
    see(page, "いちばん近いものはどれですか")
    page.locator("button").filter(has_text="エンジン警告灯").first.click()
    wait_idle(page)
    see(page, "どんなときですか")
    assert "diagnosis=" in page.url
    page.reload()  # a new browser session: the id comes from the URL, the state from the store
    wait_idle(page)
    see(page, "どんなときですか")
    shot(page, "diagnosis-after-reload")
    text = page.inner_text("body")
    assert "エンジン警告灯が点灯した" in text and "お車を選んでください" not in text
    page.locator("button").filter(has_text="走行中").first.click()  # and the interview goes on
    wait_idle(page)
    see(page, "本日中の来場をおすすめします")
