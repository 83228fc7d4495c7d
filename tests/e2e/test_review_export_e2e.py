"""Browser: the review thread downloaded as Word is a document — bold runs, quotes and list paragraphs, not
Markdown marks — and cites every § a question or a reply named."""

import docx
import pytest

from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e


def test_docx_export_has_word_formatting(page, app_url, tmp_path):  # type: ignore[no-untyped-def]
    page.goto(app_url)
    wait_idle(page)
    page.locator(".st-key-home_demo_review button").click()  # asks about §11
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    main.get_by_label("質問").fill(
        "§13 はどう評価されていますか？"
    )  # no item cites §13: the neighbours answer
    main.get_by_role("button", name="送信").click()
    wait_idle(page)
    main.get_by_text("前後の段落（§11、§15）とその講評を示します。", exact=True).wait_for()
    main.get_by_text("このスレッドの名前変更・書き出し・削除").click()
    wait_idle(page)
    with page.expect_download() as download:
        main.get_by_role("button", name="Word（DOCX）で書き出す").click()
    path = tmp_path / "thread.docx"
    download.value.save_as(path)
    document = docx.Document(str(path))
    paragraphs = [(p.style.name if p.style is not None else "", p.text) for p in document.paragraphs]
    texts = [text for _, text in paragraphs]
    assert not [t for t in texts if "**" in t or t.startswith(("> ", "- "))], texts
    cited_at = texts.index("会話で参照した答案の段落")
    cited = [t.split("　")[0] for t in texts[cited_at + 1 : texts.index("会話")]]
    assert cited == ["§10", "§11", "§13", "§15", "§16"]  # asked: §11, §13; quoted by the replies: the rest
    bold = [r.text for p in document.paragraphs for r in p.runs if r.bold]
    assert "§11 の記述" in bold and "改善点: 絶対的構成の理由づけが薄い" in bold
    styles = {style for style, _ in paragraphs}
    assert {"Quote", "List Bullet"} <= styles
    quotes = [t for s, t in paragraphs if s == "Quote"]
    assert quotes[0].startswith("しかし、善意の第三者 C が現れた時点で")
    items = [t for s, t in paragraphs if s == "List Bullet"]
    assert "良い点: 設問2の問題提起（§15、§16） — 登記に公信力がないことから出発し" in "\n".join(items)
    shot(page, "review-docx-export")
