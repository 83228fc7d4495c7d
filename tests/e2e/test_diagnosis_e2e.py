"""Browser: choice buttons, the rewind slider, the booking form of the diagnosis page; screenshots."""

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
    # move the rewind slider from turn 3 to turn 2 with the keyboard, then confirm
    slider = page.get_by_role("slider").last  # the sidebar has the fault-injection slider first
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
    click(page, "🚗 来店予約をする")
    page.get_by_label("お名前（必須）").fill("山田 太郎")
    page.get_by_label("電話番号（必須）").fill("12-34")
    page.get_by_role("textbox", name="来店希望日時（必須）").fill("2020-01-01 10:00")
    click(page, "入力内容を確認する")
    see(page, "電話番号の形式が正しくありません")
    see(page, "現在より後の日時")
    shot(page, "diagnosis-form-errors")
    page.get_by_label("電話番号（必須）").fill("090-1234-5678")
    page.get_by_role("textbox", name="来店希望日時（必須）").fill("2099-01-10 10:00")
    click(page, "入力内容を確認する")
    see(page, "予約内容の確認")
    shot(page, "diagnosis-confirm")
    click(page, "この内容で予約する")
    see(page, "来店予約を承りました")
    shot(page, "diagnosis-done")


def test_free_input_choice_puts_the_cursor_in_the_chat_input(page, app_url):  # type: ignore[no-untyped-def]
    open_page(page, app_url, "車両診断")
    click(page, "デモを読み込む（警告灯の問診）")
    see(page, "いちばん近いものはどれですか")
    click(page, "✏️ 自由入力")
    see(page, "画面下の入力欄に")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.getAttribute('data-testid') === 'stChatInputTextArea'"
    )
    page.keyboard.type("メーターの左側が黄色く光っています")
    assert "黄色く光って" in page.get_by_test_id("stChatInputTextArea").input_value()
