"""Knowledge interview page: reopen a stored interview (the interview list, a browser reload via the URL).

Core rebuilds the conversation and looks up the similar entries of its case
(core.flows.knowledge.interviews.open_interview); here it goes into session state and the URL. An archived
interview opens read-only: its turns, a notice and 「復元する」, no input.
"""

from __future__ import annotations

import streamlit as st

from core.flows import knowledge as kb
from core.flows.knowledge import KnowledgeStoreError, open_interview
from pages.ui.knowledge import session as ks

NOT_FOUND = (
    "指定された聞き取りは見つかりません（ほかの人の聞き取りか、記録が残っていません）。"
    "新しい聞き取りを始められます。"
)
ARCHIVED_NOTICE = "このヒアリングはアーカイブされています（閲覧のみ）。"
RESTORED_KEY = "knowledge_resume_restored"  # data key: 「復元しました」 shown after the rerun


def resume(interview_id: str) -> bool:
    """Load a stored interview into the page; False when it cannot be read or has no turns."""
    try:
        opened = open_interview(ks.stores(), interview_id)
        resumed = opened.resumed if opened else None
        saved = (
            kb.current_entry(ks.stores().base, resumed.saved_entry_id)
            if resumed and resumed.saved_entry_id
            else None
        )
    except KnowledgeStoreError:
        st.error("保存された聞き取りを読み込めませんでした。")
        return False
    if opened is None or resumed is None:
        return False
    ks.reset()
    ss = st.session_state
    ss.chat[ks.FLOW] = resumed.items
    ss.knowledge_outputs = resumed.knowledge
    ss[ks.INTERVIEW_KEY] = interview_id
    ss[ks.SAVED_ENTRY_KEY] = resumed.saved_entry_id
    ss[ks.SAVED_VERSION_KEY] = saved["version"] if saved else None  # what this session opened
    ss[ks.SIMILAR_KEY] = opened.references  # 類似ナレッジ at once, not only after the next turn
    ss[ks.NOTICES_KEY] = opened.notices
    ss[ks.ARCHIVED_KEY] = opened.archived_at is not None
    st.query_params[ks.QUERY_PARAM] = interview_id
    return True


def resume_from_url() -> None:
    """After a browser reload: reopen the interview named in the URL (another person's reads not found)."""
    wanted = st.query_params.get(ks.QUERY_PARAM)
    if wanted and not ks.chat() and st.session_state[ks.INTERVIEW_KEY] is None and not resume(wanted):
        st.query_params.pop(ks.QUERY_PARAM, None)
        st.warning(NOT_FOUND, icon=":material/search_off:")


def render_read_only() -> None:
    """An archived interview: the read-only notice and 「復元する」 (only its owner ever opens it)."""
    interview_id = st.session_state[ks.INTERVIEW_KEY]
    st.info(ARCHIVED_NOTICE, icon=":material/inventory_2:")
    st.caption("続けて聞き取るには、復元してください。復元すると「聞き取り一覧・分析」の一覧にも戻ります。")
    if interview_id and st.button("復元する", key="knowledge_resume_restore", icon=":material/unarchive:"):
        try:
            kb.restore_interview(ks.stores().interviews, interview_id)
        except (KnowledgeStoreError, KeyError):
            st.error("復元できませんでした。")
            return
        if resume(interview_id):
            st.session_state[RESTORED_KEY] = True
        st.rerun()


def show_restored() -> None:
    """「聞き取りを復元しました」 after 「復元する」."""
    if st.session_state.pop(RESTORED_KEY, False):
        st.success("聞き取りを復元しました。続けて入力できます。", icon=":material/check:")
