"""Widgets of the review chat page: the answer with § controls, review items, per-turn context info."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.flows.review_chat import CATEGORY_LABELS, REVIEW_ITEM_CATEGORIES, TurnInfo, item_paragraph_numbers
from pages.ui.review.paging import page_range
from pages.ui.shell.render import literal_md

SOURCE_LABELS = {"input": "今回の入力", "carried": "持続", "none": "なし"}
# The question box's built-in English hint ("Press Ctrl+Enter to apply") would be wrong here: Ctrl+Enter sends.
HIDE_APPLY_HINT_CSS = '<style>.st-key-review_draft [data-testid="InputInstructions"] {display: none;}</style>'

Mention = Callable[[int], None]


def add_mention(number: int) -> None:
    """Callback: put `§N` into the message being written (once)."""
    draft = st.session_state.get("review_draft", "") or ""
    tag = f"§{number}"
    if re.search(rf"{re.escape(tag)}(?![0-9])", draft):
        return
    sep = "" if not draft or draft.endswith((" ", "\n", "　")) else " "
    st.session_state["review_draft"] = f"{draft}{sep}{tag} "


def answer_panel(paragraphs: list[tuple[int, str]]) -> None:
    """The answer, one row per paragraph, its § number a button that adds `§N` to the message; a long answer
    is shown a page at a time (a run draws at most PAGE_SIZE rows)."""
    if not paragraphs:
        st.info(
            "この答案は段落に分かれていません。「答案・講評を編集」で答案を貼り付け直すと、段落に分けて表示できます。"
        )
        return
    for index in page_range(len(paragraphs), "review_answer_page"):
        number, text = paragraphs[index]
        row = st.container(horizontal=True, wrap=False, vertical_alignment="top", gap="small")
        row.button(
            f"§{number}",
            key=f"review_para_{number}",
            on_click=add_mention,
            args=(number,),
            help=f"質問欄に §{number} を追加します",
        )
        row.markdown(literal_md(text) or "（空の段落）", width="stretch")


def review_panel(review_json: dict[str, Any]) -> None:
    """The review: overall text, then each item with its paragraph tags as buttons."""
    st.markdown("**全体講評**")
    st.markdown(literal_md(str(review_json.get("overall_review", ""))))
    if review_json.get("score") not in (None, ""):
        st.caption(f"評価: {review_json['score']}")
    for category in REVIEW_ITEM_CATEGORIES:
        items = review_json.get(category)
        if not isinstance(items, list) or not items:
            continue
        st.markdown(f"**{CATEGORY_LABELS[category]}**")
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            with st.container(border=True):
                if item.get("title"):
                    st.markdown(f"**{literal_md(str(item['title']))}**")
                if item.get("description"):
                    st.markdown(literal_md(str(item["description"])))
                numbers = item_paragraph_numbers(item)
                if numbers:
                    tags = st.container(horizontal=True, vertical_alignment="center", gap="small")
                    tags.caption("該当段落", width="content")
                    for number in numbers:
                        tags.button(
                            f"§{number}",
                            key=f"review_item_{category}_{index}_{number}",
                            on_click=add_mention,
                            args=(number,),
                            help=f"質問欄に §{number} を追加します",
                        )


def turn_info(info: TurnInfo) -> None:
    """「このターンでLLMに渡した情報」: blocks and why, the paragraph rule, the summary in force, counts."""
    turn = "?" if info.turn is None else info.turn
    with st.expander(f"このターンでLLMに渡した情報（ターン{turn}）"):
        st.markdown(f"メッセージ数: **{info.message_count}** ／ 送信文字数: **{info.prompt_chars:,}**")
        st.markdown("**コンテキストに含めたブロックと理由**")
        st.markdown("\n".join(f"- {b.header} — {b.reason}（{b.chars:,}字）" for b in info.blocks))
        source = SOURCE_LABELS.get(info.paragraph_source, "")
        st.markdown(f"**段落の指定**（{source}）: {info.paragraph_rule}")
        if info.summary_in_force:
            st.markdown(f"**使用中の要約**（ターン1～{info.summary_up_to_turn}）")
            st.markdown(literal_md(info.summary_in_force))
        else:
            st.markdown("**使用中の要約**: まだありません（これまでの会話履歴をそのまま送信）")
