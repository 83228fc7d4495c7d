"""Browser: on the debug page's 「呼び出し一覧」, the 「詳細を見る呼び出し」 list follows the filters — a call the
filters hide is never left on the list while the detail below shows another (one source of truth)."""

from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core.debuglog.events import events_to_jsonl
from tests.debug_logs import sample_log
from tests.e2e.helpers import open_page, shot, wait_idle
from tests.e2e.test_debug_e2e import choose

pytestmark = pytest.mark.e2e


def picked(page) -> str:  # type: ignore[no-untyped-def]
    return page.get_by_role("combobox", name="詳細を見る呼び出し").input_value()


def heading(page) -> str:  # type: ignore[no-untyped-def]
    """The chosen call's detail heading: 「step ／ flow ／ result」."""
    return page.get_by_test_id("stMain").locator("h4").filter(has_text="／").first.inner_text()


def test_the_call_picker_follows_the_filter(page, app_url, tmp_path: Path):  # type: ignore[no-untyped-def]
    log = tmp_path / "katachi-debug.jsonl"
    log.write_text(events_to_jsonl(sample_log()), encoding="utf-8")
    open_page(page, app_url, "デバッグログ")
    main = page.get_by_test_id("stMain")
    main.get_by_text("エクスポートしたログを読み込む（JSONL）").click()
    main.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(log))
    wait_idle(page)
    main.get_by_text("読み込んだログ「katachi-debug.jsonl」（12 件）を表示しています。").wait_for()
    main.get_by_role("tab", name="呼び出し一覧").click()
    wait_idle(page)
    main.get_by_text("詳細を見る呼び出し", exact=True).wait_for()
    shot(page, "debug-picker-all")
    first = next(o for o in page_options(page) if "ナレッジ聞き取り" in o)
    choose(page, "詳細を見る呼び出し", first)
    assert picked(page) == first and "ナレッジ聞き取り" in heading(page)
    # filter to the review chat: the knowledge call is gone from the table, so it leaves the list too
    main.get_by_test_id("stButtonGroup").filter(has=page.get_by_text("答案レビュー")).first.get_by_text(
        "答案レビュー", exact=True
    ).click()
    wait_idle(page)
    shot(page, "debug-picker-filtered")
    now = picked(page)
    assert "答案レビュー" in now and "ナレッジ聞き取り" not in now
    assert "答案レビュー" in heading(page)
    assert all("答案レビュー" in o for o in page_options(page))


def page_options(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The options of 「詳細を見る呼び出し」 (opens and closes the list)."""
    box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("詳細を見る呼び出し", exact=True))
    options = page.get_by_role("option")
    for _ in range(3):  # a rerun that is just finishing can close a list that opened at once
        box.get_by_role("combobox").click()
        try:
            options.first.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            wait_idle(page)
    texts = options.all_inner_texts()
    page.keyboard.press("Escape")
    wait_idle(page)
    return texts
