"""Knowledge page: archiving knowledge base entries (the team's) and interviews (the person's own).

An archived entry is hidden from the list, searches and the similar-entry lookup; 「アーカイブを表示」 shows it
read-only with its versions and 「復元」. An archived interview leaves the person's list and keeps its turns.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.clock import format_local
from core.flows import knowledge as kb
from core.flows import knowledge as kf
from core.flows.knowledge import KnowledgeStoreError
from pages.ui.knowledge import session as ks
from pages.ui.shell import state
from pages.ui.shell.render import llm_label, llm_markdown, plain_label

# data keys: the last archive / restore message of each tab, shown after the rerun
NOTICE_KEY = "knowledge_archive_notice"
INTERVIEW_NOTICE_KEY = "knowledge_interview_archive_notice"


def _when(ts: float | None) -> str:
    return format_local(ts) if ts else ""


def show_notice(key: str = NOTICE_KEY) -> None:
    notice = st.session_state.pop(key, None)
    if notice:
        st.success(notice, icon=":material/check:")


def render_archive_button(entry: dict[str, Any]) -> None:
    """「アーカイブ」 under the editor: hide the entry from lists and lookups (its versions stay)."""
    if not st.button(
        "このナレッジをアーカイブ", key=f"knowledge_base_archive_{entry['id']}", icon=":material/archive:"
    ):
        return
    opened = ks.stores()
    try:
        kb.archive_entry(opened.base, entry["id"], by=state.person(), index=opened.index)
    except KnowledgeStoreError:
        st.error("アーカイブできませんでした（データベースに書き込めません）。")
        return
    st.session_state[NOTICE_KEY] = (
        f"ID {entry['id']} をアーカイブしました。「アーカイブを表示」から確認・復元できます。"
    )
    st.rerun()


def render_archived_entry(entry: dict[str, Any]) -> None:
    """An archived entry, read-only: its fields, who archived it, its versions, and 「復元」."""
    with st.container(border=True):
        st.markdown(
            f"**ID {entry['id']}・第{entry['version']}版（アーカイブ済み・読み取り専用）**　"
            f"アーカイブ: {plain_label(entry['archived_by'] or '')} {_when(entry['archived_at'])}"
        )
        for key in kf.KNOWLEDGE_FIELDS:
            st.markdown(f"**{kf.KNOWLEDGE_FIELD_LABELS[key]}**")
            llm_markdown(str(entry[key] or "（なし）"), key=f"knowledge_archived_{entry['id']}_{key}")
        try:
            versions = kb.entry_history(ks.stores().base, entry["id"])
        except KnowledgeStoreError:
            versions = []
        if versions:
            history = pd.DataFrame(versions)[["version", "edited_at", "edited_by", "note"]]
            history["edited_at"] = history["edited_at"].map(_when)
            st.dataframe(
                history.rename(
                    columns={"version": "版", "edited_at": "日時", "edited_by": "編集者", "note": "メモ"}
                ),
                hide_index=True,
            )
        if st.button("復元", key=f"knowledge_base_restore_{entry['id']}", icon=":material/unarchive:"):
            opened = ks.stores()
            try:
                kb.restore_entry(opened.base, entry["id"], by=state.person(), index=opened.index)
            except KnowledgeStoreError:
                st.error("復元できませんでした（データベースに書き込めません）。")
                return
            st.session_state[NOTICE_KEY] = f"ID {entry['id']} を復元しました。一覧と類似検索に戻りました。"
            st.rerun()


def render_reconcile() -> None:
    """「類似検索の索引を照合」: entries missing from the similar-entry index get indexed."""
    if st.button(
        "類似検索の索引を照合",
        key="knowledge_base_reconcile",
        icon=":material/sync:",
        help="「類似ナレッジ」の検索に使う索引を、ナレッジベースの内容と突き合わせて直します（登録漏れの追加・不要分の削除）。",
    ):
        try:
            report = ks.reconcile_now()
        except Exception:  # noqa: BLE001 - SQLAlchemy and chromadb raise many types; say so and go on
            st.error(
                "類似検索の索引を照合できませんでした（データベースまたはベクトル検索に接続できません）。"
            )
            return
        st.success(report.describe(), icon=":material/sync:")


def archive_interview(interview_id: str) -> None:
    """Archive one of the person's interviews (hidden from their list; the turns stay)."""
    try:
        kb.archive_interview(ks.stores().interviews, interview_id)
    except (KnowledgeStoreError, KeyError):
        st.error("聞き取りをアーカイブできませんでした。")
        return
    if st.session_state[ks.INTERVIEW_KEY] == interview_id:  # the one open in 聞き取り: read-only from now on
        st.session_state[ks.ARCHIVED_KEY] = True
    st.session_state[INTERVIEW_NOTICE_KEY] = (
        "聞き取りをアーカイブしました。「アーカイブを表示」から復元できます。"
    )
    st.rerun()


def render_archived_interviews() -> None:
    """「アーカイブを表示」 in the interviews tab: the person's archived interviews with 「復元」."""
    show_notice(INTERVIEW_NOTICE_KEY)
    if not st.toggle("アーカイブを表示", key="knowledge_interviews_show_archived"):
        return
    try:
        archived = kb.archived_interviews(ks.stores().interviews)
    except KnowledgeStoreError:
        st.error("アーカイブした聞き取りを読み込めませんでした（データベースに接続できません）。")
        return
    if not archived:
        st.caption("アーカイブした聞き取りはありません。")
    for interview in archived:
        cols = st.columns([5, 1], vertical_alignment="center")
        cols[0].markdown(
            f"{llm_label(interview.title or '（無題）')}　"
            f":gray[{_when(interview.updated_at)}・{interview.turns} ターン・"
            f"アーカイブ {_when(interview.archived_at)}]"
        )
        if cols[1].button(
            "復元", key=f"knowledge_interview_restore_{interview.id}", icon=":material/unarchive:"
        ):
            try:
                kb.restore_interview(ks.stores().interviews, interview.id)
            except (KnowledgeStoreError, KeyError):
                st.error("復元できませんでした。")
                return
            if st.session_state[ks.INTERVIEW_KEY] == interview.id:
                st.session_state[ks.ARCHIVED_KEY] = False
            st.session_state[INTERVIEW_NOTICE_KEY] = "聞き取りを復元しました。"
            st.rerun()
