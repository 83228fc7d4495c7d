"""AppTest: the registration form at the answer's bounds — 1,000 pasted paragraphs preview a page of 50 rows
(never one control per paragraph) and page through; an answer over a bound is refused in Japanese and nothing
is stored."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from core.flows.review_chat.constants import REVIEW_ITEM_CATEGORIES as CATEGORIES
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.review.repository import ReviewRepository
from tests.pages.conftest import make_app
from tests.pages.test_review_material_page import click, successes
from tests.pages.test_review_page import run

PAGE = "pages/review_chat.py"


def answer(paragraphs: int) -> str:
    """`paragraphs` two-line paragraphs, a blank line between them (each row gets 結合, a split line and 分割)."""
    return "\n\n".join(f"第{n}段落の一行目。\n第{n}段落の二行目。" for n in range(1, paragraphs + 1))


def keys(at: AppTest, prefix: str) -> list[str]:
    return [b.key for b in at.button if b.key and b.key.startswith(prefix)]


def numbers(at: AppTest, prefix: str) -> list[int]:
    return [int(k.removeprefix(prefix)) for k in keys(at, prefix)]


def open_form(tmp_path, text: str) -> AppTest:  # type: ignore[no-untyped-def]
    at = make_app(tmp_path, page=PAGE)
    click(at, "review_register")
    at.text_input(key="review_form_title").input("上限の答案")
    at.text_area(key="review_form_question").input("問題文です。")
    at.text_area(key="review_form_overall").input("全体講評です。")
    at.text_area(key="review_form_answer").input(text)
    return run(at)


def stored_titles(tmp_path) -> list[str]:  # type: ignore[no-untyped-def]
    repo = ReviewRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id)
    return [r["title"] for r in repo.list_reviews() if r["sample_key"] is None]  # own reviews, not the sample


def test_a_thousand_paragraphs_preview_one_page_of_fifty_and_page_through(tmp_path) -> None:  # type: ignore[no-untyped-def]
    started = time.monotonic()
    at = open_form(tmp_path, answer(1_000))
    assert len(at.session_state["review_form_paragraphs"]) == 1_000
    assert "**段落のプレビュー（§1～§1000）**" in [m.value for m in at.markdown]
    pager = at.selectbox(key="review_form_preview_page")
    assert pager.label == "表示する段落" and len(pager.options) == 20
    assert (
        pager.options[0] == "§1～§50（全 1,000 段落）" and pager.options[-1] == "§951～§1000（全 1,000 段落）"
    )
    assert pager.value == 0
    # one page of rows: 50 結合 and 50 分割 buttons, 50 split-line choices — not one set per paragraph
    assert numbers(at, "review_form_merge_") == list(range(1, 51))
    assert numbers(at, "review_form_split_") == list(range(1, 51))
    assert len([s for s in at.selectbox if (s.key or "").startswith("review_form_split_line_")]) == 50
    others = [
        b.key for b in at.button if not (b.key or "").startswith(("review_form_merge_", "review_form_split_"))
    ]
    assert others == [*(f"review_form_add_{c}" for c in CATEGORIES), "review_form_save", "review_form_cancel"]
    assert len(at.button) == 106  # 50 + 50 + 6, whatever the answer's length
    assert "第1段落の一行目。  \n第1段落の二行目。" in [m.value for m in at.markdown]
    assert not any("第51段落" in m.value for m in at.markdown)

    pager.set_value(19)
    run(at)
    assert numbers(at, "review_form_merge_") == list(
        range(951, 1_000)
    )  # §1000 is last: nothing to merge with
    assert numbers(at, "review_form_split_") == list(range(951, 1_001))
    assert any(m.value.startswith("第1000段落の一行目。") for m in at.markdown)
    assert not any(m.value.startswith("第950段落") for m in at.markdown)

    click(at, "review_form_merge_999")  # the controls on a later page act on their own paragraph
    paragraphs = at.session_state["review_form_paragraphs"]
    assert len(paragraphs) == 999
    assert (
        paragraphs[-1]
        == "第999段落の一行目。\n第999段落の二行目。\n第1000段落の一行目。\n第1000段落の二行目。"
    )
    assert "**段落のプレビュー（§1～§999）**" in [m.value for m in at.markdown]
    assert at.selectbox(key="review_form_preview_page").value == 19  # still the last page (§951～§999)
    assert at.selectbox(key="review_form_preview_page").options[-1] == "§951～§999（全 999 段落）"

    click(at, "review_form_save")
    assert "「上限の答案」を登録しました。" in successes(at)
    assert stored_titles(tmp_path) == ["上限の答案"]
    assert time.monotonic() - started < 60  # generous for a shared machine; the bench row has the real time


def test_an_answer_over_the_paragraph_bound_is_refused_in_japanese_and_nothing_is_saved(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = open_form(tmp_path, answer(1_001))
    message = "答案の段落が多すぎます（1,001 段落。上限は 1,000 段落です）。段落の区切りを確認するか、分けて登録してください。"
    assert [e.value for e in at.error] == [message]
    assert at.session_state["review_form_paragraphs"] == []
    assert "**段落のプレビュー**" in [m.value for m in at.markdown]
    assert keys(at, "review_form_merge_") == [] and not [
        s for s in at.selectbox if s.key == "review_form_preview_page"
    ]
    assert "答案の上限: 200,000 文字・1,000 段落。" in [c.value for c in at.caption]

    click(at, "review_form_save")
    assert [e.value for e in at.error] == [
        message,
        f"保存できませんでした。次の点を直してください。\n\n- {message}",
    ]
    assert not successes(at) and at.session_state["review_form_mode"] == "new"
    assert stored_titles(tmp_path) == []


def test_an_answer_over_the_character_bound_is_refused_in_japanese_and_nothing_is_saved(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = open_form(tmp_path, "あ" * 200_001)
    message = "答案が長すぎます（200,001 文字。上限は 200,000 文字です）。分けて登録してください。"
    assert [e.value for e in at.error] == [message]
    assert at.session_state["review_form_paragraphs"] == []
    click(at, "review_form_save")
    assert [e.value for e in at.error] == [
        message,
        f"保存できませんでした。次の点を直してください。\n\n- {message}",
    ]
    assert stored_titles(tmp_path) == []

    at.text_area(key="review_form_answer").input("あ" * 200_000)  # at the bound: one paragraph, saved
    run(at)
    assert len(at.session_state["review_form_paragraphs"]) == 1
    # the preview's message is gone; the last 保存's summary stays until the next 保存, as for every field
    assert [e.value for e in at.error] == [f"保存できませんでした。次の点を直してください。\n\n- {message}"]
    click(at, "review_form_save")
    assert "「上限の答案」を登録しました。" in successes(at)
    assert stored_titles(tmp_path) == ["上限の答案"]
