"""Diagnosis page glue: the server's sessions and manual index, sending one request through core.

`st.session_state.chat["diagnosis"]` IS the current session's `conversation_history` (the same list
object, never a copy): core appends to it during a turn and the page draws it. The session id is also in
the URL (`?diagnosis=<id>`), and core keeps the session's state in the store, so a reload resumes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from core.debuglog.events import DebugEvent
from core.flows.diagnosis import (
    BookingRow,
    ChatRequest,
    ChatResponse,
    ChatService,
    RAGService,
    SessionState,
    UrgencyJudge,
    open_deps,
    run_turn,
    session_archive,
    taken_bookings,
    team_booking_rows,
)
from core.flows.roster import people_names
from core.guard.results import user_message
from pages.ui.shell import feedback, last_call, state
from pages.ui.shell.error_card import error_card

FLOW = "diagnosis"
# What the interview does instead when a call of this step fails (shown under the failure).
FAILURE_CONSEQUENCES = {
    "diagnosing": "代わりの質問を表示しています。",
    "spec_check": "仕様確認を省いて問診を続けています。",
    "urgency_check": "キーワード判定の結果だけで緊急度を決めています。",
    "rag_answer": "取扱説明書の該当箇所だけを使っています。",
    "summary": "前回までの要約のまま続けています。",
}
DEMO_VEHICLE = "minato-soleil-2022"
DEMO_SYMPTOM = "エンジン警告灯が点灯した"
URL_KEY = "diagnosis"  # st.query_params key of the session id
SESSION_NOT_FOUND = (
    "指定された問診は見つかりません（期限が切れたか、ほかの人の問診です）。新しい問診を始めました。"
)


@st.cache_resource(show_spinner=False)
def chat_service() -> ChatService:
    """One in-memory session store for the server (spec 04 §1), a cache of the stored sessions (a newer
    stored version, saved by another replica, replaces it); sessions are keyed by diagnosis_session_id and
    handed only to the person who started them."""
    return ChatService()


@st.cache_resource(show_spinner=False)
def _urgency_judge(embedder_key: str) -> UrgencyJudge:
    return UrgencyJudge(state.embedder())


def urgency_judge() -> UrgencyJudge:
    """Urgency by meaning with the deployment's embedder (its examples embedded once per process)."""
    return _urgency_judge(state.embedder().key)


def rag_service() -> RAGService:
    return RAGService(state.chroma(), embedder=state.embedder())


@st.cache_resource(show_spinner=False)
def _reconciled_on_start(data_dir: str) -> tuple[int, int]:
    """Once per process: the manual index holds exactly the current chunks (after a crash)."""
    return rag_service().reconcile()


def ensure_index() -> RAGService | None:
    """Index the sample manuals on first use (reconciled chunk by chunk once per process), with a
    progress bar; None (no RAG) if Chroma fails."""
    try:
        rag = rag_service()
        if not rag.is_indexed():  # first start, or another embedder chosen: index with progress
            bar = st.progress(0.0, text="取扱説明書を索引に登録しています…")
            rag.index_manuals(
                lambda done, total, label: bar.progress(
                    done / total, text=f"取扱説明書を登録中… {done}/{total}"
                )
            )
            bar.empty()
        _reconciled_on_start(str(state.settings().data_dir))
        return rag
    except Exception:  # noqa: BLE001 - Chroma fails in many ways (disk, sqlite, version); the page works without search
        st.warning("取扱説明書の検索を準備できませんでした。マニュアル検索なしで問診を続けます。")
        return None


def _bind(session: SessionState) -> SessionState:
    """Make the page's chat list the session's own history (same object); put its id in the URL."""
    st.session_state["diagnosis_session_id"] = session.session_id
    st.session_state.chat[FLOW] = session.conversation_history
    if st.query_params.get(URL_KEY) != session.session_id:
        st.query_params[URL_KEY] = session.session_id
    return session


def _session_id() -> str | None:
    """This tab's session id: from session state, else from the URL (after a browser reload)."""
    return st.session_state.get("diagnosis_session_id") or st.query_params.get(URL_KEY)


def current_session() -> SessionState:
    """The page's session (from memory or the person's store); a missing, expired or another person's one is
    replaced by a new session, and a link to it says it was not found."""
    person = state.person()
    wanted = _session_id()
    session = chat_service().session(wanted, person.id, session_archive(state.engine(), person))
    if wanted and session.session_id != wanted:
        st.warning(SESSION_NOT_FOUND, icon=":material/search_off:")
    return _bind(session)


def restart() -> None:
    """「最初からやり直す」: forget the session and what the last turn showed."""
    person = state.person()
    _bind(chat_service().restart(_session_id(), person.id, session_archive(state.engine(), person)))
    last_call.clear(FLOW)
    st.session_state.pop("diagnosis_last_failures", None)
    st.session_state.pop("diagnosis_last_rewound", None)


def bookings() -> list[BookingRow]:
    """The bookings this person took, newest first."""
    return taken_bookings(state.engine(), state.person())


def team_bookings_view() -> tuple[list[BookingRow], dict[str, str]] | None:
    """Admins: every person's bookings and who took them (owner id -> name); None for everyone else."""
    rows = team_booking_rows(state.engine(), state.person())
    if rows is None:
        return None
    return rows, people_names(state.engine(), {r.owner_id for r in rows})


def send(request: ChatRequest, rag: RAGService | None) -> ChatResponse | None:
    """Run one request through core's run_turn; the turn's model calls go to the shared last-call view."""
    ss = st.session_state
    request.session_id = _session_id()
    with last_call.capture(FLOW) as sink:
        deps = open_deps(
            state.client(),
            state.engine(),
            state.person(),
            rag=rag,
            sink=sink,
            worker=state.jobs(),
            urgency_judge=urgency_judge(),
        )
        try:
            session, response = run_turn(chat_service(), request, deps)
        except Exception:  # noqa: BLE001 - any bug in a step: staff get a Japanese message, never a traceback
            ss["diagnosis_failed_request"] = request
            return None
    ss.pop("diagnosis_failed_request", None)
    _bind(session)
    ss["diagnosis_last_failures"] = failed_calls(sink.events)
    ss["diagnosis_last_rewound"] = response.rewound_to_turn
    if response.rewound_to_turn is not None:  # the later messages are gone; new ones take their numbers
        kept = sum(1 for item in session.conversation_history if item["role"] == "assistant")
        feedback.forget_after(FLOW, session.session_id, kept)
    return response


def failed_calls(events: Sequence[DebugEvent]) -> list[dict[str, Any]]:
    """Each LLM call of this turn that ended without a usable answer (its last event not ok): a Japanese line
    (what failed, why, what the interview did instead) with its error type, messages and raw output."""
    last: dict[str, DebugEvent] = {}
    for event in events:
        last[event.call_id or str(id(event))] = event
    failures = []
    for event in last.values():
        if event.ok is not False:
            continue
        label = last_call.STEP_LABELS.get(event.step, event.step)
        reason = user_message(event.error_type or "", event.errors)
        line = f"{label}: {reason} {FAILURE_CONSEQUENCES.get(event.step, '')}".strip()
        raw = next((e.raw for e in reversed(events) if e.call_id == event.call_id and e.raw), "")
        failures.append(
            {"text": line, "error_type": event.error_type, "errors": list(event.errors), "raw": raw}
        )
    return failures


def load_demo(rag: RAGService | None) -> None:
    """One-click demo: vehicle, photo confirmed, a warning-light symptom; the first question is on screen."""
    restart()
    send(ChatRequest(action="select_vehicle", action_value=DEMO_VEHICLE), rag)
    send(ChatRequest(action="photo_confirm", action_value="yes"), rag)
    send(ChatRequest(message=DEMO_SYMPTOM), rag)


def failed_request_card(rag: RAGService | None) -> None:
    """The shared error card for a request that raised, with 再試行 (the same request sent again)."""
    request = st.session_state.get("diagnosis_failed_request")
    if request is None:
        return
    if (
        error_card(
            error_type="unexpected_error",
            key="diagnosis_retry",
            sentence="処理中にエラーが発生しました。再試行するか、「最初からやり直す」を押してください。",
        )
        and send(request, rag) is not None
    ):
        st.rerun()
