"""Browser: choice buttons, the rewind slider, the booking form of the diagnosis page; screenshots."""

import re

import pytest

from tests.e2e.helpers import open_page, shot, wait_idle

pytestmark = pytest.mark.e2e


def click(page, name: str) -> None:  # type: ignore[no-untyped-def]
    page.locator("button").filter(has_text=name).first.click()
    wait_idle(page)


def see(page, text: str) -> None:  # type: ignore[no-untyped-def]
    """Wait for visible text (the collapsed LLM I/O expander holds hidden copies of the replies)."""
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text)


def test_choices_rewind_and_booking(page, app_url):  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page, app_url, "車両診断")
    main = page.get_by_test_id("stMain")
    main.get_by_role("heading", name="車両診断").wait_for()
    shot(page, "diagnosis-vehicle")
    click(page, "デモを読み込む（警告灯の問診）")
    see(page, "いちばん近いものはどれですか")
    assert "Traceback" not in page.content()
    shot(page, "diagnosis-first-question")
    click(page, "エンジン警告灯")
    see(page, "どんなときですか")
    click(page, "走行中")
    see(page, "本日中の来場をおすすめします")
    # the rewind panel sits above the conversation (never under the chat input): open it, move the slider from
    # turn 3 to turn 2 with the keyboard, then confirm
    page.get_by_text("やり直し: 前の質問に戻って、別の回答を試す").click()
    wait_idle(page)
    slider = page.get_by_role(
        "slider"
    ).last  # the rewind slider (the sidebar's slider is in its closed popover)
    slider.focus()
    slider.press("ArrowLeft")
    wait_idle(page)
    see(page, "ターン2の質問: （デモ）取扱説明書では次の項目が関係しそうです。")
    see(page, "そのときの回答: エンジン警告灯")
    shot(page, "diagnosis-slider-moved")
    click(page, "ターン2の質問に戻る")
    see(page, "ターン2の質問に戻りました")
    assert "来店予約をする" not in page.inner_text("body")
    shot(page, "diagnosis-rewound")
    click(page, "エンジン警告灯")
    click(page, "走行中")
    see(page, "本日中の来場をおすすめします")
    shot(page, "diagnosis-reservation")
    click(page, "来店予約をする")
    page.get_by_label("お名前（必須）").fill("山田 太郎")
    page.get_by_label("電話番号（必須）").fill("12-34")
    # the date is picked on a calendar (年/月/日, tomorrow by default), the time from the opening hours
    day = page.get_by_role("group", name="来店希望日（必須）")
    parts = [
        day.get_by_role("spinbutton", name=f"{part}, 来店希望日（必須）") for part in ("year", "month", "day")
    ]
    year, month, date = (int(p.get_attribute("aria-valuenow") or 0) for p in parts)
    assert re.fullmatch(r"\d{4}/\d{2}/\d{2}", day.inner_text().replace("\n", "").strip()), day.inner_text()
    picked = f"{year:04d}-{month:02d}-{date:02d}"
    # open the time box, type to narrow its list (it draws only the options in view) and click the one option
    # left, then wait until the box holds it (wait_idle let the page finish scrolling: a scroll shuts the list)
    page.get_by_role("combobox", name="来店希望時刻（必須）").click()
    page.keyboard.type("14:30")
    page.get_by_role("option", name="14:30", exact=True).click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=stSelectbox]')]"
        ".some(b => b.innerText.includes('来店希望時刻') && b.querySelector('input')?.value === '14:30')"
    )
    wait_idle(page)
    click(page, "入力内容を確認する")
    see(page, "電話番号の形式が正しくありません")
    shot(page, "diagnosis-form-errors")
    page.get_by_label("電話番号（必須）").fill("090-1234-5678")
    click(page, "入力内容を確認する")
    see(page, "予約内容の確認")
    see(page, picked + " 14:30")
    shot(page, "diagnosis-confirm")
    click(page, "この内容で予約する")
    see(page, "来店予約を承りました")
    shot(page, "diagnosis-done")


def test_free_input_choice_puts_the_cursor_in_the_chat_input(page, app_url):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "車両診断")
    click(page, "デモを読み込む（警告灯の問診）")
    see(page, "いちばん近いものはどれですか")
    click(page, "自由入力")
    see(page, "画面下の入力欄に")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.getAttribute('data-testid') === 'stChatInputTextArea'"
    )
    page.keyboard.type("メーターの左側が黄色く光っています")
    assert "黄色く光って" in page.get_by_test_id("stChatInputTextArea").input_value()


EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f]")


def test_urgent_banner_icon_is_a_material_icon_not_an_emoji(page, app_url):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "車両診断")
    click(page, "この車両で問診を始める")
    click(page, "はい、この車両です")
    page.get_by_test_id("stChatInputTextArea").fill("ブレーキが効かない")
    page.get_by_test_id("stChatInputTextArea").press("Enter")
    wait_idle(page)
    banner = page.get_by_test_id("stAlertContentError").filter(
        has_text="今すぐロードサービスまたは来場が必要です"
    )
    banner.wait_for()
    alert = page.get_by_test_id("stAlert").filter(has=banner)
    icon = alert.get_by_test_id("stAlertDynamicIcon")
    assert icon.count() == 1 and icon.inner_text() == "report"  # a ligature of the Material Symbols font
    assert "Material Symbols" in icon.evaluate("e => getComputedStyle(e).fontFamily")
    width = icon.evaluate("e => e.getBoundingClientRect().width")
    assert 12 <= width <= 40, width  # drawn as one glyph (the word "report" in a text font would be wider)
    main_text = page.get_by_test_id("stMain").inner_text()
    assert not EMOJI.findall(main_text), EMOJI.findall(main_text)  # no emoji anywhere on the page
    labels = [b.inner_text() for b in page.get_by_test_id("stMain").locator("button").all()]
    assert any("出張・ロードサービスを手配する" in label for label in labels)
    struck = page.get_by_test_id("stMain").locator("del, s").all_inner_texts()
    assert "仕様確認" in struck and "緊急度" not in struck  # urgency was judged: passed, not struck out
    shot(page, "diagnosis-urgent-banner")
