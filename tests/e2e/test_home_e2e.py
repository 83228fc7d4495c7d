"""Browser: the home page's demo cards line up — the two cards of a row are equally tall."""

import pytest

from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e

CARDS = """() => [...document.querySelectorAll('[data-testid="stVerticalBlock"]')]
  .filter((e) => getComputedStyle(e).borderStyle !== 'none' && e.querySelector('h4'))
  .map((e) => { const r = e.getBoundingClientRect();
                return [e.querySelector('h4').innerText, Math.round(r.top), Math.round(r.height)]; })"""


@pytest.mark.parametrize("viewport", [(1400, 900), (1280, 720)])
def test_demo_cards_in_a_row_are_equally_tall(browser, app_url, viewport):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale="ja-JP")
    page = context.new_page()
    page.goto(app_url)
    wait_idle(page)
    cards = page.evaluate(CARDS)
    assert [title for title, _, _ in cards] == [
        "ナレッジ聞き取り",
        "答案レビュー・チャット",
        "コンパニオン記憶",
        "車両診断",
    ]
    rows: dict[int, set[int]] = {}
    for _, top, height in cards:
        rows.setdefault(top, set()).add(height)
    assert len(rows) == 2, cards
    assert all(len(heights) == 1 for heights in rows.values()), cards
    assert "使用中のプロバイダー デモモデル" in page.get_by_test_id("stMain").inner_text()
    shot(page, f"home-cards-{viewport[0]}")
    context.close()
