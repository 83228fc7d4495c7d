"""Diagnosis page plumbing: the shared session store and RAG index, deps per run, sending a request."""

from __future__ import annotations

import copy
from typing import Any

import streamlit as st

from core.debuglog import DebugEvent, ListSink
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatResponse, SessionState
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.service import ChatService
from core.flows.diagnosis.session_store import SessionStore
from core.guard_result import user_message
from core.store.diagnosis import BookingRepository
from pages.ui import state

# Names of the LLM calls (request.tags["step"]) as staff read them.
CALL_LABELS = {
    "diagnosing": "問診の質問・回答",
    "spec_check": "仕様確認",
    "urgency_check": "緊急度の判定",
    "rag_answer": "取扱説明書の要約",
    "summary": "会話の要約",
}
FAILURE_CONSEQUENCES = {
    "diagnosing": "代わりの質問を表示しています。",
    "spec_check": "仕様確認を省いて問診を続けています。",
    "urgency_check": "キーワード判定の結果だけで緊急度を決めています。",
    "rag_answer": "取扱説明書の該当箇所だけを使っています。",
    "summary": "前回までの要約のまま続けています。",
}
DEMO_VEHICLE = "minato-soleil-2022"
DEMO_SYMPTOM = "エンジン警告灯が点灯した"


@st.cache_resource(show_spinner=False)
def chat_service() -> ChatService:
    """One in-memory session store for the server (spec 04 §1); sessions are keyed by diagnosis_session_id."""
    return ChatService(SessionStore())


def rag_service() -> RAGService:
    return RAGService(state.chroma())


def bookings() -> BookingRepository:
    return BookingRepository(state.engine())


class _TeeSink:
    """Send events to the debug log (when DEBUG is on) and keep this turn's for the page's expander."""

    def __init__(self, inner: ListSink | None):
        self.inner = inner
        self.events: list[DebugEvent] = []

    def emit(self, event: DebugEvent) -> None:
        self.events.append(event)
        if self.inner is not None:
            self.inner.emit(event)


def ensure_index() -> RAGService | None:
    """Index the sample manuals on first use, with a progress bar; None (no RAG) if Chroma fails."""
    try:
        rag = rag_service()
        if not rag.is_indexed():
            bar = st.progress(0.0, text="取扱説明書を索引に登録しています…")
            rag.index_manuals(
                lambda done, total, label: bar.progress(
                    done / total, text=f"取扱説明書を登録中… {done}/{total}"
                )
            )
            bar.empty()
        return rag
    except Exception:  # noqa: BLE001 - the page still works without manual search
        st.warning("取扱説明書の検索を準備できませんでした。マニュアル検索なしで問診を続けます。")
        return None


def current_session() -> SessionState:
    """The page's session; a missing or expired one is replaced by a new session."""
    service = chat_service()
    session = service.store.get(st.session_state.get("diagnosis_session_id"))
    if session is None:
        session = service.store.create()
        st.session_state["diagnosis_session_id"] = session.session_id
        st.session_state.chat["diagnosis"] = []
    return session


def restart() -> None:
    service = chat_service()
    old = st.session_state.get("diagnosis_session_id")
    if old:
        service.store.delete(old)
    st.session_state.pop("diagnosis_session_id", None)
    st.session_state.pop("diagnosis_last_events", None)
    st.session_state.pop("diagnosis_last_failures", None)
    st.session_state.chat["diagnosis"] = []


def send(request: ChatRequest, rag: RAGService | None, user_text: str = "") -> ChatResponse | None:
    """Append the user's message first, run one step, mirror the history into chat["diagnosis"]."""
    ss = st.session_state
    if user_text:
        ss.chat["diagnosis"].append({"role": "user", "content": user_text})
    sink = _TeeSink(state.sink())
    deps = DiagnosisDeps(client=state.client(), rag=rag, store=bookings(), sink=sink)
    request.session_id = ss.get("diagnosis_session_id")
    try:
        session, response = chat_service().process(request, deps)
    except Exception:  # noqa: BLE001 - never a traceback for staff
        st.error(
            "処理中にエラーが発生しました。もう一度お試しいただくか、「最初からやり直す」を押してください。"
        )
        return None
    ss["diagnosis_session_id"] = session.session_id
    ss.chat["diagnosis"] = copy.deepcopy(session.conversation_history)
    ss["diagnosis_last_events"] = [_event_view(e) for e in sink.events if e.kind in ("call", "error")]
    ss["diagnosis_last_failures"] = failed_calls(sink.events)
    ss["diagnosis_last_rewound"] = response.rewound_to_turn
    return response


def failed_calls(events: list[DebugEvent]) -> list[str]:
    """One Japanese line per LLM call of this turn that ended without a usable answer (its last event not ok)."""
    last: dict[str, DebugEvent] = {}
    for event in events:
        last[event.call_id or str(id(event))] = event
    lines = []
    for event in last.values():
        if event.ok is not False:
            continue
        label = CALL_LABELS.get(event.step, event.step)
        reason = user_message(event.error_type or "", event.errors)
        lines.append(f"{label}: {reason} {FAILURE_CONSEQUENCES.get(event.step, '')}".strip())
    return lines


def _event_view(event: DebugEvent) -> dict[str, Any]:
    return {
        "step": event.step,
        "attempt": event.attempt,
        "schema": event.schema_name,
        "messages": event.messages,
        "raw": event.raw,
        "ok": event.ok,
        "error_type": event.error_type,
        "errors": event.errors,
    }


def load_demo(rag: RAGService | None) -> None:
    """One-click demo: vehicle, photo confirmed, a warning-light symptom; the first question is on screen."""
    restart()
    current_session()
    send(ChatRequest(action="select_vehicle", action_value=DEMO_VEHICLE), rag)
    send(ChatRequest(action="photo_confirm", action_value="yes"), rag)
    send(ChatRequest(message=DEMO_SYMPTOM), rag, DEMO_SYMPTOM)
