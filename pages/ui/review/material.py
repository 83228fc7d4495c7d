"""The form 「答案・講評を登録」: question, the answer pasted and split into §1, §2, ... with a
preview to adjust the split, optional 出題趣旨 / 採点実感, the overall review and the review items with their
paragraph numbers chosen from the preview; 保存 registers (or updates) the person's own review.

Data keys: review_form_mode (None, "new" or the id of the review being edited), review_form_paragraphs,
review_form_items ([{uid, category, extra}]), review_form_uid, review_form_extra, review_form_errors,
review_form_split_of (the answer text the preview was split from).
Widget keys: review_form_{title,question,answer,purpose,grading,overall}, review_form_item_{uid}_{title,desc,
paras}, review_form_merge_{n}, review_form_split_line_{n}, review_form_split_{n}. Core does the splitting,
the renumbering and the checks (core.flows.review_chat.material / manage).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.flows import review_chat
from core.flows.review_chat import CATEGORY_LABELS, REVIEW_ITEM_CATEGORIES, ItemDraft, MaterialDraft
from pages.ui.review import form_preview as preview
from pages.ui.review import session as rs
from pages.ui.shell.render import literal_md

TEXT_KEYS = {
    "title": "review_form_title",
    "question_text": "review_form_question",
    "purpose_text": "review_form_purpose",
    "grading_impression_text": "review_form_grading",
    "overall_review": "review_form_overall",
}
ANSWER_KEY = "review_form_answer"
SPLIT_OF = "review_form_split_of"  # the answer text the preview was split from


def active() -> bool:
    return st.session_state.get("review_form_mode") is not None


def _item_key(uid: int, part: str) -> str:
    return f"review_form_item_{uid}_{part}"


def _add_item(item: ItemDraft) -> None:
    ss = st.session_state
    uid = ss.get("review_form_uid", 0) + 1
    ss["review_form_uid"] = uid
    ss["review_form_items"].append({"uid": uid, "category": item.category, "extra": item.extra})
    ss[_item_key(uid, "title")] = item.title
    ss[_item_key(uid, "desc")] = item.description
    ss[_item_key(uid, "paras")] = list(item.paragraph_numbers)


def load(draft: MaterialDraft, mode: Any) -> None:
    """Put a draft into the form (a new one, or a stored review to edit) and show the form."""
    ss = st.session_state
    ss["review_form_mode"] = mode
    for field, key in TEXT_KEYS.items():
        ss[key] = getattr(draft, field)
    ss[ANSWER_KEY] = ss[SPLIT_OF] = review_chat.join_paragraphs(draft.paragraphs)
    ss["review_form_paragraphs"] = list(draft.paragraphs)
    ss["review_form_extra"] = dict(draft.extra)
    ss["review_form_items"] = []
    ss["review_form_uid"] = 0
    ss["review_form_errors"] = []
    ss[preview.ANSWER_ERRORS] = []
    for item in draft.items:
        _add_item(item)


def current() -> MaterialDraft:
    """The form as a draft, from the widgets' values."""
    ss = st.session_state
    items = [
        ItemDraft(
            row["category"],
            ss.get(_item_key(row["uid"], "title"), ""),
            ss.get(_item_key(row["uid"], "desc"), ""),
            list(ss.get(_item_key(row["uid"], "paras"), [])),
            row["extra"],
        )
        for row in ss.get("review_form_items", [])
    ]
    texts = {field: ss.get(key, "") or "" for field, key in TEXT_KEYS.items()}
    return MaterialDraft(
        paragraphs=list(ss.get("review_form_paragraphs", [])),
        items=items,
        extra=dict(ss.get("review_form_extra", {})),
        **texts,
    )


def put_back(draft: MaterialDraft) -> None:
    """After a change of the split: the paragraphs and every item's paragraph numbers, into the form."""
    ss = st.session_state
    ss["review_form_paragraphs"] = list(draft.paragraphs)
    for row, item in zip(ss["review_form_items"], draft.items, strict=True):
        ss[_item_key(row["uid"], "paras")] = list(item.paragraph_numbers)
    for key in [k for k in ss if str(k).startswith("review_form_split_line_")]:
        del ss[key]  # the lines offered belong to the old split


def on_open_new() -> None:
    load(MaterialDraft(), "new")


def on_open_edit(review_id: int) -> None:
    draft = review_chat.editable_draft(rs.repo(), review_id)
    if draft is None:
        rs.notify(("error", review_chat.NOT_OWN))
        return
    load(draft, review_id)


def close() -> None:
    st.session_state["review_form_mode"] = None


def on_add(category: str) -> None:
    _add_item(ItemDraft(category))


def on_remove(uid: int) -> None:
    ss = st.session_state
    ss["review_form_items"] = [row for row in ss["review_form_items"] if row["uid"] != uid]


def on_save() -> None:
    ss = st.session_state
    if ss.get(ANSWER_KEY) != ss.get(SPLIT_OF):  # typed, then 保存 at once: split what was typed first
        preview.on_answer_change(ANSWER_KEY, put_back, current)
    mode = ss.get("review_form_mode")
    if ss.get(preview.ANSWER_ERRORS):
        ss["review_form_errors"] = list(ss[preview.ANSWER_ERRORS])
        return
    result = review_chat.save_material(rs.repo(), current(), None if mode == "new" else mode)
    ss["review_form_errors"] = result.errors
    if result.review_id is None:
        return
    close()
    if mode == "new" or ss.get("review_review_id") != result.review_id:
        rs.new_thread(result.review_id)  # an edit of the open review keeps the open thread
    if result.notice:
        rs.notify(result.notice)


def _item_editor(row: dict[str, Any], count: int) -> None:
    uid = row["uid"]
    with st.container(border=True):
        st.text_input("見出し", key=_item_key(uid, "title"), placeholder="例: 要件の当てはめが薄い")
        st.text_area("内容", key=_item_key(uid, "desc"), height=80)
        cols = st.columns([5, 1], vertical_alignment="bottom")
        cols[0].multiselect(
            "該当段落",
            list(range(1, count + 1)),
            key=_item_key(uid, "paras"),
            format_func=lambda n: f"§{n}",
            placeholder="段落を選んでください（任意）",
        )
        cols[1].button("削除", key=f"review_form_remove_{uid}", on_click=on_remove, args=(uid,))


def _items(count: int) -> None:
    for category in REVIEW_ITEM_CATEGORIES:
        label = CATEGORY_LABELS[category]
        st.markdown(f"**{label}**")
        for row in [r for r in st.session_state["review_form_items"] if r["category"] == category]:
            _item_editor(row, count)
        st.button(
            f"{label}を追加",
            key=f"review_form_add_{category}",
            icon=":material/add:",
            on_click=on_add,
            args=(category,),
        )


def form() -> None:
    """The whole form (the page shows it instead of the chat while it is open)."""
    ss = st.session_state
    editing = ss.get("review_form_mode") != "new"
    st.subheader("答案・講評を編集" if editing else "答案・講評を登録", anchor=False)
    st.caption(
        "自分の答案と講評を登録すると、このページで §番号を指定して相談できます。登録した内容は自分だけに表示されます。"
    )
    st.text_input("名前（一覧に表示。空なら問題文の1行目）", key=TEXT_KEYS["title"], max_chars=200)
    st.text_area("問題文", key=TEXT_KEYS["question_text"], height=120)
    with st.expander("出題趣旨・採点実感（任意）"):
        st.text_area("出題趣旨／参考文章", key=TEXT_KEYS["purpose_text"], height=100)
        st.text_area("採点実感", key=TEXT_KEYS["grading_impression_text"], height=100)
    preview.answer_section(ANSWER_KEY, put_back, current)
    count = len(ss.get("review_form_paragraphs", []))
    st.markdown("#### 講評")
    st.text_area("全体講評", key=TEXT_KEYS["overall_review"], height=120)
    _items(count)
    if ss.get("review_form_errors"):
        st.error(
            "保存できませんでした。次の点を直してください。\n\n"
            + "\n".join(f"- {literal_md(e)}" for e in ss["review_form_errors"])
        )
    row = st.container(horizontal=True)
    row.button("保存", key="review_form_save", type="primary", icon=":material/save:", on_click=on_save)
    row.button("キャンセル", key="review_form_cancel", on_click=close)
