"""Session glue of the review chat page: pick review/thread, submit, run a streamed turn through core, retry.

Data keys (never bound to widgets): chat["review"] (core.chat ChatItems; the per-turn context info of a reply
in meta["info"]), review_review_id, review_thread_id, review_pending, review_notices, review_last_call (the
shared last-call expander). Storage is reached only through core.flows.review_chat.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import streamlit as st

from core import chat as chat_items
from core.chat import ChatItem
from core.flows import review_chat
from core.flows.review_chat import Notice, ReviewRecord, TurnResult
from pages.ui import last_call, state
from pages.ui.render import stream_llm_markdown

FLOW = "review"
DEMO_QUESTION = "§11 の論述について、講評ではどう評価されていますか？"
QUERY_KEY = "review_thread"


def repo() -> Any:
    """The review repository on the app's engine (through core; pages never import the store)."""
    return review_chat.repository(state.engine())


def sample_id() -> int:
    return review_chat.sample_review_id(repo())


def chat() -> list[ChatItem]:
    return st.session_state.chat[FLOW]


def notify(*notices: Notice) -> None:
    st.session_state.setdefault("review_notices", []).extend(notices)


def reviews() -> list[dict[str, Any]]:
    return review_chat.list_reviews(repo())


def threads(review_id: int) -> list[dict[str, Any]]:
    return review_chat.list_threads(repo(), review_id)


def new_thread(review_id: int) -> None:
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = review_id, None
    ss.chat[FLOW] = []
    ss["review_pending"] = False
    last_call.clear(FLOW)
    st.query_params.pop(QUERY_KEY, None)


def open_thread(thread_id: int) -> bool:
    """Load a stored thread (resume after a reload). False when it does not exist."""
    opened = review_chat.open_thread(repo(), thread_id)
    if opened is None:
        return False
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = opened.review_id, thread_id
    ss.chat[FLOW] = opened.items
    ss["review_pending"] = False
    last_call.clear(FLOW)
    st.query_params[QUERY_KEY] = str(thread_id)
    return True


def init() -> None:
    """First visit in this session: resume the thread in the URL, else a new thread on the sample."""
    ss = st.session_state
    ss.setdefault("review_notices", [])
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
    chat().append(chat_items.user_item(text))
    st.session_state["review_pending"] = True


def on_send() -> None:
    text = (st.session_state.get("review_draft") or "").strip()
    if not text:
        notify(("warning", "質問を入力してください。"))
        return
    if st.session_state.get("review_pending"):
        # A click while a reply was still streaming: that reply is restarted; the new text stays in the box.
        notify(
            (
                "warning",
                "前の質問への回答を作成中です。回答が表示されてから、もう一度送信してください（入力は残してあります）。",
            )
        )
        return
    submit_text(text)
    st.session_state["review_draft"] = ""


def on_retry() -> None:
    """Resend the last failed question (nothing the user typed is lost)."""
    failed = chat_items.pop_failed_turn(chat())
    if failed is not None:
        submit_text(failed["content"])


def on_pick_review() -> None:
    new_thread(st.session_state["review_picker"])


def on_pick_thread() -> None:
    picked = st.session_state["review_thread_picker"]
    if picked == 0 or not open_thread(picked):
        new_thread(st.session_state["review_review_id"])


def current_review() -> ReviewRecord | None:
    return review_chat.get_review(repo(), st.session_state["review_review_id"])


def import_review(raw: bytes) -> list[str]:
    """Store an uploaded review and switch to it; returns the problems when it cannot be used."""
    result = review_chat.import_review(repo(), raw)
    if result.review_id is None:
        return result.errors
    new_thread(result.review_id)
    if result.notice:
        notify(result.notice)
    return []


def stream_turn(review: ReviewRecord, text: str) -> TurnResult:
    """One core call before the stream, the stream drawn as it arrives, one core call after it."""
    ss = st.session_state
    client = state.client()
    with last_call.capture(FLOW) as sink:
        try:
            store = repo()
            plan = review_chat.prepare_turn(
                store, review, ss["review_thread_id"], chat_items.history(chat()), text
            )
            with st.chat_message("assistant"):
                stream = review_chat.stream_reply(client, plan, sink=sink)
                stream_llm_markdown(stream)
            due = plan.summary_due if stream.result is not None and stream.result.ok else None
            with st.spinner(review_chat.summarizing(due)) if due else nullcontext():
                return review_chat.finish_turn(store, client, plan, stream.result, sink=sink)
        except Exception:  # a bug or a broken client: a Japanese message and a retry, never a traceback
            return review_chat.unexpected_failure(text, thread_id=ss["review_thread_id"])


def run_pending(review: ReviewRecord) -> None:
    """Answer the pending question, put the turn's items in place of it, keep the thread id, then rerun."""
    ss = st.session_state
    items = chat()
    index = next(i for i in range(len(items) - 1, -1, -1) if items[i]["status"] == "pending")
    outcome = stream_turn(review, items[index]["content"])
    ss["review_pending"] = False
    items[index:] = outcome.items
    if outcome.thread_id is not None and outcome.thread_id != ss["review_thread_id"]:
        ss["review_thread_id"] = outcome.thread_id
        st.query_params[QUERY_KEY] = str(outcome.thread_id)
    notify(*outcome.notices)
    st.rerun()
