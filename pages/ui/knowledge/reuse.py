"""Knowledge page: the saved entries similar to the case (「類似ナレッジ」, what the interviewer was
given as reference) and the question asked before a draft that nearly duplicates a saved entry is saved.

Entry fields are typed by people or written by the model: every one goes through the safe renderer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

import streamlit as st

from core.clock import format_local
from core.flows import knowledge as kf
from pages.ui.knowledge import base_tab
from pages.ui.knowledge import session as ks
from pages.ui.shell.render import llm_caption, llm_label, llm_markdown

DuplicateChoice = Literal["update", "new", "cancel"]
PICK_KEY = "knowledge_duplicate_pick"  # widget key: which near-duplicate to update (when there are several)


def entry_heading(entry: Mapping[str, Any]) -> str:
    """「ナレッジ名」（ID・版） as a safe one-line label."""
    return f"{llm_label(entry['knowledge_title'] or '（無題）')}（ID {entry['id']}・第{entry['version']}版）"


def entry_caption(entry: Mapping[str, Any]) -> str:
    """Contract type, clause, who updated it and when: raw text, for `llm_caption` (which makes it safe)."""
    when = format_local(entry["updated_at"]) if entry.get("updated_at") else ""
    return (
        f"{entry['contract_type'] or '契約類型なし'}・{entry['target_clause'] or '条項なし'}"
        f"　更新: {entry['updated_by']} {when}"
    )


def render_entry_fields(entry: Mapping[str, Any]) -> None:
    """The review points, action plan and clause sample of an entry (safe Markdown, long text folded)."""
    for key in ("review_points", "action_plan", "clause_sample"):
        if entry.get(key):
            st.markdown(f"**{kf.KNOWLEDGE_FIELD_LABELS[key]}**")
            llm_markdown(str(entry[key]), key=f"knowledge_ref_{entry['id']}_{key}")


def entry_text(entry: Mapping[str, Any]) -> str:
    """The entry as plain text to paste elsewhere: 【項目】 then its text, every field."""
    return "\n\n".join(
        f"【{kf.KNOWLEDGE_FIELD_LABELS[key]}】\n{str(entry.get(key) or '（未記入）').strip()}"
        for key in kf.KNOWLEDGE_FIELDS
    )


def open_in_base(entry_id: int) -> None:
    """「ナレッジベースで開く」: the knowledge base tab with this entry picked (filters cleared so it is listed)."""
    ss = st.session_state
    ss["knowledge_tabs"] = "ナレッジベース"
    ss["knowledge_base_search"], ss["knowledge_base_types"], ss["knowledge_base_clause"] = "", [], None
    ss["knowledge_base_show_archived"] = False
    ss[base_tab.PICK_KEY] = entry_id


def entry_actions(entry: Mapping[str, Any]) -> None:
    """Open the entry in the knowledge base, or copy it as text."""
    row = st.container(horizontal=True, gap="small")
    row.button(
        "ナレッジベースで開く",
        key=f"knowledge_ref_open_{entry['id']}",
        icon=":material/open_in_new:",
        on_click=open_in_base,
        args=(entry["id"],),
    )
    with row.popover("テキストをコピー", icon=":material/content_copy:"):
        st.caption("右上のボタンでコピーできます。")
        st.code(entry_text(entry), language=None, wrap_lines=True)


def render_similar() -> None:
    """「類似ナレッジ」: the saved entries the last turn sent to the interviewer as reference."""
    similar = st.session_state[ks.SIMILAR_KEY]
    if not similar:
        return
    with st.expander(f"類似ナレッジ（{len(similar)} 件）", expanded=True, icon=":material/library_books:"):
        st.caption(
            "チームのナレッジベースにある、この事例に似たナレッジです。AIにも参考として渡しています"
            "（重複の確認や、対応方針の比較に使われます）。"
        )
        for entry in similar:
            with st.container(border=True):
                st.markdown(f"**{entry_heading(entry)}**")
                llm_caption(entry_caption(entry))
                render_entry_fields(entry)
                entry_actions(entry)


def ask_duplicate(draft: dict[str, str], duplicates: list[dict[str, Any]]) -> None:
    """Keep a save for the near-duplicate question (shown by `render_duplicate_question`)."""
    st.session_state[ks.DUPLICATE_KEY] = {"draft": dict(draft), "duplicates": list(duplicates)}
    st.session_state.pop(PICK_KEY, None)


def pending_duplicate() -> dict[str, Any] | None:
    return cast("dict[str, Any] | None", st.session_state[ks.DUPLICATE_KEY])


def clear_duplicate() -> None:
    st.session_state[ks.DUPLICATE_KEY] = None


def chosen_duplicate() -> dict[str, Any] | None:
    """The near-duplicate the person chose to update (the closest unless they picked another)."""
    pending = pending_duplicate()
    if pending is None:
        return None
    by_id = {d["id"]: d for d in pending["duplicates"]}
    return cast("dict[str, Any] | None", by_id.get(st.session_state.get(PICK_KEY), pending["duplicates"][0]))


def render_duplicate_question() -> DuplicateChoice | None:
    """「よく似たナレッジがあります」: the existing entry and three choices; returns the button pressed."""
    pending = pending_duplicate()
    if pending is None:
        return None
    duplicates = pending["duplicates"]
    st.warning(
        "よく似たナレッジがあります。まだ保存していません。既存のナレッジを更新するか、新規として保存するかを"
        "選んでください。",
        icon=":material/content_copy:",
    )
    if len(duplicates) > 1:
        by_id = {d["id"]: d for d in duplicates}
        st.radio("更新するナレッジ", list(by_id), format_func=lambda i: entry_heading(by_id[i]), key=PICK_KEY)
    existing = chosen_duplicate() or duplicates[0]
    with st.container(border=True):
        st.markdown(f"**既存: {entry_heading(existing)}**")
        llm_caption(entry_caption(existing))
        render_entry_fields(existing)
    # one under another: the side column is narrow
    if st.button(
        f"既存を更新する（ID {existing['id']} の第{existing['version'] + 1}版として保存）",
        key="knowledge_dup_update",
        icon=":material/update:",
        type="primary",
        width="stretch",
    ):
        return "update"
    if st.button("新規として保存", key="knowledge_dup_new", icon=":material/add:", width="stretch"):
        return "new"
    if st.button(
        "キャンセル（保存しない）", key="knowledge_dup_cancel", icon=":material/close:", width="stretch"
    ):
        return "cancel"
    return None
