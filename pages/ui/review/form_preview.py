"""The answer part of the registration form: the pasted answer and its live paragraph preview §1 … §n, with
「次と結合」 and 「この行から分割」 to adjust the split (core renumbers the items' paragraph numbers with it)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.flows import review_chat
from core.flows.review_chat import MAX_ANSWER_CHARS, MAX_ANSWER_PARAGRAPHS, MaterialDraft, answer_bound_errors
from pages.ui.review import session as rs
from pages.ui.review.paging import page_range
from pages.ui.shell.render import literal_md, plain_label

SPLIT_RULE = "段落の分け方: 空行があれば空行で区切ります。空行が1つもなければ1行を1段落にします。"

ANSWER_ERRORS = "review_form_answer_errors"  # data key: why the pasted answer was not split (over a bound)
PAGE_KEY = "review_form_preview_page"

PutBack = Callable[[MaterialDraft], None]
Current = Callable[[], MaterialDraft]


def on_answer_change(answer_key: str, put_back: PutBack, current: Current) -> None:
    """The pasted text changed: split it again (adjustments made before are replaced)."""
    text = st.session_state.get(answer_key, "") or ""
    st.session_state["review_form_split_of"] = text
    problems = answer_bound_errors(0, len(text))
    paragraphs = [] if problems else review_chat.split_answer(text)
    problems = problems or answer_bound_errors(len(paragraphs), 0)
    st.session_state[ANSWER_ERRORS] = problems
    if problems:  # nothing past the bound is split, previewed or offered as § choices
        paragraphs = []
    draft, dropped = review_chat.with_paragraphs(current(), paragraphs)
    put_back(draft)
    if dropped:
        labels = "、".join(f"§{n}" for n in dropped)
        rs.notify(
            (
                "warning",
                f"答案の段落が {len(paragraphs)} 個になったため、講評項目から {labels} を外しました。",
            )
        )


def on_merge(number: int, put_back: PutBack, current: Current) -> None:
    put_back(review_chat.merge_paragraphs(current(), number))


def on_split(number: int, put_back: PutBack, current: Current) -> None:
    line = st.session_state.get(f"review_form_split_line_{number}")
    if isinstance(line, int):
        put_back(review_chat.split_paragraph(current(), number, line))


def _line_label(lines: list[str]) -> Callable[[int], str]:
    def label(line: int) -> str:
        return f"{line}行目「{plain_label(lines[line - 1], 20)}」から"

    return label


def _paragraph_row(number: int, text: str, last: bool, put_back: PutBack, current: Current) -> None:
    with st.container(border=True):
        head = st.container(horizontal=True, vertical_alignment="center")
        head.markdown(f"**§{number}**", width="content")
        if not last:
            head.button(
                "次と結合",
                key=f"review_form_merge_{number}",
                icon=":material/merge:",
                on_click=on_merge,
                args=(number, put_back, current),
                help=f"§{number} と §{number + 1} を1つの段落にします",
            )
        st.markdown(literal_md(text))
        lines = text.split("\n")
        if len(lines) > 1:
            cols = st.columns([3, 1], vertical_alignment="bottom")
            cols[0].selectbox(
                "分割する位置",
                list(range(2, len(lines) + 1)),
                key=f"review_form_split_line_{number}",
                format_func=_line_label(lines),
            )
            cols[1].button(
                "分割",
                key=f"review_form_split_{number}",
                icon=":material/call_split:",
                on_click=on_split,
                args=(number, put_back, current),
                help="選んだ行から後ろを次の段落にします",
            )


def answer_section(answer_key: str, put_back: PutBack, current: Current) -> None:
    """The answer text box (left) and the paragraph preview (right)."""
    paragraphs: list[str] = st.session_state.get("review_form_paragraphs", [])
    left, right = st.columns(2, gap="large")
    with left:
        st.text_area(
            "答案（そのまま貼り付けてください）",
            key=answer_key,
            height=520,
            on_change=on_answer_change,
            args=(answer_key, put_back, current),
            help="貼り付けた後、欄の外をクリックするとプレビューが更新されます。",
        )
        st.caption(f"答案の上限: {MAX_ANSWER_CHARS:,} 文字・{MAX_ANSWER_PARAGRAPHS:,} 段落。")
        st.caption(SPLIT_RULE + " 文章を変更すると、区切りは貼り付けた文章から作り直されます。")
    with right:
        title = f"段落のプレビュー（§1～§{len(paragraphs)}）" if paragraphs else "段落のプレビュー"
        st.markdown(f"**{title}**")
        for problem in st.session_state.get(ANSWER_ERRORS) or []:
            st.error(problem, icon=":material/error:")
        shown = page_range(len(paragraphs), PAGE_KEY)
        with st.container(height=520):
            if not paragraphs:
                st.caption("答案を貼り付けると、ここに §1、§2 … と段落が表示されます。")
            for index in shown:
                number = index + 1
                _paragraph_row(number, paragraphs[index], number == len(paragraphs), put_back, current)
