"""Browser: a knowledge-base entry written before text was made safe (U+000B, Word's manual line break, in its
fields; written straight to the table, as an old row) does not take the ナレッジベース tab down for the next
person: the tab works, the Word export downloads and opens, and the entry can be edited and saved."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import docx
import pytest
from sqlalchemy import update

from core.flows.knowledge import interview as kf
from core.people import Person
from core.store import open_store
from core.store.knowledge.entries import KnowledgeBaseRepository, knowledge_entries
from tests.e2e.conftest import AppServer
from tests.e2e.helpers import shot, wait_idle

pytestmark = pytest.mark.e2e

WRITER = Person("yamada", "山田 花子")  # not the person who opens the tab (the app's local person)


@pytest.fixture
def app_with_old_row(tmp_path: Path) -> Iterator[str]:
    engine = open_store(tmp_path)
    entry_id = KnowledgeBaseRepository(engine).save_entry(
        {k: f"{kf.KNOWLEDGE_FIELD_LABELS[k]}の値" for k in kf.KNOWLEDGE_FIELDS}, by=WRITER
    )
    with engine.begin() as conn:  # bypass the sanitizer: a row from before the fix
        conn.execute(
            update(knowledge_entries)
            .where(knowledge_entries.c.id == entry_id)
            .values(
                knowledge_title="改行\x0b入りの題",
                review_points="一行目\x0b二行目\x1b[31m",
                clause_sample="\x00",
            )
        )
    engine.dispose()
    server = AppServer(tmp_path)
    yield server.url
    server.stop()


def test_an_old_entry_with_a_control_character_leaves_the_tab_working(browser, app_with_old_row):  # type: ignore[no-untyped-def]
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000}, locale="ja-JP", accept_downloads=True
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(app_with_old_row)
    wait_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_text("ナレッジ").first.click()
    wait_idle(page)
    page.get_by_role("tab", name="ナレッジベース").click()
    wait_idle(page)
    main = page.get_by_test_id("stMain")
    assert page.get_by_test_id("stException").count() == 0
    with page.expect_download() as download:
        main.get_by_role("button", name="Word（DOCX）").click()
    document = docx.Document(io.BytesIO(Path(download.value.path()).read_bytes()))
    assert document.paragraphs[1].text == "1. 改行\n入りの題"
    assert document.tables[0].cell(2, 1).text == "一行目\n二行目[31m"
    main.get_by_label("確認・編集するナレッジ").click()
    page.get_by_role("option").first.click()
    wait_idle(page)
    main.get_by_role("button", name="アーカイブ").first.wait_for()
    main.get_by_label("対応方針").fill("直した対応方針")
    main.get_by_role("button", name="変更を保存（新しい版）").click()
    wait_idle(page)
    main.get_by_text("第2版として保存しました。制御文字を取り除きました。").wait_for()
    assert page.get_by_test_id("stException").count() == 0
    shot(page, "knowledge-base-old-control-character")
    context.close()
