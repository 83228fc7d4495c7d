"""Knowledge interview page: reopen a stored interview (the interview list, a browser reload via the URL).

Attachment text is never stored, so a resumed user turn carries a note naming its files instead.
A draft already saved from the interview stays linked, so saving again adds a version.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from core.flows import knowledge as kf
from core.store import knowledge as store
from core.store import knowledge_base as kbase
from pages.ui import knowledge_session as ks
from pages.ui import state


def _resumed_file_texts(attachments: list[dict[str, Any]]) -> list[str]:
    """What stands for the attachments of a resumed turn: their text is never stored, only their names."""
    names = "、".join(a.get("name") or "" for a in attachments)
    return [f"（添付ファイル: {names} — 本文は保存していないため省略）"] if attachments else []


def resume(interview_id: str) -> bool:
    """Rebuild the chat of a stored interview (attachment text is not stored, only names)."""
    try:
        rows = store.interview_turns(state.engine(), interview_id)
    except Exception:  # noqa: BLE001
        st.error("保存された聞き取りを読み込めませんでした。")
        return False
    if not rows:
        return False
    ks.reset()
    items: list[dict[str, Any]] = []
    knowledge: list[dict[str, str]] = []
    last_by_turn = {r["turn_no"]: r for r in rows}  # a retried input keeps only its last outcome
    for turn_no in sorted(last_by_turn):
        first = next(r for r in rows if r["turn_no"] == turn_no)
        last = last_by_turn[turn_no]
        file_texts = _resumed_file_texts(first["attachments"])
        items.append(
            {
                "role": "user",
                "content": kf.build_user_payload(first["user_text"], file_texts),
                "text": first["user_text"],
                "attachments": first["attachments"],
                "attachment_errors": [],
                "file_texts": file_texts,  # so a 再試行 sends exactly what the history shows
                "turn_no": turn_no,
                "resumed": True,
            }
        )
        if last["ok"] and last["turn"]:
            turn = last["turn"]
            items.append(
                {
                    "role": "assistant",
                    "content": json.dumps(turn, ensure_ascii=False),
                    "assistant_message": turn["assistant_message"],
                    "turn": turn,
                }
            )
            knowledge = kf.normalize_knowledge(turn["knowledge_json"])
        else:
            items.append(
                {
                    "role": "error",
                    "content": last["raw"],
                    "error_type": last["error_type"],
                    "error": last["error"],
                    "message": "",
                }
            )
    st.session_state.chat["knowledge"] = items
    st.session_state.knowledge_outputs = knowledge
    st.session_state[ks.INTERVIEW_KEY] = interview_id
    try:  # a draft already saved from this interview is updated, not saved twice
        saved = kbase.entry_for_interview(state.engine(), interview_id)
    except Exception:  # noqa: BLE001
        saved = None
    st.session_state[ks.SAVED_ENTRY_KEY] = saved["id"] if saved else None
    st.query_params[ks.QUERY_PARAM] = interview_id
    return True


def resume_from_url() -> None:
    """After a browser reload: reopen the interview named in the URL."""
    wanted = st.query_params.get(ks.QUERY_PARAM)
    if wanted and not ks.chat() and st.session_state[ks.INTERVIEW_KEY] is None and not resume(wanted):
        st.query_params.pop(ks.QUERY_PARAM, None)
