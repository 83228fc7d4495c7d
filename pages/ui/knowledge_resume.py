"""Knowledge interview page: reopen a stored interview (the interview list, a browser reload via the URL).

Core rebuilds the conversation (core.flows.knowledge_interviews.resume_interview); here it goes into
session state and the URL.
"""

from __future__ import annotations

import streamlit as st

from core.flows import knowledge_base as kb
from core.flows.knowledge_interviews import resume_interview
from core.flows.knowledge_stores import KnowledgeStoreError
from pages.ui import knowledge_session as ks


def resume(interview_id: str) -> bool:
    """Load a stored interview into the page; False when it cannot be read or has no turns."""
    try:
        resumed = resume_interview(ks.stores(), interview_id)
        saved = (
            kb.current_entry(ks.stores().base, resumed.saved_entry_id)
            if resumed and resumed.saved_entry_id
            else None
        )
    except KnowledgeStoreError:
        st.error("保存された聞き取りを読み込めませんでした。")
        return False
    if resumed is None:
        return False
    ks.reset()
    st.session_state.chat[ks.FLOW] = resumed.items
    st.session_state.knowledge_outputs = resumed.knowledge
    st.session_state[ks.INTERVIEW_KEY] = interview_id
    st.session_state[ks.SAVED_ENTRY_KEY] = resumed.saved_entry_id
    st.session_state[ks.SAVED_VERSION_KEY] = saved["version"] if saved else None  # what this session opened
    st.query_params[ks.QUERY_PARAM] = interview_id
    return True


def resume_from_url() -> None:
    """After a browser reload: reopen the interview named in the URL."""
    wanted = st.query_params.get(ks.QUERY_PARAM)
    if wanted and not ks.chat() and st.session_state[ks.INTERVIEW_KEY] is None and not resume(wanted):
        st.query_params.pop(ks.QUERY_PARAM, None)
