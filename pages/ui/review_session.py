"""Session logic of the review chat page: pick review/thread, submit, run a streamed turn, retry.

Data keys (never bound to widgets): chat["review"], review_review_id, review_thread_id, review_pending,
review_last_call, review_notice. Each chat item: {role, content, status, turn?, info?, error_type?, raw?};
status is pending | done | failed (user) and done | error (assistant). Only "done" items are history.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.flows.review_chat import (
    ReviewRecord,
    ThreadState,
    finish_review_turn,
    load_sample_review,
    prepare_review_turn,
    read_review_file,
    stream_review_reply,
)
from core.flows.review_chat.records import SAMPLE_KEY
from core.flows.review_chat.summary import due_summary_segment
from core.store.review import ReviewStore
from pages.ui import state
from pages.ui.render import stream_llm_markdown

DEMO_QUESTION = "§11 の論述について、講評ではどう評価されていますか？"
QUERY_KEY = "review_thread"


def store() -> ReviewStore:
    return ReviewStore(state.engine())


def sample_id() -> int:
    return store().ensure_sample(load_sample_review(), SAMPLE_KEY)


def chat() -> list[dict[str, Any]]:
    return st.session_state.chat["review"]


def history() -> list[dict[str, Any]]:
    """The completed rallies (what the model sees as chat history)."""
    return [m for m in chat() if m.get("status") == "done"]


def new_thread(review_id: int) -> None:
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = review_id, None
    ss.chat["review"] = []
    ss["review_pending"], ss["review_last_call"] = False, None
    st.query_params.pop(QUERY_KEY, None)


def open_thread(thread_id: int) -> bool:
    """Load a stored thread (resume after a reload). False when it does not exist."""
    thread = store().get_thread(thread_id)
    if thread is None:
        return False
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = thread["review_id"], thread_id
    ss.chat["review"] = [
        {"role": m.role, "content": m.content, "turn": m.turn, "status": "done", "info": m.meta or None}
        for m in store().load_messages(thread_id)
    ]
    ss["review_pending"], ss["review_last_call"] = False, None
    st.query_params[QUERY_KEY] = str(thread_id)
    return True


def init() -> None:
    """First visit in this session: resume the thread in the URL, else a new thread on the sample."""
    ss = st.session_state
    ss.setdefault("review_notice", None)
    if "review_review_id" in ss:
        return
    wanted = st.query_params.get(QUERY_KEY, "")
    if not (wanted.isdigit() and open_thread(int(wanted))):
        new_thread(sample_id())


def start_demo() -> None:
    """One-click demo: the sample review, a new thread, and a first scripted question."""
    new_thread(sample_id())
    submit_text(DEMO_QUESTION)


def submit_text(text: str) -> None:
    """Append the user's message to state first; the reply runs on this script run."""
    chat().append({"role": "user", "content": text, "status": "pending"})
    st.session_state["review_pending"] = True


def on_send() -> None:
    text = (st.session_state.get("review_draft") or "").strip()
    if not text:
        st.session_state["review_notice"] = ("warning", "質問を入力してください。")
        return
    if st.session_state.get("review_pending"):
        # A click while a reply was still streaming: that reply is restarted; the new text stays in the box.
        st.session_state["review_notice"] = (
            "warning",
            "前の質問への回答を作成中です。回答が表示されてから、もう一度送信してください（入力は残してあります）。",
        )
        return
    submit_text(text)
    st.session_state["review_draft"] = ""


def on_retry() -> None:
    """Resend the last failed question (nothing the user typed is lost)."""
    items = chat()
    while items and items[-1].get("status") in ("error", "failed"):
        last = items.pop()
        if last["role"] == "user":
            submit_text(last["content"])
            return


def on_pick_review() -> None:
    new_thread(st.session_state["review_picker"])


def on_pick_thread() -> None:
    picked = st.session_state["review_thread_picker"]
    if picked == 0 or not open_thread(picked):
        new_thread(st.session_state["review_review_id"])


def current_review() -> ReviewRecord | None:
    return store().get_review(st.session_state["review_review_id"])


def import_review(raw: bytes) -> list[str]:
    """Store an uploaded review and switch to it; returns the problems when it cannot be used."""
    check = read_review_file(raw)
    if check.record is None:
        return check.errors
    review_id = store().add_review(check.record)
    new_thread(review_id)
    note = f"「{check.record.title}」を読み込みました。" + "".join(f" 注意: {w}" for w in check.warnings)
    st.session_state["review_notice"] = ("warning" if check.warnings else "success", note)
    return []


def run_pending_safely(review: ReviewRecord) -> None:
    """run_pending, but an unexpected error becomes a Japanese message and a retry, never a traceback."""
    try:
        run_pending(review)
    except Exception:  # noqa: BLE001 - st.rerun()/st.stop() are BaseException and pass through
        ss = st.session_state
        ss["review_pending"] = False
        pending = next((m for m in reversed(chat()) if m.get("status") == "pending"), None)
        if pending is not None:
            pending["status"] = "failed"
            chat().append(
                {
                    "role": "assistant",
                    "content": "回答の処理中に予期しないエラーが起きました。もう一度送信してください。",
                    "status": "error",
                    "error_type": "unexpected_error",
                }
            )
        else:  # the reply was already shown and stored; what failed came after it (e.g. the summary)
            ss["review_notice"] = ("error", "回答の後処理（会話の要約など）で予期しないエラーが起きました。")
        st.rerun()


def run_pending(review: ReviewRecord) -> None:
    """Stream the reply to the pending question, store the rally, summarize when due, then rerun."""
    ss = st.session_state
    pending = next(m for m in reversed(chat()) if m.get("status") == "pending")
    thread_id = ss["review_thread_id"]
    thread_state = store().thread_state(thread_id) if thread_id else ThreadState()
    plan = prepare_review_turn(review, thread_state, history(), pending["content"])
    client, sink = state.client(), state.sink()
    with st.chat_message("assistant"):
        stream = stream_review_reply(client, plan, sink=sink)
        stream_llm_markdown(stream)
    result = stream.result
    assert result is not None
    ss["review_pending"] = False
    ss["review_last_call"] = {"messages": plan.messages, "raw": result.raw}
    if not result.ok:
        pending["status"] = "failed"
        chat().append(
            {
                "role": "assistant",
                "content": result.message,
                "status": "error",
                "error_type": result.error_type,
                "raw": result.raw,
                "turn": plan.turn,
            }
        )
        st.rerun()
    info = plan.info()
    pending.update(status="done", turn=plan.turn)
    chat().append(
        {"role": "assistant", "content": result.text, "status": "done", "turn": plan.turn, "info": info}
    )
    try:
        if thread_id is None:
            thread_id = store().create_thread(review.id or 0)
            ss["review_thread_id"] = thread_id
            st.query_params[QUERY_KEY] = str(thread_id)
        store().save_turn(thread_id, plan.turn, pending["content"], result.text, plan.state_after, info)
    except Exception:  # noqa: BLE001 - the reply is shown; the staff member must learn it was not stored
        ss["review_notice"] = (
            "error",
            "回答は表示しましたが、会話を保存できませんでした。"
            "データフォルダ（APP_DATA_DIR）の空き容量や書き込み権限を確認してください。",
        )
        st.rerun()
    segment = due_summary_segment(plan.state_after, plan.turn)
    if segment is not None:
        with st.spinner(f"ターン{segment[0]}～{segment[1]}の会話を要約しています…"):
            outcome = finish_review_turn(plan, history(), client, sink=sink)
        if outcome.failed:
            ss["review_notice"] = (
                "warning",
                "会話の要約を作成できませんでした（"
                + (outcome.result.message if outcome.result else "")
                + "）。要約ができるまでは会話履歴をそのまま送り、次のターンの後に再試行します。",
            )
        else:
            store().update_thread_state(thread_id, outcome.state)
            ss["review_notice"] = (
                "success",
                f"ターン{segment[0]}～{segment[1]}の会話を要約しました。次のターンから要約を使います。",
            )
    st.rerun()
